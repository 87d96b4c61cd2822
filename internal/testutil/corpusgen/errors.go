package corpusgen

import (
	"errors"
	"fmt"
)

// Sentinel errors of the corpusgen package.
var (
	// ErrInvalidConfig reports a configuration value out of range. It is
	// wrapped in a *ConfigError naming the field; fix the configuration,
	// retrying does not help.
	ErrInvalidConfig = errors.New("corpusgen: invalid configuration")
)

// ConfigError names the configuration field that failed validation.
type ConfigError struct {
	Field string // the field's name, as the command's flag spells it
	Value any    // the rejected value
	Err   error  // ErrInvalidConfig
}

// Error returns "corpusgen: invalid configuration: field=value".
func (e *ConfigError) Error() string {
	return fmt.Sprintf("%v: %s=%v", e.Err, e.Field, e.Value)
}

// Unwrap returns the sentinel.
func (e *ConfigError) Unwrap() error { return e.Err }
