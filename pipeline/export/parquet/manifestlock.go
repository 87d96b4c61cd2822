package parquet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/dirlock"
)

// Lock files in the output root, beside the Writer's LOCK (pipeline/dirlock).
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
// SIGKILL, so a crash never leaves a stale lock; a process that is stopped
// (SIGSTOP, a debugger) or hung (a dead disk) keeps it. Each lock opens
// the file anew, so two goroutines of one process exclude each other too.
// The holder writes its process id, command and the time it took the
// lock into the file (as pipeline/dirlock does), for the error of a
// process that waited too long ([LockHeldError]).
type fileLock struct {
	f *os.File
}

// Polling intervals of lockFile: a lock is retried after 1 ms, then
// twice as long each time, up to lockPollMax.
const (
	lockPollMin = time.Millisecond
	lockPollMax = 50 * time.Millisecond
)

// LockHeldError reports a lock of the output root that another process
// held for longer than the wait allowed (see CompactConfig.LockTimeout),
// with its holder as far as the lock file tells (PID is 0 when it does not
// say). The manifest lock is held for milliseconds: a holder that keeps it
// for seconds is stopped or hung. It wraps dirlock.ErrHeld. Resume or stop
// the holder, then try again.
type LockHeldError struct {
	Path    string        // the lock file
	Waited  time.Duration // how long the lock was waited for
	PID     int           // the holder's process id
	Command string        // the holder's command line, shortened
	Since   time.Time     // when the holder took the lock
}

// Error names the lock, its holder and what to do.
func (e *LockHeldError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s is held", e.Path)
	b.WriteString(dirlock.DescribeHolder(e.PID, e.Command, e.Since))
	fmt.Fprintf(&b, "; gave up after waiting %s: a holder that keeps it this long is stopped or hung: resume it", e.Waited)
	if e.PID > 0 {
		fmt.Fprintf(&b, " (kill -CONT %d)", e.PID)
	}
	b.WriteString(" or stop it, then try again")
	return b.String()
}

// Unwrap returns dirlock.ErrHeld.
func (e *LockHeldError) Unwrap() error { return dirlock.ErrHeld }

// lockFile takes the lock on dir/name, creating the file, and waits for
// it while another process or goroutine holds it, until ctx is done or,
// when timeout is positive, for at most timeout: then it returns a
// *[LockHeldError] naming the holder.
func lockFile(ctx context.Context, dir, name string, timeout time.Duration) (*fileLock, error) {
	wait := lockPollMin
	var expired <-chan time.Time
	if timeout > 0 {
		deadline := time.NewTimer(timeout)
		defer deadline.Stop()
		expired = deadline.C
	}
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
		case <-expired:
			t.Stop()
			if l, ok, err := tryLockFile(dir, name); err != nil || ok {
				return l, err // freed at the last moment
			}
			return nil, heldError(filepath.Join(dir, name), timeout)
		case <-t.C:
		}
		wait = min(2*wait, lockPollMax)
	}
}

// heldError reads who holds the lock file at path.
func heldError(path string, waited time.Duration) *LockHeldError {
	e := &LockHeldError{Path: path, Waited: waited}
	data, _ := os.ReadFile(path)
	e.PID, e.Command, e.Since = dirlock.ParseRecord(data)
	return e
}

// tryLockFile takes the lock on dir/name if it is free: ok is false, with
// a nil error, when another holds it.
func tryLockFile(dir, name string) (l *fileLock, ok bool, err error) {
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("open lock file: %w", err)
	}
	ok, err = dirlock.TryLock(f)
	if err != nil || !ok {
		f.Close()
		if err != nil {
			return nil, false, fmt.Errorf("lock %s: %w", path, err)
		}
		return nil, false, nil
	}
	if err := f.Truncate(0); err == nil {
		// For the error of a process that waits too long only: failing
		// to write it does not weaken the lock.
		_, _ = f.WriteAt(dirlock.Record(), 0)
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
	err := dirlock.Unlock(f)
	if e := f.Close(); err == nil {
		err = e
	}
	return err
}

// lockManifest takes the manifest lock of the output root dir, waiting
// until ctx is done.
func lockManifest(ctx context.Context, dir string) (*fileLock, error) {
	return lockFile(ctx, dir, ManifestLockName, 0)
}
