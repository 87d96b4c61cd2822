package export_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/export"
	"github.com/sessionpipe/sessionpipe/pipeline/export/archive"
	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
	"github.com/sessionpipe/sessionpipe/schema"
)

// exportEnv is a JetStream server with the stream, and the directories of
// an exporter.
type exportEnv struct {
	t       *testing.T
	js      jetstream.JetStream
	out     string
	archive string
}

func newExportEnv(t *testing.T) *exportEnv {
	srv := natstest.RunServer(t)
	js := natstest.JetStream(t, natstest.Connect(t, srv.URL()))
	_, err := bus.EnsureStream(t.Context(), js, bus.StreamConfig{})
	require.NoError(t, err)
	root := t.TempDir()
	return &exportEnv{t: t, js: js, out: filepath.Join(root, "parquet"), archive: filepath.Join(root, "archive")}
}

func (e *exportEnv) publish(m *nats.Msg) uint64 {
	e.t.Helper()
	ack, err := e.js.PublishMsg(e.t.Context(), m)
	require.NoError(e.t, err)
	return ack.Sequence
}

// publishFile publishes the entries of a little transcript file of host,
// its raw chunk first, as a tailer does, and returns the file's bytes.
func (e *exportEnv) publishFile(host, session string, n int) []byte {
	e.t.Helper()
	var data []byte
	entries := make([]schema.Entry, n)
	for i := range entries {
		line := fmt.Sprintf(`{"type":"message","id":"%s-%d","text":"hello %d"}`+"\n", session, i, i)
		entries[i] = schema.Entry{
			Format: schema.FormatPi, Host: host, Path: "/home/u/.pi/" + session + ".jsonl", Offset: int64(len(data)), Line: int64(i + 1),
			SessionID: session, EntryID: fmt.Sprintf("e%d", i), Kind: schema.KindMessage, Role: schema.RoleUser, Text: fmt.Sprintf("hello %d", i),
			TS: time.Date(2026, 11, 24, 10, 0, i, 0, time.UTC),
		}
		data = append(data, line...)
	}
	msgs, err := bus.RawMsgs(bus.DefaultPrefix, &bus.RawChunk{
		Host: host, Path: "/home/u/.pi/" + session + ".jsonl", Format: "pi", File: "1:" + session,
		Offset: 0, End: int64(len(data)), Line: 1, Lines: int64(n), Sessions: []string{session}, TS: entries[0].TS, Data: data,
	}, 0)
	require.NoError(e.t, err)
	for _, m := range msgs {
		e.publish(m)
	}
	for i := range entries {
		e.publish(bus.EntryMsg(bus.DefaultPrefix, &entries[i], nil))
	}
	return data
}

// run runs an exporter until every message of the stream is committed,
// then stops it.
func (e *exportEnv) run(mod ...func(*export.ExporterConfig)) export.ExporterStats {
	e.t.Helper()
	cfg := export.ExporterConfig{
		JS:             e.js,
		Parquet:        parquet.Config{Dir: e.out, PartAge: 100 * time.Millisecond},
		Archive:        archive.ArchiveConfig{Dir: e.archive},
		CommitInterval: 50 * time.Millisecond,
		LeaseTTL:       2 * time.Second,
	}
	for _, m := range mod {
		m(&cfg)
	}
	x, err := export.NewExporter(cfg)
	require.NoError(e.t, err)
	s, err := e.js.Stream(e.t.Context(), bus.DefaultStream)
	require.NoError(e.t, err)
	info, err := s.Info(e.t.Context())
	require.NoError(e.t, err)
	last := info.State.LastSeq
	ctx, cancel := context.WithCancel(e.t.Context())
	done := make(chan error, 1)
	go func() { done <- x.Run(ctx) }()
	natstest.CheckFor(e.t, 30*time.Second, 20*time.Millisecond, func() error {
		select {
		case err := <-done:
			return fmt.Errorf("exporter stopped: %v", err)
		default:
		}
		if c := x.Stats().Committed; c < last {
			return fmt.Errorf("committed %d of %d", c, last)
		}
		return nil
	})
	cancel()
	require.NoError(e.t, <-done)
	return x.Stats()
}

func TestExporter_ExactlyOnceAcrossRestarts(t *testing.T) {
	e := newExportEnv(t)
	fileA := e.publishFile("host-a", "s1", 20)
	fileB := e.publishFile("host-b", "s2", 5)
	st := e.run()
	require.Equal(t, int64(25), st.Rows)
	require.Positive(t, st.Segments)

	db := openDuckDB(t)
	count := func() (rows, keys int) {
		require.NoError(t, db.QueryRow("SELECT count(*), count(DISTINCT key) FROM "+glob(e.out)).Scan(&rows, &keys))
		return rows, keys
	}
	rows, keys := count()
	require.Equal(t, 25, rows)
	require.Equal(t, 25, keys)

	// A restart resumes after what is committed: nothing again.
	st = e.run()
	require.Zero(t, st.Rows, "nothing exported twice")
	fileC := e.publishFile("host-a", "s3", 7)
	e.run()
	rows, keys = count()
	require.Equal(t, 32, rows)
	require.Equal(t, 32, keys)

	// The archive gives every file back.
	out := t.TempDir()
	restored, err := archive.Restore(t.Context(), archive.RestoreConfig{Archive: e.archive, Out: out})
	require.NoError(t, err)
	require.Len(t, restored, 3)
	for _, f := range []struct {
		host, session string
		data          []byte
	}{{"host-a", "s1", fileA}, {"host-b", "s2", fileB}, {"host-a", "s3", fileC}} {
		got, err := os.ReadFile(filepath.Join(out, f.host, "home/u/.pi", f.session+".jsonl"))
		require.NoError(t, err)
		require.Equal(t, string(f.data), string(got))
	}
	restored, err = archive.Restore(t.Context(), archive.RestoreConfig{Archive: e.archive, Out: t.TempDir(), Host: "host-a", Session: "s3"})
	require.NoError(t, err)
	require.Len(t, restored, 1)
	require.Equal(t, "/home/u/.pi/s3.jsonl", restored[0].Path)

	// No temporary file is left anywhere.
	for _, dir := range []string{e.out, e.archive} {
		require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			require.NoError(t, err)
			require.False(t, strings.HasSuffix(p, ".tmp"), p)
			return nil
		}))
	}
}

