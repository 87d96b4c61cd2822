package export

import "github.com/sessionpipe/sessionpipe/pipeline/export/internal/commit"

// FailSyncAfterRename makes the fsync of the directory after a rename of a
// file named name fail once with err, as an I/O error would; it returns
// a function that restores the real fsync.
func FailSyncAfterRename(name string, err error) (restore func()) {
	real := commit.AfterRename
	failed := false
	commit.AfterRename = func(dir, n string) error {
		if n == name && !failed {
			failed = true
			return err
		}
		return real(dir, n)
	}
	return func() { commit.AfterRename = real }
}
