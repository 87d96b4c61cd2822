//go:build unix

package export_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/export"
	"github.com/sessionpipe/sessionpipe/pipeline/export/archive"
	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
)

// filesNamed returns the files below dir whose names have prefix and
// suffix (committed ones: temporary files start with a dot).
func filesNamed(t *testing.T, dir, prefix, suffix string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), prefix) && strings.HasSuffix(d.Name(), suffix) {
			out = append(out, p)
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// A commit's archive half does not wait for its Parquet half: most of
// either is waiting for fsync, and the two overlap. With the Parquet
// output's manifest lock held (by this test), a commit writes the
// archive's segment while the Parquet file waits; the lock released, the
// Parquet file follows, and everything is committed once.
func TestExporter_ArchiveCommitsBesideParquet(t *testing.T) {
	e := newExportEnv(t)
	e.publishFile("host-a", "s1", 20)
	x, err := export.NewExporter(export.ExporterConfig{
		JS:             e.js,
		Parquet:        parquet.Config{Dir: e.out, PartAge: time.Hour},
		Archive:        archive.ArchiveConfig{Dir: e.archive},
		CommitInterval: time.Hour,
		CatchUpCommit:  -1,
		LeaseTTL:       2 * time.Second,
	})
	require.NoError(t, err)
	s, err := e.js.Stream(t.Context(), bus.DefaultStream)
	require.NoError(t, err)
	info, err := s.Info(t.Context())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- x.Run(ctx) }()
	natstest.CheckFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		if st := x.Stats(); !st.Active || st.ConsumerStats.Entries < 20 || st.ConsumerStats.Raw < 1 {
			return fmt.Errorf("not applied yet: %+v", st)
		}
		return nil
	})

	lock, err := os.OpenFile(filepath.Join(e.out, parquet.ManifestLockName), os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	require.NoError(t, unix.Flock(int(lock.Fd()), unix.LOCK_EX))
	x.CommitNow()
	natstest.CheckFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		if len(filesNamed(t, e.archive, "seg-", ".jsonl.zst")) == 0 {
			return errors.New("no archive segment yet")
		}
		return nil
	})
	require.Empty(t, filesNamed(t, e.out, "part-", ".parquet"), "the Parquet half waits for the lock")
	require.Zero(t, x.Stats().Committed, "nothing acknowledged before both halves are done")

	require.NoError(t, lock.Close()) // releases the lock
	natstest.CheckFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		if c := x.Stats().Committed; c < info.State.LastSeq {
			return fmt.Errorf("committed %d of %d", c, info.State.LastSeq)
		}
		return nil
	})
	require.Len(t, filesNamed(t, e.out, "part-", ".parquet"), 1)
	require.Zero(t, x.Stats().CommitErrors)
	cancel()
	require.NoError(t, <-done)
}
