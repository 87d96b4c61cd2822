// Package fsutil replaces a file's content so that a crash leaves either
// the old content or the new, never a mix: the one atomic write of the
// tailer's checkpoints and the exporter's manifests, positions and
// archive indexes. It does not lock; the callers own their directories.
package fsutil

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Replace writes data, its slices one after the other, to dir/name
// through a temporary file in dir: create, write, fsync, close, rename
// over name. tmp names the temporary file: a
// fixed name (created or truncated), or an os.CreateTemp pattern when it
// holds '*'. On an error the temporary file is removed and dir/name is
// as it was. The rename is durable only once dir is synced: call
// [SyncDir] after it.
func Replace(dir, name, tmp string, data ...[]byte) error {
	var (
		f   *os.File
		err error
	)
	if strings.Contains(tmp, "*") {
		f, err = os.CreateTemp(dir, tmp)
	} else {
		f, err = os.OpenFile(filepath.Join(dir, tmp), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	}
	if err != nil {
		return fmt.Errorf("create temporary file for %s: %w", filepath.Join(dir, name), err)
	}
	path := f.Name()
	for _, b := range data {
		if _, err = f.Write(b); err != nil {
			break
		}
	}
	if err == nil {
		err = f.Sync()
	}
	if e := f.Close(); err == nil {
		err = e
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(path, filepath.Join(dir, name)); err != nil {
		os.Remove(path)
		return fmt.Errorf("rename %s: %w", path, err)
	}
	return nil
}

// SyncDir fsyncs a directory, making the names created, renamed or
// removed in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory %s: %w", dir, err)
	}
	err = d.Sync()
	if e := d.Close(); err == nil {
		err = e
	}
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
