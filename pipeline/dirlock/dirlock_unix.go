//go:build unix

package dirlock

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Acquire creates dir if needed and locks it for this process; what says
// what the directory is used for, for the error another process gets.
// It returns a *[HeldError] wrapping [ErrHeld] when the directory is
// already locked, and other errors when the directory or its lock file
// cannot be created (a read-only directory is such an error: without a
// lock the directory is not safe to write).
func Acquire(dir, what string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	path := lockPath(dir)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := lockWait(f, unix.LOCK_EX); err != nil {
		data, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			h := parseHolder(data)
			return nil, &HeldError{Dir: dir, What: what, PID: h.pid, Command: h.command, Since: h.since}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	h := holder{pid: os.Getpid(), command: command(), since: time.Now()}
	if err := f.Truncate(0); err == nil {
		// The holder's details are for the error of a second process
		// only: failing to write them does not weaken the lock.
		_, _ = f.WriteAt(h.encode(), 0)
	}
	return &Lock{dir: dir, release: func() error {
		// The file stays: removing it would let a process that opened
		// it before the removal lock an unlinked file while a third one
		// locks a new file at the same path.
		if err := flock(f, unix.LOCK_UN); err != nil {
			f.Close()
			return fmt.Errorf("unlock %s: %w", path, err)
		}
		return f.Close()
	}}, nil
}

// contendedWait is how long Acquire retries a lock held by someone else
// before it reports the holder: long enough for a [Holder] probe's
// shared lock, which lasts microseconds, to go away, and short enough
// not to be noticed when a real holder is there.
const contendedWait = 100 * time.Millisecond

// lockWait takes the lock how without blocking, retrying for up to
// contendedWait while it is held elsewhere.
func lockWait(f *os.File, how int) error {
	deadline := time.Now().Add(contendedWait)
	for {
		err := flock(f, how|unix.LOCK_NB)
		if !errors.Is(err, unix.EWOULDBLOCK) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Holder reports who holds dir's lock, without taking it for longer than
// a probe: nil when nobody does (or dir has no lock file). It does not
// create or write anything, so it is safe to call while a process may be
// starting; such a process waits out the probe (see Acquire).
func Holder(dir, what string) (*HeldError, error) {
	path := lockPath(dir)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	defer f.Close()
	err = flock(f, unix.LOCK_SH|unix.LOCK_NB)
	if err == nil {
		return nil, flock(f, unix.LOCK_UN)
	}
	if !errors.Is(err, unix.EWOULDBLOCK) {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	data, _ := os.ReadFile(path)
	h := parseHolder(data)
	return &HeldError{Dir: dir, What: what, PID: h.pid, Command: h.command, Since: h.since}, nil
}

// flock retries on EINTR.
func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// TryLock takes an exclusive advisory lock (flock) on f without waiting:
// false, with a nil error, when another open file holds it. The kernel
// releases it when f is closed or the process dies. It is the one flock
// of the project: directory locks, the exporter's manifest and compaction
// locks, the ccusage harness's install lock.
func TryLock(f *os.File) (bool, error) {
	err := flock(f, unix.LOCK_EX|unix.LOCK_NB)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EWOULDBLOCK):
		return false, nil
	}
	return false, err
}

// Unlock releases the lock [TryLock] took on f.
func Unlock(f *os.File) error { return flock(f, unix.LOCK_UN) }
