package formats

import (
	"errors"
	"fmt"

	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

// Sentinel errors of package formats.
var (
	// ErrUnknownFormat reports a file whose first lines match no supported
	// transcript format. Callers skip such a file (and remember it), they
	// do not fail.
	ErrUnknownFormat = errors.New("formats: not a known transcript format")

	// ErrNotRegular reports a path that is not a regular file (a FIFO, a
	// device, a socket, or a link to one): it is never opened, since
	// opening a FIFO blocks and a device may never end.
	ErrNotRegular = errors.New("formats: not a regular file")

	// ErrInvalidConfig reports a configuration field with an invalid
	// value. It is always wrapped in a *[ConfigError] naming the field;
	// the caller must fix the configuration, retrying cannot help.
	ErrInvalidConfig = errors.New("formats: invalid configuration")

	// ErrNoMatch reports a glob given as a path that matches nothing.
	ErrNoMatch = errors.New("formats: no file matches")
)

// LineTooLongError reports a line over the line reader's limit, skipped
// whole. It wraps the reader's *jsonl.LineTooLongError (its Head holds the
// line's first bytes) and states the limit, which a [Decoder] knows from
// [DecoderConfig.MaxLineBytes].
type LineTooLongError struct {
	Length int64 // the line's length in bytes, without "\n"
	Limit  int   // the limit, or 0 when not known
	Err    *jsonl.LineTooLongError
}

func (e *LineTooLongError) Error() string {
	if e.Limit > 0 {
		return fmt.Sprintf("line of %d bytes exceeds --max-line-bytes %d", e.Length, e.Limit)
	}
	return fmt.Sprintf("line of %d bytes exceeds the line limit", e.Length)
}

// Unwrap returns the line reader's error.
func (e *LineTooLongError) Unwrap() error { return e.Err }

// ConfigError names the configuration field that failed validation.
type ConfigError struct {
	Field string // configuration field, snake_case
	Value any    // the rejected value
	Err   error  // ErrInvalidConfig (or ErrUnknownFormat for a forced format)
}

// Error formats the error as "formats: invalid configuration: field=value".
func (e *ConfigError) Error() string { return fmt.Sprintf("%v: %s=%v", e.Err, e.Field, e.Value) }

// Unwrap returns the underlying error.
func (e *ConfigError) Unwrap() error { return e.Err }
