package redact

import (
	"errors"
	"fmt"
)

// Sentinel errors of the redact package. Match them with [errors.Is].
var (
	// ErrUnknownMode is returned by [ParseMode] for a name that is not a
	// [Mode]. The caller must fix its configuration (the --content flag);
	// retrying cannot help.
	ErrUnknownMode = errors.New("redact: unknown content mode")

	// ErrInvalidConfig reports a configuration field with an invalid value.
	// It is always wrapped in a *[ConfigError] naming the field; the caller
	// must fix the configuration, retrying cannot help.
	ErrInvalidConfig = errors.New("redact: invalid configuration")
)

// ConfigError names the configuration field that failed validation.
type ConfigError struct {
	Field string // configuration field, as named in flags and docs
	Value any    // the rejected value
	Err   error  // ErrInvalidConfig, possibly wrapped with a reason
}

// Error formats the error as "redact: invalid configuration: field=value: reason".
func (e *ConfigError) Error() string {
	return fmt.Sprintf("%v: %s=%v", e.Err, e.Field, e.Value)
}

// Unwrap returns the underlying error, which wraps [ErrInvalidConfig].
func (e *ConfigError) Unwrap() error { return e.Err }

// invalid builds a *ConfigError for field with a reason.
func invalid(field string, value any, reason string) error {
	return &ConfigError{Field: field, Value: value, Err: fmt.Errorf("%w (%s)", ErrInvalidConfig, reason)}
}
