package fluux

// IsTranscriptPath reports whether path names a Fluux Agent transcript
// (see jidDir), for the tests of the path rule.
func IsTranscriptPath(path string) bool {
	return jidDir(path) != ""
}
