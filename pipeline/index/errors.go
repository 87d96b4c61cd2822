package index

import (
	"errors"
	"fmt"
)

// ErrInvalidConfig reports a configuration field with an invalid value.
// It is always wrapped in a *[ConfigError] naming the field; the caller
// must fix the configuration, retrying cannot help.
var ErrInvalidConfig = errors.New("index: invalid configuration")

// ConfigError names the configuration field that failed validation.
type ConfigError struct {
	Field string // configuration field, as named in flags and docs
	Value any    // the rejected value
	Err   error  // ErrInvalidConfig, possibly wrapped with a reason
}

// Error formats the error as "index: invalid configuration: field=value".
func (e *ConfigError) Error() string { return fmt.Sprintf("%v: %s=%v", e.Err, e.Field, e.Value) }

// Unwrap returns the underlying error, which wraps [ErrInvalidConfig].
func (e *ConfigError) Unwrap() error { return e.Err }
