package parquet_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/dirlock"
	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
	"github.com/sessionpipe/sessionpipe/schema"
)

func entryAt(host, session string, text string) schema.Entry {
	return schema.Entry{Format: schema.FormatClaudeCode, Host: host, SessionID: session, EntryID: text,
		TS: time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC), Kind: schema.KindMessage, Text: text}
}

// TestWriter_Committed checks the acknowledgement floor with interleaved
// partitions: it stays below the first entry of the oldest open part and
// reaches the last sequence handed over once everything is committed.
func TestWriter_Committed(t *testing.T) {
	ctx := t.Context()
	w := mustWriter(t, parquet.Config{Dir: t.TempDir()})
	a, b := entryAt("a", "s1", "x"), entryAt("b", "s2", "y")
	require.Equal(t, uint64(0), w.Committed())
	require.NoError(t, w.Write(ctx, &a, 10))
	require.NoError(t, w.Write(ctx, &b, 11))
	require.NoError(t, w.Write(ctx, &a, 12))
	require.Equal(t, uint64(9), w.Committed(), "nothing committed: below the first open part")

	w.Advance(15) // 13..15 carried no entry
	require.Equal(t, uint64(9), w.Committed())
	require.NoError(t, w.Flush(ctx))
	require.Equal(t, uint64(15), w.Committed())
	require.Len(t, w.Manifest(), 2)
	require.Equal(t, "format=claude-code/date=2026-07-01/host=a/part-10-12.parquet", w.Manifest()[0].Path)
	require.Equal(t, "format=claude-code/date=2026-07-01/host=b/part-11-11.parquet", w.Manifest()[1].Path)

	require.NoError(t, w.Write(ctx, &b, 16))
	require.Equal(t, uint64(15), w.Committed())

	// A sequence handed over before is skipped (a redelivered batch).
	require.NoError(t, w.Write(ctx, &a, 12))
	require.Equal(t, int64(1), w.Stats().Skipped)
}

// TestWriter_PartBytes closes a part when the next entry would pass
// PartBytes: one partition gives several files with contiguous ranges.
func TestWriter_PartBytes(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	w := mustWriter(t, parquet.Config{Dir: dir, PartBytes: 32 << 10})
	text := strings.Repeat("z", 1000)
	for i := range 200 {
		e := entryAt("h", "s", text)
		require.NoError(t, w.Write(ctx, &e, uint64(i+1)))
	}
	require.NoError(t, w.Close(ctx))
	files := w.Manifest()
	require.Greater(t, len(files), 4)
	next := uint64(1)
	var rows int64
	for _, f := range files {
		require.Equal(t, next, f.FirstSeq)
		require.Equal(t, f.LastSeq-f.FirstSeq+1, uint64(f.Rows))
		require.FileExists(t, filepath.Join(dir, filepath.FromSlash(f.Path)))
		next = f.LastSeq + 1
		rows += f.Rows
	}
	require.Equal(t, int64(200), rows)
}

// TestWriter_MemoryBudget writes to many partitions at once with a small
// budget: the buffered total never passes it, the largest parts are
// committed early, several with one change of the manifest (each early
// commit frees a quarter of the budget beyond the entry's need), and
// nothing is lost.
func TestWriter_MemoryBudget(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	const budget = 256 << 10
	w := mustWriter(t, parquet.Config{Dir: dir, PartBytes: 128 << 10, MemoryBytes: budget})
	changes := 0
	parquet.SetHook(w, func(step string) {
		if step == "recorded" {
			changes++
		}
	})
	var entries []schema.Entry
	for i := range 2000 {
		host := "host-" + string(rune('a'+i%20))
		entries = append(entries, entryAt(host, "s", strings.Repeat("t", 50+i%500)))
	}
	for i := range entries {
		require.NoError(t, w.Write(ctx, &entries[i], uint64(i+1)))
		require.LessOrEqual(t, w.Buffered(), int64(budget))
	}
	early := w.Stats().EarlyCommits
	require.Positive(t, early)
	require.Less(t, int64(changes)*2, early, "early commits take several parts per manifest change")
	require.NoError(t, w.Close(ctx))
	var n int64
	require.NoError(t, openDuckDB(t).QueryRow(`SELECT count(DISTINCT seq) FROM `+glob(dir)).Scan(&n))
	require.Equal(t, int64(len(entries)), n)
}

