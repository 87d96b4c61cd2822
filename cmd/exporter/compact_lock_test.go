//go:build unix

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
)

// `exporter compact` does not wait forever for a manifest lock that a
// stopped exporter holds: after -lock-timeout it fails, naming the holder
// the lock file records and what to do.
func TestCompactCommand_ManifestLockHeld(t *testing.T) {
	dir := t.TempDir()
	f, err := os.OpenFile(filepath.Join(dir, parquet.ManifestLockName), os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	require.NoError(t, unix.Flock(int(f.Fd()), unix.LOCK_EX))
	_, err = f.WriteString("pid=4242\ncommand=exporter serve -out " + dir + "\nsince=2026-05-01T10:00:00Z\n")
	require.NoError(t, err)

	var stdout, stderr bytes.Buffer
	err = run(t.Context(), []string{"compact", "-out", dir, "-lock-timeout", "100ms", "-log-level", "warn"},
		func(string) string { return "" }, &stdout, &stderr)
	require.ErrorAs(t, err, new(*parquet.LockHeldError))
	require.EqualError(t, err, "compact: "+filepath.Join(dir, parquet.ManifestLockName)+" is held by process 4242 (exporter serve -out "+dir+
		") since 2026-05-01T10:00:00Z; gave up after waiting 100ms: a holder that keeps it this long is stopped or hung: resume it (kill -CONT 4242) or stop it, then try again (-lock-timeout 100ms)")
}
