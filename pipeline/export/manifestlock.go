package export

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Lock files in the output root, beside the Writer's LOCK (internal/dirlock).
// Their leading underscore keeps them out of '<out>/**/*.parquet'.
const (
	// ManifestLockName is the file locked around every read-modify-write
	// of the manifest: a Writer's commit (rename and record), the
	// clean-up at [NewWriter], and the switch of a [Compact] merge. It is
	// held for milliseconds: the time to rename a file, read the manifest
	// and write it again. Under it no process is between renaming a file
	// into place and recording it, so a Parquet file the manifest does not
	// list is a leftover of a crash.
	ManifestLockName = "_manifest.lock"

	// CompactLockName is the file a [Compact] holds for its whole run:
	// one compaction at a time per output root, and the compaction's
	// temporary files are removed only by the holder or while nobody
	// holds it.
	CompactLockName = "_compact.lock"
)

// fileLock is a held OS advisory lock (flock on Unix) on a file of the
// output root. The kernel releases it when the process dies, even by
// SIGKILL, so a crash never leaves a stale lock. Each lock opens the file
// anew, so two goroutines of one process exclude each other too.
type fileLock struct {
	f *os.File
}

// Polling intervals of lockFile: a lock is retried after 1 ms, then
// twice as long each time, up to lockPollMax.
const (
	lockPollMin = time.Millisecond
	lockPollMax = 50 * time.Millisecond
)

// lockFile takes the lock on dir/name, creating the file, and waits for
// it while another process or goroutine holds it, until ctx is done.
func lockFile(ctx context.Context, dir, name string) (*fileLock, error) {
	wait := lockPollMin
	for {
		l, ok, err := tryLockFile(dir, name)
		if err != nil || ok {
			return l, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("wait for %s: %w", name, context.Cause(ctx))
		case <-t.C:
		}
		wait = min(2*wait, lockPollMax)
	}
}

// tryLockFile takes the lock on dir/name if it is free: ok is false, with
// a nil error, when another holds it.
func tryLockFile(dir, name string) (l *fileLock, ok bool, err error) {
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("open lock file: %w", err)
	}
	ok, err = tryFlock(f)
	if err != nil || !ok {
		f.Close()
		if err != nil {
			return nil, false, fmt.Errorf("lock %s: %w", path, err)
		}
		return nil, false, nil
	}
	return &fileLock{f: f}, true, nil
}

// unlock releases the lock. The file stays: removing it would let a
// process that opened it before the removal lock an unlinked file while
// another locks a new file at the same path. It is safe on a nil lock.
func (l *fileLock) unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	err := funlock(f)
	if e := f.Close(); err == nil {
		err = e
	}
	return err
}

// lockManifest takes the manifest lock of the output root dir.
func lockManifest(ctx context.Context, dir string) (*fileLock, error) {
	return lockFile(ctx, dir, ManifestLockName)
}
