//go:build !unix

package dirlock

import (
	"fmt"
	"os"
)

// Acquire creates dir if needed. On this platform there is no advisory
// lock: it returns a Lock that guards nothing (sessionpipe is supported on
// Linux and macOS).
func Acquire(dir, what string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	return &Lock{dir: dir}, nil
}

// Holder reports nobody: there is no lock on this platform.
func Holder(dir, what string) (*HeldError, error) { return nil, nil }

// TryLock takes no lock on this platform (see [Acquire]) and reports
// success.
func TryLock(*os.File) (bool, error) { return true, nil }

// Unlock does nothing on this platform.
func Unlock(*os.File) error { return nil }
