package commit

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/internal/fsutil"
)

// TmpPrefix and TmpSuffix mark a file being written: hidden, and not
// matched by '*.parquet'. Whatever carries them at start is a crash's
// leftover and is removed.
const (
	TmpPrefix = "."
	TmpSuffix = ".tmp"
)

// TmpName returns the temporary name under which name is written.
func TmpName(name string) string { return TmpPrefix + name + TmpSuffix }

// IsTmp reports whether the base name is a temporary file of ours.
func IsTmp(base string) bool {
	return strings.HasPrefix(base, TmpPrefix) && strings.HasSuffix(base, TmpSuffix)
}

// WriteFileAtomic writes data, its slices one after the other, to
// dir/name through a temporary file in dir: write, fsync, rename, fsync
// dir. An error after the rename (the directory's fsync) wraps
// [ErrNotDurable]: the new content is in place.
func WriteFileAtomic(dir, name string, data ...[]byte) error {
	if err := fsutil.Replace(dir, name, TmpName(name), data...); err != nil {
		return err
	}
	if err := AfterRename(dir, name); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrNotDurable, filepath.Join(dir, name), err)
	}
	return nil
}

// AfterRename syncs dir after name was renamed into it; tests replace it
// to make that fsync fail.
var AfterRename = func(dir, name string) error { return SyncDir(dir) }

// SyncDir fsyncs a directory, making the names created, renamed or
// removed in it durable.
func SyncDir(dir string) error { return fsutil.SyncDir(dir) }