// TestWriter_CommitDue commits a part once it is PartAge old, not before.
func TestWriter_CommitDue(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		w, err := parquet.NewWriter(parquet.Config{Dir: dir, PartAge: time.Minute})
		require.NoError(t, err)
		defer w.Close(ctx)
		e := entryAt("h", "s", "x")
		require.NoError(t, w.Write(ctx, &e, 1))
		time.Sleep(59 * time.Second) // fake time inside the bubble
		require.NoError(t, w.CommitDue(ctx, time.Now()))
		require.Empty(t, w.Manifest())
		require.Equal(t, uint64(0), w.Committed())
		time.Sleep(time.Second)
		require.NoError(t, w.CommitDue(ctx, time.Now()))
		require.Len(t, w.Manifest(), 1)
		require.Equal(t, uint64(1), w.Committed())
	})
}

// TestWriter_Redelivery reopens a directory and writes the same entries
// again (a consumer redelivering after a restart): nothing is written
// twice, and new entries go on.
func TestWriter_Redelivery(t *testing.T) {
	dir := t.TempDir()
	entries := genEntries(500)
	writeAll(t, mustWriter(t, parquet.Config{Dir: dir}), entries)
	first, err := parquet.ReadManifest(dir)
	require.NoError(t, err)

	more := genEntries(600)
	w := mustWriter(t, parquet.Config{Dir: dir})
	writeAll(t, w, more)
	require.Equal(t, int64(500), w.Stats().Skipped)
	require.Equal(t, int64(100), w.Stats().Entries)
	second, err := parquet.ReadManifest(dir)
	require.NoError(t, err)
	require.Equal(t, first.Files, second.Files[:len(first.Files)], "committed files untouched")

	// DESIGN.md's query, without union_by_name: every file has one schema.
	var n, distinct int64
	require.NoError(t, openDuckDB(t).QueryRow(`SELECT count(*), count(DISTINCT seq) FROM read_parquet('`+dir+`/**/*.parquet', hive_partitioning=true)`).Scan(&n, &distinct))
	require.Equal(t, []int64{600, 600}, []int64{n, distinct})
}

// TestWriter_Leftovers removes temporary files and unlisted part files at
// open, and keeps listed files and foreign files.
func TestWriter_Leftovers(t *testing.T) {
	dir := t.TempDir()
	writeAll(t, mustWriter(t, parquet.Config{Dir: dir}), genEntries(50))
	pdir := filepath.Join(dir, "format=codex", "date=2026-05-01", "host=host-1")
	for _, name := range []string{".part-7-9.parquet.tmp", "part-100-200.parquet", "notes.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(pdir, name), []byte("x"), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "."+parquet.ManifestName+".tmp"), []byte("x"), 0o644))

	w := mustWriter(t, parquet.Config{Dir: dir})
	require.Equal(t, int64(3), w.Stats().Removed)
	require.NoFileExists(t, filepath.Join(pdir, ".part-7-9.parquet.tmp"))
	require.NoFileExists(t, filepath.Join(pdir, "part-100-200.parquet"))
	require.FileExists(t, filepath.Join(pdir, "notes.txt"))
	for _, f := range w.Manifest() {
		require.FileExists(t, filepath.Join(dir, filepath.FromSlash(f.Path)))
	}
}

// TestNewWriter_Errors: a second writer on a directory and a damaged
// manifest are refused, the latter without removing anything.
func TestNewWriter_Errors(t *testing.T) {
	dir := t.TempDir()
	w := mustWriter(t, parquet.Config{Dir: dir})
	_, err := parquet.NewWriter(parquet.Config{Dir: dir})
	require.ErrorIs(t, err, dirlock.ErrHeld)
	require.NoError(t, w.Close(t.Context()))

	require.NoError(t, os.WriteFile(filepath.Join(dir, parquet.ManifestName), []byte("{\"path\":1}\n"), 0o644))
	orphan := filepath.Join(dir, "format=x", "date=y", "host=z", "part-1-2.parquet")
	require.NoError(t, os.MkdirAll(filepath.Dir(orphan), 0o755))
	require.NoError(t, os.WriteFile(orphan, []byte("x"), 0o644))
	_, err = parquet.NewWriter(parquet.Config{Dir: dir})
	require.ErrorIs(t, err, parquet.ErrManifest)
	require.ErrorContains(t, err, parquet.ManifestName+":1:")
	require.FileExists(t, orphan)
}

func TestConfig_Validate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   parquet.Config
		field string
	}{
		{"NoDir", parquet.Config{}, "dir"},
		{"NegativePartBytes", parquet.Config{Dir: "d", PartBytes: -1}, "part_bytes"},
		{"NegativeAge", parquet.Config{Dir: "d", PartAge: -time.Second}, "part_age"},
		{"BudgetBelowPart", parquet.Config{Dir: "d", PartBytes: 2 << 20, MemoryBytes: 1 << 20}, "memory_bytes"},
		{"Level", parquet.Config{Dir: "d", CompressionLevel: 9}, "compression_level"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			var ce *parquet.ConfigError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, tc.field, ce.Field)
			require.ErrorIs(t, err, parquet.ErrInvalidConfig)
		})
	}
	require.NoError(t, parquet.Config{Dir: "d"}.Validate())
}

