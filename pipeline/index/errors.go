package index

import (
	"errors"
	"fmt"
	"strings"
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

// ErrSessionNotFound is returned by [Indexer.Session] for a session it
// does not know.
var ErrSessionNotFound = errors.New("index: session not found")

// AmbiguousError is returned for a session id that names several
// sessions (of several formats or hosts): the caller must say which.
type AmbiguousError struct {
	SessionID  string
	Candidates []SessionRef // sorted by format, then host
}

// Error names the id and lists the candidates' formats and hosts.
func (e *AmbiguousError) Error() string {
	names := make([]string, len(e.Candidates))
	for i, c := range e.Candidates {
		names[i] = fmt.Sprintf("format=%s host=%s", c.Format, c.Host)
	}
	return fmt.Sprintf("session %q is ambiguous: %d sessions have this id (%s); give format and host", e.SessionID, len(e.Candidates), strings.Join(names, "; "))
}

// ErrLayout reports a state of another [StoreLayout]; see [LayoutError].
var ErrLayout = errors.New("index: state of another layout")

// LayoutError is a state whose layout is not [StoreLayout]: it must be
// rebuilt from the stream (the indexer does so at start).
type LayoutError struct {
	Have, Want int
}

// Error names both layouts.
func (e *LayoutError) Error() string {
	return fmt.Sprintf("index: the state has layout %d, this version reads layout %d: it must be rebuilt from the stream", e.Have, e.Want)
}

// Unwrap returns ErrLayout.
func (e *LayoutError) Unwrap() error { return ErrLayout }
