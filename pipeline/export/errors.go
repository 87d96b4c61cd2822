package export

import (
	"errors"
	"fmt"
)

// Sentinel errors of the export package. Match them with [errors.Is].
var (
	// ErrInvalidConfig reports a configuration field with an invalid value.
	// It is always wrapped in a *[ConfigError] naming the field; the caller
	// must fix the configuration, retrying cannot help.
	ErrInvalidConfig = errors.New("export: invalid configuration")

	// ErrClosed is returned by the methods of a [Writer] after
	// [Writer.Close].
	ErrClosed = errors.New("export: writer closed")

	// ErrManifest reports a manifest that cannot be read: the output
	// directory's record of committed files is damaged. The writer does
	// not start, so that it never removes files a damaged manifest fails
	// to list; an operator must repair or remove the manifest.
	ErrManifest = errors.New("export: bad manifest")
)

// ConfigError reports an invalid [Config] field.
type ConfigError struct {
	Field string // the field's name in flags and documentation, e.g. "part_bytes"
	Value any
	Err   error // ErrInvalidConfig
	Why   string
}

// Error names the field, its value and what is wrong with it.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("export: invalid %s %v: %s", e.Field, e.Value, e.Why)
}

// Unwrap returns [ErrInvalidConfig].
func (e *ConfigError) Unwrap() error { return e.Err }