// An entry whose body names another host than its subject (a tailer
// identity may publish only its own host's subjects) is not exported.
func TestExporter_SkipsForgedHost(t *testing.T) {
	e := newExportEnv(t)
	e.publishFile("host-a", "s1", 2)
	forged := schema.Entry{Format: schema.FormatPi, Host: "host-b", SessionID: "x", EntryID: "y", Kind: schema.KindMessage}
	m := bus.EntryMsg(bus.DefaultPrefix, &forged, nil)
	m.Subject = bus.EntrySubject(bus.DefaultPrefix, "host-a", "pi")
	e.publish(m)
	st := e.run()
	require.Equal(t, int64(2), st.Rows)
	require.Equal(t, int64(1), st.Forged)
}

// Output of one stream is never continued from another incarnation of
// it: its sequences start over.
func TestExporter_RefusesAnotherStream(t *testing.T) {
	e := newExportEnv(t)
	e.publishFile("host-a", "s1", 2)
	e.run()
	require.NoError(t, e.js.DeleteStream(t.Context(), bus.DefaultStream))
	_, err := bus.EnsureStream(t.Context(), e.js, bus.StreamConfig{})
	require.NoError(t, err)
	x, err := export.NewExporter(export.ExporterConfig{JS: e.js, Parquet: parquet.Config{Dir: e.out}, LeaseTTL: 2 * time.Second})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	err = x.Run(ctx)
	require.ErrorIs(t, err, bus.ErrStreamMismatch)
	require.Contains(t, err.Error(), "another incarnation")
}

// Without an archive directory, raw chunks are not consumed and the
// Parquet is written as before.
func TestExporter_NoArchive(t *testing.T) {
	e := newExportEnv(t)
	e.publishFile("host-a", "s1", 3)
	st := e.run(func(c *export.ExporterConfig) { c.Archive.Dir = "" })
	require.Equal(t, int64(3), st.Rows)
	require.Zero(t, st.Segments)
	_, err := os.Stat(e.archive)
	require.ErrorIs(t, err, fs.ErrNotExist)
}

// TestExporter_CommitsOnCatchingUp: with a part age of an hour, what the
// stream held when the exporter caught up is committed at once (the end
// of a backfill in Parquet within seconds, not a part age later), and so
// is what arrives next, within the catch-up interval; with CatchUpCommit
// negative nothing is committed before the part age or the stop.
func TestExporter_CommitsOnCatchingUp(t *testing.T) {
	e := newExportEnv(t)
	e.publishFile("h1", "s1", 5)
	start := func(catchUp time.Duration) (*export.Exporter, func()) {
		x, err := export.NewExporter(export.ExporterConfig{
			JS: e.js, Parquet: parquet.Config{Dir: e.out, PartAge: time.Hour}, Archive: archive.ArchiveConfig{Dir: e.archive},
			CommitInterval: 50 * time.Millisecond, CatchUpCommit: catchUp, LeaseTTL: 2 * time.Second,
		})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- x.Run(ctx) }()
		return x, func() { cancel(); require.NoError(t, <-done) }
	}
	committedRows := func() int64 {
		m, err := parquet.ReadManifest(e.out)
		if err != nil {
			return 0
		}
		var n int64
		for _, f := range m.Files {
			n += f.Rows
		}
		return n
	}

	// Never on catching up: everything received, nothing committed.
	s, err := e.js.Stream(t.Context(), bus.DefaultStream)
	require.NoError(t, err)
	info, err := s.Info(t.Context())
	require.NoError(t, err)
	x, stop := start(-1)
	natstest.CheckFor(t, 2*time.Minute, 20*time.Millisecond, func() error {
		if acked := x.Stats().ConsumerStats.AckedSeq; acked < info.State.LastSeq {
			return fmt.Errorf("acknowledged up to %d of %d", acked, info.State.LastSeq)
		}
		return nil
	})
	require.Zero(t, committedRows(), "nothing committed before the part age")
	stop() // a stop commits
	require.Equal(t, int64(5), committedRows())

	// On catching up: the next entries committed without a stop, then
	// those published after (the interval is short here).
	e.publishFile("h1", "s2", 3)
	x, stop = start(100 * time.Millisecond)
	defer stop()
	natstest.CheckFor(t, 2*time.Minute, 20*time.Millisecond, func() error {
		if n := committedRows(); n != 8 {
			return fmt.Errorf("%d rows committed, want 8", n)
		}
		return nil
	})
	e.publishFile("h2", "s3", 4)
	natstest.CheckFor(t, 2*time.Minute, 20*time.Millisecond, func() error {
		if n := committedRows(); n != 12 {
			return fmt.Errorf("%d rows committed, want 12", n)
		}
		return nil
	})
	require.Positive(t, x.Stats().Files)
}
