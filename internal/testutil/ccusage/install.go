package ccusage

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Version is the ccusage release this package installs and expects. It is
// pinned: 20.0.26 has no linux-x64 native package in the registry used
// here, and numbers from another release are not comparable.
const Version = "20.0.24"

// DirEnv is the environment variable that overrides [CacheDir].
const DirEnv = "SESSIONPIPE_CCUSAGE_DIR"

// Install time limits.
const (
	// InstallTimeout bounds one npm install.
	InstallTimeout = 5 * time.Minute
	// LockTimeout bounds the wait for another process's install.
	LockTimeout = 10 * time.Minute
)

// CacheDir returns the directory ccusage is installed into: $DirEnv when
// set, else $XDG_CACHE_HOME/sessionpipe/ccusage-<Version>, else
// $HOME/.cache/sessionpipe/ccusage-<Version>. It fails only when none of
// these variables is set.
func CacheDir() (string, error) {
	return cacheDir(os.Getenv)
}

func cacheDir(getenv func(string) string) (string, error) {
	if dir := getenv(DirEnv); dir != "" {
		return dir, nil
	}
	sub := filepath.Join("sessionpipe", "ccusage-"+Version)
	if xdg := getenv("XDG_CACHE_HOME"); xdg != "" {
		return filepath.Join(xdg, sub), nil
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".cache", sub), nil
	}
	return "", fmt.Errorf("ccusage: cache directory: none of %s, XDG_CACHE_HOME, HOME is set", DirEnv)
}

// Binary returns the path of the ccusage [Version] native binary, installing
// it into [CacheDir] first if needed (see [Install]). Any failure, such as
// npm missing from PATH, fails tb at once with a message saying what to do;
// it never skips.
func Binary(tb testing.TB) string {
	tb.Helper()
	dir, err := CacheDir()
	if err != nil {
		tb.Fatal(err)
	}
	start := time.Now()
	bin, ran, err := install(tb.Context(), dir)
	if err != nil {
		tb.Fatalf("%v\n(install dir %s; override with %s)", err, dir, DirEnv)
	}
	if ran {
		tb.Logf("ccusage: installed ccusage@%s into %s in %v", Version, dir, time.Since(start).Round(time.Millisecond))
	}
	return bin
}

// Install makes sure ccusage [Version] is installed in dir and returns the
// path of its native binary. It holds an exclusive lock on
// dir/.install.lock (waiting up to [LockTimeout] for another process), and
// runs npm only when the binary is missing or reports another version. It
// returns [ErrNPMMissing] when npm is not on PATH, [ErrNoNativeBinary] when
// the install has no binary for this platform and [ErrVersion] when the
// binary is not [Version]; the caller may retry after fixing the cause.
func Install(ctx context.Context, dir string) (string, error) {
	bin, _, err := install(ctx, dir)
	return bin, err
}

// install is Install that also reports whether npm ran.
func install(ctx context.Context, dir string) (bin string, ran bool, err error) {
	bin, err = binaryPath(dir)
	if err != nil {
		return "", false, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", false, fmt.Errorf("ccusage: create install dir: %w", err)
	}
	lockCtx, cancel := context.WithTimeout(ctx, LockTimeout)
	defer cancel()
	unlock, err := lockFile(lockCtx, filepath.Join(dir, ".install.lock"))
	if err != nil {
		return "", false, fmt.Errorf("ccusage: lock install dir: %w", err)
	}
	defer func() {
		if e := unlock(); e != nil && err == nil {
			err = fmt.Errorf("ccusage: unlock install dir: %w", e)
		}
	}()

	if checkBinary(ctx, bin) == nil {
		return bin, false, nil
	}
	if err := npmInstall(ctx, dir); err != nil {
		return "", true, err
	}
	if err := checkBinary(ctx, bin); err != nil {
		return "", true, err
	}
	return bin, true, nil
}

// npmInstall runs the pinned npm install into dir.
func npmInstall(ctx context.Context, dir string) error {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("%w: install Node.js 20+ and npm (Debian: apt-get install nodejs npm), then rerun", ErrNPMMissing)
	}
	ctx, cancel := context.WithTimeout(ctx, InstallTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "ccusage@"+Version)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("ccusage: npm install ccusage@%s: %w (after %v)\n%s", Version, context.Cause(ctx), InstallTimeout, out)
		}
		return fmt.Errorf("ccusage: npm install ccusage@%s: %w\n%s", Version, err, out)
	}
	return nil
}

// checkBinary makes bin executable if it lacks the run bit and checks that
// it reports Version.
func checkBinary(ctx context.Context, bin string) error {
	fi, err := os.Stat(bin)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNoNativeBinary, err)
	}
	if fi.Mode().Perm()&0o111 == 0 {
		if err := os.Chmod(bin, fi.Mode().Perm()|0o755); err != nil {
			return fmt.Errorf("ccusage: set run bit: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = []string{"PATH=/usr/bin:/bin", "NO_COLOR=1"}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("ccusage: run %s --version: %w\n%s", bin, err, stderr.Bytes())
	}
	if got, want := strings.TrimSpace(stdout.String()), "ccusage "+Version; got != want {
		return fmt.Errorf("%w: %s --version = %q, want %q", ErrVersion, bin, got, want)
	}
	return nil
}

// binaryPath returns where npm puts the native binary for this platform.
func binaryPath(dir string) (string, error) {
	name, exe, err := nativePackage(runtime.GOOS, runtime.GOARCH)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "node_modules", "@ccusage", name, "bin", exe), nil
}

// nativePackage maps a Go platform onto ccusage's native npm package name
// and binary file name.
func nativePackage(goos, goarch string) (pkg, exe string, err error) {
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[goarch]
	osName := map[string]string{"linux": "linux", "darwin": "darwin", "windows": "win32"}[goos]
	if arch == "" || osName == "" {
		return "", "", fmt.Errorf("%w: no ccusage native package for %s/%s", ErrUnsupportedPlatform, goos, goarch)
	}
	exe = "ccusage"
	if goos == "windows" {
		exe = "ccusage.exe"
	}
	return "ccusage-" + osName + "-" + arch, exe, nil
}
