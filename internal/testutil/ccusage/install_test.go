package ccusage

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCacheDir(t *testing.T) {
	sub := filepath.Join("sessionpipe", "ccusage-"+Version)
	tests := []struct {
		name    string
		env     map[string]string
		want    string
		wantErr bool
	}{
		{"Override", map[string]string{DirEnv: "/o", "XDG_CACHE_HOME": "/x", "HOME": "/h"}, "/o", false},
		{"XDG", map[string]string{"XDG_CACHE_HOME": "/x", "HOME": "/h"}, filepath.Join("/x", sub), false},
		{"Home", map[string]string{"HOME": "/h"}, filepath.Join("/h", ".cache", sub), false},
		{"Nothing", map[string]string{}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := cacheDir(func(k string) string { return tt.env[k] })
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestNativePackage(t *testing.T) {
	tests := []struct {
		goos, goarch, pkg, exe string
		wantErr                bool
	}{
		{"linux", "amd64", "ccusage-linux-x64", "ccusage", false},
		{"linux", "arm64", "ccusage-linux-arm64", "ccusage", false},
		{"darwin", "arm64", "ccusage-darwin-arm64", "ccusage", false},
		{"windows", "amd64", "ccusage-win32-x64", "ccusage.exe", false},
		{"linux", "386", "", "", true},
		{"plan9", "amd64", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.goos+"/"+tt.goarch, func(t *testing.T) {
			pkg, exe, err := nativePackage(tt.goos, tt.goarch)
			if tt.wantErr {
				require.ErrorIs(t, err, ErrUnsupportedPlatform)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, [2]string{tt.pkg, tt.exe}, [2]string{pkg, exe})
		})
	}
}

func TestBinary(t *testing.T) {
	bin := Binary(t)
	fi, err := os.Stat(bin)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode().Perm()&0o100, "run bit set on %s", bin)
	out, err := exec.CommandContext(t.Context(), bin, "--version").Output()
	require.NoError(t, err)
	assert.Equal(t, "ccusage "+Version, strings.TrimSpace(string(out)))

	// A second call finds the install and does not run npm again.
	dir, err := CacheDir()
	require.NoError(t, err)
	got, ran, err := install(t.Context(), dir)
	require.NoError(t, err)
	assert.False(t, ran, "npm ran for an installed binary")
	assert.Equal(t, bin, got)
}

func TestInstall_NPMMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no npm here
	_, ran, err := install(t.Context(), t.TempDir())
	require.ErrorIs(t, err, ErrNPMMissing)
	assert.True(t, ran)
	assert.Contains(t, err.Error(), "apt-get install", "the message says what to do")
}

// TestInstall_Concurrent installs into a fresh directory from several
// goroutines at once: the lock lets exactly one run npm, and the others
// find its binary. It needs the npm registry (a few seconds).
func TestInstall_Concurrent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	ctx, cancel := context.WithTimeout(t.Context(), InstallTimeout)
	defer cancel()
	const n = 3
	var (
		wg   sync.WaitGroup
		bins [n]string
		rans [n]bool
		errs [n]error
	)
	for i := range n {
		wg.Go(func() { bins[i], rans[i], errs[i] = install(ctx, dir) })
	}
	wg.Wait()
	runs := 0
	for i := range n {
		require.NoError(t, errs[i])
		assert.Equal(t, bins[0], bins[i])
		if rans[i] {
			runs++
		}
	}
	assert.Equal(t, 1, runs, "npm install runs")
	require.NoError(t, checkBinary(ctx, bins[0]))

	t.Run("RunBitRestored", func(t *testing.T) {
		require.NoError(t, os.Chmod(bins[0], 0o644))
		got, ran, err := install(ctx, dir)
		require.NoError(t, err)
		assert.False(t, ran, "a missing run bit is fixed without npm")
		fi, err := os.Stat(got)
		require.NoError(t, err)
		assert.NotZero(t, fi.Mode().Perm()&0o100)
	})
}

func TestLockFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	unlock, err := lockFile(t.Context(), path)
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err = lockFile(ctx, path)
	require.ErrorIs(t, err, context.DeadlineExceeded, "a held lock makes the second taker wait")

	require.NoError(t, unlock())
	unlock2, err := lockFile(t.Context(), path)
	require.NoError(t, err, "released lock can be taken")
	require.NoError(t, unlock2())
}
