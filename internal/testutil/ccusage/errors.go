package ccusage

import "errors"

// Errors returned by the error-returning functions of this package. The
// [testing.TB] helpers turn them into test failures with the same text.
var (
	// ErrUnknownKind reports a [Kind] that is none of the defined ones.
	ErrUnknownKind = errors.New("ccusage: unknown kind")
	// ErrNPMMissing reports that npm is not on PATH, so ccusage cannot be
	// installed. Install Node.js 20+ and npm (Debian: apt-get install npm).
	ErrNPMMissing = errors.New("ccusage: npm not found in PATH")
	// ErrNoNativeBinary reports that the npm install left no native binary
	// for this platform (ccusage ships linux, darwin and win32 on x64 and
	// arm64 only, as optional dependencies).
	ErrNoNativeBinary = errors.New("ccusage: native binary not installed")
	// ErrVersion reports that the installed binary is not [Version]. Remove
	// the cache directory to reinstall.
	ErrVersion = errors.New("ccusage: unexpected version")
	// ErrUnsupportedPlatform reports a platform where the install lock or
	// the native binary is not available.
	ErrUnsupportedPlatform = errors.New("ccusage: unsupported platform")
	// ErrBadOutput reports output of ccusage that is not the JSON report
	// this package decodes.
	ErrBadOutput = errors.New("ccusage: unexpected output")
	// ErrLayout reports transcript files that cannot be laid out: a path
	// that does not fit the kind's shape, or two files with one destination.
	ErrLayout = errors.New("ccusage: cannot lay out files")

	// errLockBusy is returned by tryLock when another holder has the lock.
	errLockBusy = errors.New("ccusage: lock busy")
)
