package redact

import "errors"

var (
	// ErrUnknownMode is returned by [ParseMode] for a name that is not a
	// [Mode], and by [New] for a Config whose Mode is out of range. The
	// caller must fix its configuration; retrying cannot help.
	ErrUnknownMode = errors.New("redact: unknown content mode")
)
