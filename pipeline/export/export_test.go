package export

// SetHook sets the function called at each step of a commit ("written",
// "renamed", "recorded"), for crash tests.
func SetHook(w *Writer, f func(step string)) { w.hook = f }
