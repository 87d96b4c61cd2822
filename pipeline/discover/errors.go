package discover

import "errors"

// Sentinel errors of package discover.
var (
	// ErrBadPattern reports a path given that does not exist and is not a
	// valid pattern (an unclosed '[' or '{', a trailing '\'). The caller
	// must correct the path; nothing is walked for it.
	ErrBadPattern = errors.New("discover: syntax error in pattern")
)
