package export

// SetHook sets the function called at each step of a commit ("written",
// "renamed", "recorded"), for crash tests.
func SetHook(w *Writer, f func(step string)) { w.hook = f }

// FailSyncAfterRename makes the fsync of the directory after a rename of a
// file named name fail once with err, as an I/O error would; it returns
// a function that restores the real fsync.
func FailSyncAfterRename(name string, err error) (restore func()) {
	real := afterRename
	failed := false
	afterRename = func(dir, n string) error {
		if n == name && !failed {
			failed = true
			return err
		}
		return real(dir, n)
	}
	return func() { afterRename = real }
}
