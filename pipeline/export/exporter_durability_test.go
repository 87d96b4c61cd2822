package export_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/export"
	"github.com/sessionpipe/sessionpipe/pipeline/export/archive"
	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
)

// An exporter whose Parquet manifest change is not known to be durable
// stops with the error (a supervisor restarts it), rather than retrying
// in place or running on without exporting; the next run exports every
// entry once.
func TestExporter_StopsWhenManifestNotDurable(t *testing.T) {
	e := newExportEnv(t)
	e.publishFile("host-a", "s1", 20)
	e.run()
	e.publishFile("host-a", "s2", 20)

	restore := export.FailSyncAfterRename(parquet.ManifestName, errors.New("input/output error"))
	defer restore()
	x, err := export.NewExporter(export.ExporterConfig{
		JS:             e.js,
		Parquet:        parquet.Config{Dir: e.out, PartAge: 100 * time.Millisecond},
		Archive:        archive.ArchiveConfig{Dir: e.archive},
		CommitInterval: 50 * time.Millisecond,
		LeaseTTL:       2 * time.Second,
	})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- x.Run(t.Context()) }()
	select {
	case err := <-done:
		require.ErrorIs(t, err, parquet.ErrNotDurable)
	case <-time.After(30 * time.Second):
		t.Fatal("the exporter went on after its manifest change was not known to be durable")
	}
	restore()

	e.run()
	rows, seqs := listedOnDisk(t, e.out)
	require.Equal(t, []int64{40, 40}, []int64{rows, seqs})
	var keys int64
	require.NoError(t, openDuckDB(t).QueryRow(`SELECT count(DISTINCT key) FROM `+glob(e.out)).Scan(&keys))
	require.Equal(t, int64(40), keys)
}
