package export_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/export"
	"github.com/sessionpipe/sessionpipe/pipeline/export/archive"
)

// counts returns how many raw and how many entry messages the stream
// holds.
func (e *exportEnv) counts() (raw, entries uint64) {
	e.t.Helper()
	s, err := e.js.Stream(e.t.Context(), bus.DefaultStream)
	require.NoError(e.t, err)
	for filter, n := range map[string]*uint64{bus.RawFilter(bus.DefaultPrefix): &raw, bus.EntriesFilter(bus.DefaultPrefix): &entries} {
		info, err := s.Info(e.t.Context(), jetstream.WithSubjectFilter(filter))
		require.NoError(e.t, err)
		for _, c := range info.State.Subjects {
			*n += c
		}
	}
	return raw, entries
}

// requireRestores checks that the archive gives back each file byte for
// byte.
func (e *exportEnv) requireRestores(files map[string][]byte) {
	e.t.Helper()
	out := e.t.TempDir()
	restored, err := archive.Restore(e.t.Context(), archive.RestoreConfig{Archive: e.archive, Out: out})
	require.NoError(e.t, err)
	require.Len(e.t, restored, len(files))
	for rel, data := range files {
		got, err := os.ReadFile(filepath.Join(out, rel))
		require.NoError(e.t, err)
		require.Equal(e.t, string(data), string(got), rel)
	}
}

func purge(c *export.ExporterConfig) { c.PurgeArchived = true }

// With PurgeArchived the original lines leave the stream once archived;
// the entries stay, and the archive gives every file back.
func TestExporter_PurgeArchived(t *testing.T) {
	e := newExportEnv(t)
	files := map[string][]byte{
		"host-a/home/u/.pi/s1.jsonl": e.publishFile("host-a", "s1", 20),
		"host-b/home/u/.pi/s2.jsonl": e.publishFile("host-b", "s2", 5),
	}
	raw, entries := e.counts()
	require.Equal(t, uint64(2), raw)
	st := e.run(purge)
	require.Equal(t, int64(25), st.Rows)
	require.Equal(t, st.Committed, st.PurgedSeq)
	require.False(t, st.PurgeBlocked)
	raw, after := e.counts()
	require.Zero(t, raw, "the original lines are purged")
	require.Equal(t, entries, after, "the entries stay")
	e.requireRestores(files)

	// Without the option they stay; the next exporter with it purges
	// them (archived before it started: one purge of the subject).
	files["host-a/home/u/.pi/s3.jsonl"] = e.publishFile("host-a", "s3", 7)
	st = e.run()
	require.Equal(t, int64(7), st.Rows)
	require.Zero(t, st.PurgedSeq)
	raw, _ = e.counts()
	require.Equal(t, uint64(1), raw)
	st = e.run(purge)
	require.Zero(t, st.Rows, "nothing exported twice")
	raw, _ = e.counts()
	require.Zero(t, raw)
	e.requireRestores(files)
}

// Another durable consumer that reads the original lines (another
// exporter, say) keeps them in the stream until it is gone.
func TestExporter_PurgeBlockedByAnotherReader(t *testing.T) {
	e := newExportEnv(t)
	s, err := e.js.Stream(t.Context(), bus.DefaultStream)
	require.NoError(t, err)
	_, err = s.CreateConsumer(t.Context(), jetstream.ConsumerConfig{
		Durable: "other-exporter", AckPolicy: jetstream.AckExplicitPolicy,
		FilterSubjects: []string{bus.EntriesFilter(bus.DefaultPrefix), bus.RawFilter(bus.DefaultPrefix)},
	})
	require.NoError(t, err)
	// Consumers that do not read them change nothing.
	_, err = s.CreateConsumer(t.Context(), jetstream.ConsumerConfig{
		Durable: "indexer", AckPolicy: jetstream.AckAllPolicy, FilterSubject: bus.EntriesFilter(bus.DefaultPrefix),
	})
	require.NoError(t, err)
	files := map[string][]byte{"host-a/home/u/.pi/s1.jsonl": e.publishFile("host-a", "s1", 4)}

	st := e.run(purge)
	require.True(t, st.PurgeBlocked)
	require.Zero(t, st.PurgedSeq)
	raw, _ := e.counts()
	require.Equal(t, uint64(1), raw, "kept for the other reader")

	require.NoError(t, s.DeleteConsumer(t.Context(), "other-exporter"))
	files["host-a/home/u/.pi/s2.jsonl"] = e.publishFile("host-a", "s2", 3)
	st = e.run(purge)
	require.False(t, st.PurgeBlocked)
	require.Equal(t, st.Committed, st.PurgedSeq)
	raw, _ = e.counts()
	require.Zero(t, raw, "both files' original lines, once nobody else reads them")
	e.requireRestores(files)
}

// An archive that does not hold what the Parquet position says (a new
// archive directory beside an existing output) is never purged past:
// the original lines it never took stay in the stream.
func TestExporter_PurgeNeverPastTheArchive(t *testing.T) {
	e := newExportEnv(t)
	e.publishFile("host-a", "s1", 3)
	e.run() // Parquet and archive, no purge
	e.archive = filepath.Join(t.TempDir(), "new-archive")
	st := e.run(purge)
	require.Zero(t, st.Rows, "nothing exported twice")
	raw, _ := e.counts()
	require.Equal(t, uint64(1), raw, "the new archive never held them")

	// What the new archive does take goes.
	e.publishFile("host-a", "s2", 2)
	st = e.run(purge)
	require.Equal(t, int64(2), st.Rows)
	raw, _ = e.counts()
	require.Equal(t, uint64(1), raw, "s2's lines purged, s1's kept")
}
