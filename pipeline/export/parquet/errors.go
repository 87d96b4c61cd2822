package parquet

import (
	"errors"
	"fmt"

	"github.com/sessionpipe/sessionpipe/pipeline/export/internal/commit"
)

// Sentinel errors of the export package. Match them with [errors.Is].
var (
	// ErrInvalidConfig reports a configuration field with an invalid value.
	// It is always wrapped in a *[ConfigError] naming the field; the caller
	// must fix the configuration, retrying cannot help.
	ErrInvalidConfig = commit.ErrInvalidConfig

	// ErrClosed is returned by the methods of a [Writer] after
	// [Writer.Close].
	ErrClosed = commit.ErrClosed

	// ErrManifest reports a manifest that cannot be read: the output
	// directory's record of committed files is damaged. The writer does
	// not start, so that it never removes files a damaged manifest fails
	// to list; an operator must repair or remove the manifest.
	ErrManifest = commit.ErrManifest

	// ErrNotDurable reports a file (a manifest) renamed into place whose
	// directory could not then be synced: the new version is visible, and
	// may or may not survive a crash. A [Writer] whose manifest change
	// ends so stops: every later call returns the error, nothing it held
	// is acknowledged, and a new Writer (a restarted process) decides at
	// open from what the disk holds. Retrying in place could list a file
	// twice, or lose one.
	ErrNotDurable = commit.ErrNotDurable

	// ErrInvalidSeq is returned by [Writer.Write] for sequence 0, which no
	// stream message has; the entry is not taken. It is a bug in the
	// caller.
	ErrInvalidSeq = commit.ErrInvalidSeq

	// ErrInvalidUTF8 is wrapped by the *[EntryError] reported for an entry
	// with a string that is not valid UTF-8. Parquet strings must be UTF-8
	// (DuckDB refuses to read a column chunk holding one that is not), so
	// each invalid sequence was replaced by U+FFFD and the entry written.
	ErrInvalidUTF8 = errors.New("export: invalid UTF-8 replaced by U+FFFD")

	// ErrConflict reports that another writer committed, to the same
	// bucket prefix, a file or segment whose stream range overlaps one
	// this writer was committing (two exporters on one prefix). The
	// conditional write of the manifest let only one of them win; the
	// loser stops like after [ErrNotDurable] and a new writer (the
	// [Exporter] opens one at once) resumes from the manifest as it now
	// is, skipping what the winner committed.
	ErrConflict = commit.ErrConflict
)

// EntryError reports an entry that was written altered, located by its
// source position and stream sequence.
type EntryError struct {
	Path   string
	Line   int64
	Offset int64
	Seq    uint64 // stream sequence
	Key    string // schema.Entry.Key(), altered too if it held invalid UTF-8
	Err    error  // ErrInvalidUTF8
}

// Error formats the error as "path:line: offset N: seq S: what".
func (e *EntryError) Error() string {
	return fmt.Sprintf("%s:%d: offset %d: seq %d: %v", e.Path, e.Line, e.Offset, e.Seq, e.Err)
}

// Unwrap returns the reason.
func (e *EntryError) Unwrap() error { return e.Err }

// ConfigError reports an invalid [Config] field.
type ConfigError = commit.ConfigError
