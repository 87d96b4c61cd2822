//go:build unix

package parquet

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/dirlock"
)

// A manifest lock held past LockTimeout (an exporter stopped in the middle
// of a commit) makes Compact give up with an error naming the holder, as
// the holder recorded itself in the lock file, instead of waiting forever;
// once the lock is free, Compact runs.
func TestCompact_ManifestLockHeld(t *testing.T) {
	dir := t.TempDir()
	before := time.Now().Truncate(time.Second)
	held, err := lockManifest(t.Context(), dir) // the stopped exporter
	require.NoError(t, err)

	// Bounded only so that a regression fails instead of hanging.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	_, err = Compact(ctx, CompactConfig{Dir: dir, LockTimeout: 50 * time.Millisecond})
	var he *LockHeldError
	require.ErrorAs(t, err, &he)
	require.ErrorIs(t, err, dirlock.ErrHeld)
	require.Equal(t, filepath.Join(dir, ManifestLockName), he.Path)
	require.Equal(t, os.Getpid(), he.PID)
	require.Contains(t, he.Command, os.Args[0])
	require.False(t, he.Since.Before(before), "since %s, locked after %s", he.Since, before)
	require.False(t, he.Since.After(time.Now()))
	require.Equal(t, 50*time.Millisecond, he.Waited)
	require.Contains(t, err.Error(), filepath.Join(dir, ManifestLockName)+" is held by process "+strconv.Itoa(os.Getpid())+" ("+os.Args[0])
	require.Contains(t, err.Error(), "gave up after waiting 50ms: a holder that keeps it this long is stopped or hung: resume it (kill -CONT "+strconv.Itoa(os.Getpid())+") or stop it, then try again")

	require.NoError(t, held.unlock())
	_, err = Compact(ctx, CompactConfig{Dir: dir, LockTimeout: 50 * time.Millisecond})
	require.NoError(t, err)
}

// A lock file that does not say who holds it still gives a useful error.
func TestLockHeldError_UnknownHolder(t *testing.T) {
	err := &LockHeldError{Path: "/out/_manifest.lock", Waited: 30 * time.Second}
	require.Equal(t, "/out/_manifest.lock is held by another process; gave up after waiting 30s: a holder that keeps it this long is stopped or hung: resume it or stop it, then try again", err.Error())
}
