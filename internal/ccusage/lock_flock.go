//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package ccusage

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes an exclusive flock on f without waiting; it returns
// errLockBusy when another open file holds it. flock(1) in
// scripts/ccusage.sh takes the same lock.
func tryLock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLockBusy
	}
	return err
}
