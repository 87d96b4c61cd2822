//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package ccusage

import (
	"fmt"
	"os"
	"runtime"
)

// tryLock reports ErrUnsupportedPlatform: the install lock is a flock, and
// ccusage's native binaries exist for linux and darwin (and Windows, which
// this harness does not drive).
func tryLock(*os.File) error {
	return fmt.Errorf("%w: no flock on %s", ErrUnsupportedPlatform, runtime.GOOS)
}
