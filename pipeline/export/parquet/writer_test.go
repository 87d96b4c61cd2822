package parquet_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
	"github.com/sessionpipe/sessionpipe/schema"
)

// TestWriter_DuckDBRoundTrip writes the sample corpus and entries with
// every field set or unset, and reads every row back through DuckDB:
// every column equal, ts to the microsecond, lists, structs and NULLs
// intact, text byte-exact.
func TestWriter_DuckDBRoundTrip(t *testing.T) {
	entries := corpusEntries(t)
	for i := range 5 {
		entries = append(entries, fullEntry(i))
	}
	entries = append(entries, emptyEntry(), zeroUsageEntry())
	got := roundTrip(t, entries, parquet.Config{})
	// NULL usage differs from zero usage.
	require.Nil(t, got[len(got)-2].Entry.Usage)
	require.Equal(t, &schema.Usage{}, got[len(got)-1].Entry.Usage)
}

// TestWriter_DuckDBRoundTripGenerated does the same with generated
// sessions of the three main formats, in small parts and row groups so
// that a session spans files and row groups.
func TestWriter_DuckDBRoundTripGenerated(t *testing.T) {
	entries := generatedEntries(t, 4<<20)
	require.Greater(t, len(entries), 1000)
	roundTrip(t, entries, parquet.Config{PartBytes: 1 << 20, RowGroupRows: 500})
}

// roundTrip writes entries with sequences 1..n under cfg (Dir set here)
// and requires DuckDB to read every one back equal.
func roundTrip(t *testing.T, entries []schema.Entry, cfg parquet.Config) []readRow {
	t.Helper()
	dir := t.TempDir()
	cfg.Dir = dir
	w := mustWriter(t, cfg)
	writeAll(t, w, entries)

	got := readBack(t, openDuckDB(t), dir)
	require.Len(t, got, len(entries))
	for i, r := range got {
		e := entries[i]
		require.Equal(t, int64(i+1), r.Seq)
		require.Equal(t, e.Key(), r.Key)
		require.Equal(t, want(e), r.Entry, "row %d (seq %d)", i, r.Seq)
		require.Equal(t, e.Host == "", r.HostNull, "host NULL in row %d", i)
		if e.TS.IsZero() {
			require.Empty(t, r.Date)
		} else {
			require.Equal(t, e.TS.UTC().Format("2006-01-02"), r.Date)
		}
	}
	return got
}
