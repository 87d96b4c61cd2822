package tail

import (
	"errors"
	"fmt"
)

// Sentinel errors of the tail package.
var (
	// ErrCheckpoint reports a checkpoint file that cannot be used. The
	// caller must stop: starting over would publish every file again
	// (the stream would drop the duplicates only within its window).
	ErrCheckpoint = errors.New("tail: bad checkpoint file")

	// ErrInvalidConfig reports a configuration field with an invalid
	// value. It is always wrapped in a *[ConfigError] naming the field;
	// the caller must fix the configuration, retrying cannot help.
	ErrInvalidConfig = errors.New("tail: invalid configuration")

	// errRewritten reports a file whose first bytes changed while it was
	// read: the reader stops before the bytes that may be new, and the
	// file is read again from its start.
	errRewritten = errors.New("tail: file rewritten while read")
)

// CheckpointError reports a checkpoint file that cannot be used, and
// what to do about it. It wraps [ErrCheckpoint].
type CheckpointError struct {
	Path string // the checkpoint file
	Err  error  // what is wrong with it
}

func (e *CheckpointError) Error() string {
	return fmt.Sprintf("tail: bad checkpoint file %s: %v; restore it from a backup, or move it away to read every "+
		"followed file again from its start (the stream drops what it already holds within its duplicate window; "+
		"older entries are stored again)", e.Path, e.Err)
}

// Unwrap returns [ErrCheckpoint] and the underlying error.
func (e *CheckpointError) Unwrap() []error { return []error{ErrCheckpoint, e.Err} }

// ConfigError names the configuration field that failed validation.
type ConfigError struct {
	Field string // configuration field, snake_case
	Value any    // the rejected value
	Err   error  // ErrInvalidConfig, possibly wrapped with a reason
}

// Error formats the error as "tail: invalid configuration: field=value".
func (e *ConfigError) Error() string { return fmt.Sprintf("%v: %s=%v", e.Err, e.Field, e.Value) }

// Unwrap returns ErrInvalidConfig (or the underlying error).
func (e *ConfigError) Unwrap() error { return e.Err }
