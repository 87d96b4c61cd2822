package commit

import (
	"errors"
	"fmt"
)

// Sentinel errors of the export packages, which re-export them. Match them
// with [errors.Is].
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

	// ErrNotDurable reports a file (a manifest) renamed into place whose
	// directory could not then be synced: the new version is visible, and
	// may or may not survive a crash. A [Writer] whose manifest change
	// ends so stops: every later call returns the error, nothing it held
	// is acknowledged, and a new Writer (a restarted process) decides at
	// open from what the disk holds. Retrying in place could list a file
	// twice, or lose one.
	ErrNotDurable = errors.New("export: change not known to be durable")

	// ErrInvalidSeq is returned by [Writer.Write] for sequence 0, which no
	// stream message has; the entry is not taken. It is a bug in the
	// caller.
	ErrInvalidSeq = errors.New("export: stream sequence 0")

	// ErrConflict reports that another writer committed, to the same
	// bucket prefix, a file or segment whose stream range overlaps one
	// this writer was committing (two exporters on one prefix). The
	// conditional write of the manifest let only one of them win; the
	// loser stops like after [ErrNotDurable] and a new writer (the
	// [Exporter] opens one at once) resumes from the manifest as it now
	// is, skipping what the winner committed.
	ErrConflict = errors.New("export: another writer committed to this prefix")
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
