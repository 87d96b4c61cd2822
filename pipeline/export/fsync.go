package export

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/internal/fsutil"
)

// tmpPrefix and tmpSuffix mark a file being written: hidden, and not
// matched by '*.parquet'. Whatever carries them at start is a crash's
// leftover and is removed.
const (
	tmpPrefix = "."
	tmpSuffix = ".tmp"
)

// tmpName returns the temporary name under which name is written.
func tmpName(name string) string { return tmpPrefix + name + tmpSuffix }

// isTmp reports whether the base name is a temporary file of ours.
func isTmp(base string) bool {
	return strings.HasPrefix(base, tmpPrefix) && strings.HasSuffix(base, tmpSuffix)
}

// writeFileAtomic writes data to dir/name through a temporary file in dir:
// write, fsync, rename, fsync dir. An error after the rename (the
// directory's fsync) wraps [ErrNotDurable]: the new content is in place.
func writeFileAtomic(dir, name string, data []byte) error {
	if err := fsutil.Replace(dir, name, tmpName(name), data); err != nil {
		return err
	}
	if err := afterRename(dir, name); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrNotDurable, filepath.Join(dir, name), err)
	}
	return nil
}

// afterRename syncs dir after name was renamed into it; tests replace it
// to make that fsync fail.
var afterRename = func(dir, name string) error { return syncDir(dir) }

// syncDir fsyncs a directory, making the names created, renamed or
// removed in it durable.
func syncDir(dir string) error { return fsutil.SyncDir(dir) }
