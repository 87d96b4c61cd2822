package ccusage

import (
	"context"
	"errors"
	"os"
	"time"
)

// lockPoll is how often lockFile retries a busy lock.
const lockPoll = 50 * time.Millisecond

// lockFile takes an exclusive advisory lock on path, creating the file if
// needed, and returns the function that releases it. It waits while
// another process or goroutine holds the lock, until ctx ends. The lock
// goes with the open file, so a crashed holder never leaves it stale.
func lockFile(ctx context.Context, path string) (unlock func() error, err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	t := time.NewTicker(lockPoll)
	defer t.Stop()
	for {
		err := tryLock(f)
		if err == nil {
			return f.Close, nil
		}
		if !errors.Is(err, errLockBusy) {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, context.Cause(ctx)
		case <-t.C:
		}
	}
}
