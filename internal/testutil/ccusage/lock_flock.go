//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package ccusage

import (
	"os"

	"github.com/sessionpipe/sessionpipe/pipeline/dirlock"
)

// tryLock takes an exclusive flock on f without waiting (dirlock.TryLock);
// it returns errLockBusy when another open file holds it. flock(1) in
// scripts/ccusage.sh takes the same lock.
func tryLock(f *os.File) error {
	ok, err := dirlock.TryLock(f)
	if err == nil && !ok {
		return errLockBusy
	}
	return err
}
