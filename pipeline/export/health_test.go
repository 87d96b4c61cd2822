package export_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/export"
	"github.com/sessionpipe/sessionpipe/pipeline/export/archive"
	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
)

// An exporter whose commits fail (here a file stands where a partition's
// directory goes, as a full or read-only disk would fail them) keeps
// retrying and says so in its health; once a commit goes through, it is
// healthy again.
func TestExporter_HealthFollowsCommits(t *testing.T) {
	e := newExportEnv(t)
	e.publishFile("host-a", "s1", 5)
	require.NoError(t, os.MkdirAll(e.out, 0o755))
	block := filepath.Join(e.out, "format=pi")
	require.NoError(t, os.WriteFile(block, nil, 0o644))

	x, err := export.NewExporter(export.ExporterConfig{
		JS:             e.js,
		Parquet:        parquet.Config{Dir: e.out, PartAge: 10 * time.Millisecond},
		Archive:        archive.ArchiveConfig{Dir: e.archive},
		CommitInterval: 20 * time.Millisecond,
		LeaseTTL:       2 * time.Second,
	})
	require.NoError(t, err)
	require.NoError(t, x.Health().Err(), "no commit failed yet")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- x.Run(ctx) }()
	stop := sync.OnceValue(func() error { cancel(); return <-done })
	t.Cleanup(func() { _ = stop() })

	natstest.CheckFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		if h := x.Health(); h.ConsecutiveFailures < 3 {
			return fmt.Errorf("%d failures in a row", h.ConsecutiveFailures)
		}
		return nil
	})
	h := x.Health()
	require.Error(t, h.Err())
	require.Contains(t, h.Err().Error(), "commits failed in a row")
	require.NotEmpty(t, h.LastError)
	require.False(t, h.LastErrorAt.IsZero())

	failedAt := h.LastErrorAt
	require.NoError(t, os.Remove(block))
	natstest.CheckFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		if h := x.Health(); h.Err() != nil {
			return h.Err()
		}
		return nil
	})
	h = x.Health()
	require.Zero(t, h.ConsecutiveFailures)
	require.False(t, h.LastCommit.Before(failedAt), "the commit that succeeded came after the failures")
	require.NotEmpty(t, h.LastError, "the last error stays on record")
	require.Positive(t, x.Stats().Files)

	require.NoError(t, stop())
}

// A failing exporter's health names the failures; an idle one, whose
// rounds have nothing to commit, is healthy.
func TestHealth_Err(t *testing.T) {
	require.NoError(t, export.Health{}.Err())
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	err := export.Health{ConsecutiveFailures: 2, LastError: errors.New("no space left on device").Error(), LastErrorAt: at}.Err()
	require.EqualError(t, err, "export: 2 commits failed in a row, the last at 2026-01-02T03:04:05Z: no space left on device")
}