// TestWriter_Closed: after Close, writes are refused.
func TestWriter_Closed(t *testing.T) {
	w := mustWriter(t, parquet.Config{Dir: t.TempDir()})
	require.NoError(t, w.Close(t.Context()))
	e := entryAt("h", "s", "x")
	require.True(t, errors.Is(w.Write(t.Context(), &e, 1), parquet.ErrClosed))
	require.NoError(t, w.Close(t.Context()))
}

// TestWriter_SeqZero: sequence 0 is refused, not silently skipped.
func TestWriter_SeqZero(t *testing.T) {
	w := mustWriter(t, parquet.Config{Dir: t.TempDir()})
	e := entryAt("h", "s", "x")
	require.ErrorIs(t, w.Write(t.Context(), &e, 0), parquet.ErrInvalidSeq)
	require.Zero(t, w.Stats().Entries+w.Stats().Skipped)
}

// TestWriter_InvalidUTF8 writes entries holding invalid UTF-8 (a path
// from a file system, a host name): each is counted and reported with its
// location, written with U+FFFD in place, and DuckDB reads everything.
func TestWriter_InvalidUTF8(t *testing.T) {
	dir := t.TempDir()
	var reported []error
	w := mustWriter(t, parquet.Config{Dir: dir, OnEntryError: func(err error) { reported = append(reported, err) }})
	bad := entryAt("h\xff", "s", "text \xc3( end")
	bad.Path, bad.Line, bad.Offset = "/x/\xfe.jsonl", 7, 420
	bad.ToolCalls = []schema.ToolCall{{ID: "t", Name: "n", Input: []byte("{\"a\":\"\xff\"}")}}
	good := entryAt("h", "s", "fine")
	entries := []schema.Entry{good, bad, good}
	writeAll(t, w, entries)

	require.Equal(t, int64(1), w.Stats().InvalidUTF8)
	require.Len(t, reported, 1)
	require.ErrorIs(t, reported[0], parquet.ErrInvalidUTF8)
	var ee *parquet.EntryError
	require.ErrorAs(t, reported[0], &ee)
	require.Equal(t, uint64(2), ee.Seq)
	require.Equal(t, "/x/\xfe.jsonl:7: offset 420: seq 2: export: invalid UTF-8 replaced by U+FFFD", ee.Error())

	rows, err := openDuckDB(t).Query(`SELECT seq, path, text, tool_calls[1].input FROM ` + glob(dir) + ` WHERE seq = 2`)
	require.NoError(t, err)
	require.True(t, rows.Next())
	var seq int64
	var path, text, input string
	require.NoError(t, rows.Scan(&seq, &path, &text, &input))
	require.NoError(t, rows.Close())
	require.Equal(t, "/x/\uFFFD.jsonl", path)
	require.Equal(t, "text \uFFFD( end", text)
	require.Equal(t, "{\"a\":\"\uFFFD\"}", input)
}

// TestNewWriter_LostManifest: part files in a directory without a
// manifest are not leftovers of a crash: the writer refuses to start and
// removes nothing.
func TestNewWriter_LostManifest(t *testing.T) {
	dir := t.TempDir()
	writeAll(t, mustWriter(t, parquet.Config{Dir: dir}), genEntries(50))
	_, before := scan(t, dir)
	require.NotEmpty(t, before)
	require.NoError(t, os.Remove(filepath.Join(dir, parquet.ManifestName)))

	_, err := parquet.NewWriter(parquet.Config{Dir: dir})
	require.ErrorIs(t, err, parquet.ErrManifest)
	_, after := scan(t, dir)
	require.ElementsMatch(t, before, after)
}
