package parquet_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
	"github.com/sessionpipe/sessionpipe/schema"
)

// sessionsEntries returns n entries of one partition, in 10 sessions that
// interleave in arrival order, with timestamps going back and forth.
func sessionsEntries(n int) []schema.Entry {
	entries := make([]schema.Entry, n)
	base := time.Date(2026, 8, 9, 10, 0, 0, 0, time.UTC)
	for i := range entries {
		entries[i] = schema.Entry{
			Format: schema.FormatClaudeCode, Host: "h", SessionID: fmt.Sprintf("session-%02d", i%10),
			EntryID: fmt.Sprintf("e%d", i), Kind: schema.KindMessage, Role: schema.RoleUser,
			TS:   base.Add(time.Duration((i*7919)%n) * time.Millisecond),
			Text: fmt.Sprintf("message %d", i),
		}
	}
	return entries
}

// onlyFile returns the single Parquet file below dir.
func onlyFile(t *testing.T, dir string) string {
	t.Helper()
	_, parts := scan(t, dir)
	require.Len(t, parts, 1)
	return filepath.Join(dir, filepath.FromSlash(parts[0]))
}

// TestWriter_ParquetLayout checks what parquet-go's defaults get wrong
// for DuckDB, as DuckDB sees it: zstd on every column, row groups of the
// configured size, INT64 microsecond timestamps adjusted to UTC, the
// key-value metadata, sorting_columns and rows sorted by (session_id, ts).
func TestWriter_ParquetLayout(t *testing.T) {
	dir := t.TempDir()
	entries := sessionsEntries(1000)
	writeAll(t, mustWriter(t, parquet.Config{Dir: dir, RowGroupRows: 100, WriterVersion: "sessionpipe test"}), entries)
	file := onlyFile(t, dir)
	require.Equal(t, "part-1-1000.parquet", filepath.Base(file))
	db := openDuckDB(t)

	var groups, maxRows, minRows int64
	require.NoError(t, db.QueryRow(`SELECT count(DISTINCT row_group_id), max(row_group_num_rows), min(row_group_num_rows)
		FROM parquet_metadata(?)`, file).Scan(&groups, &maxRows, &minRows))
	require.Equal(t, []int64{10, 100, 100}, []int64{groups, maxRows, minRows})

	var codecs []string
	rows, err := db.Query(`SELECT DISTINCT compression FROM parquet_metadata(?)`, file)
	require.NoError(t, err)
	for rows.Next() {
		var c string
		require.NoError(t, rows.Scan(&c))
		codecs = append(codecs, c)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"ZSTD"}, codecs)

	// Dictionary encoding on low-cardinality columns, not on text.
	var sessEnc, textEnc string
	require.NoError(t, db.QueryRow(`SELECT encodings FROM parquet_metadata(?) WHERE path_in_schema = 'session_id' LIMIT 1`, file).Scan(&sessEnc))
	require.NoError(t, db.QueryRow(`SELECT encodings FROM parquet_metadata(?) WHERE path_in_schema = 'text' LIMIT 1`, file).Scan(&textEnc))
	require.Contains(t, sessEnc, "RLE_DICTIONARY")
	require.NotContains(t, textEnc, "DICTIONARY")

	// Statistics where they serve a filter, none on free text.
	var textStats, sessionStats int64
	require.NoError(t, db.QueryRow(`SELECT count(stats_max_value) FILTER (WHERE path_in_schema = 'text'),
		count(stats_max_value) FILTER (WHERE path_in_schema = 'session_id') FROM parquet_metadata(?)`, file).Scan(&textStats, &sessionStats))
	require.Equal(t, []int64{0, 10}, []int64{textStats, sessionStats})

	var typ, logical string
	require.NoError(t, db.QueryRow(`SELECT type, logical_type FROM parquet_schema(?) WHERE name = 'ts'`, file).Scan(&typ, &logical))
	require.Equal(t, "INT64", typ)
	require.Contains(t, logical, "isAdjustedToUTC=1")
	require.Contains(t, logical, "MICROS=MicroSeconds()")

	kv := map[string]string{}
	rows, err = db.Query(`SELECT CAST(key AS VARCHAR), CAST(value AS VARCHAR) FROM parquet_kv_metadata(?)`, file)
	require.NoError(t, err)
	for rows.Next() {
		var k, v string
		require.NoError(t, rows.Scan(&k, &v))
		kv[k] = v
	}
	require.NoError(t, rows.Err())
	require.Equal(t, map[string]string{
		parquet.MetaSchemaVersion: strconv.Itoa(schema.Version), parquet.MetaFirstSeq: "1", parquet.MetaLastSeq: "1000",
		parquet.MetaFormat: "claude-code", parquet.MetaDate: "2026-08-09", parquet.MetaHost: "h", parquet.MetaWriter: "sessionpipe test",
	}, kv)

	// Rows in file order are sorted by (session_id, ts).
	rows, err = db.Query(`SELECT session_id, ts FROM read_parquet(?, file_row_number=true) ORDER BY file_row_number`, file)
	require.NoError(t, err)
	var prevS string
	var prevT time.Time
	n := 0
	for rows.Next() {
		var s string
		var ts time.Time
		require.NoError(t, rows.Scan(&s, &ts))
		require.True(t, s > prevS || s == prevS && !ts.Before(prevT), "row %d (%s, %s) after (%s, %s)", n, s, ts, prevS, prevT)
		prevS, prevT = s, ts
		n++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, 1000, n)

	// The manifest agrees with the file.
	m, err := parquet.ReadManifest(dir)
	require.NoError(t, err)
	require.Len(t, m.Files, 1)
	f := m.Files[0]
	info, err := os.Stat(file)
	require.NoError(t, err)
	require.Equal(t, info.Size(), f.Bytes)
	require.Equal(t, int64(1000), f.Rows)
	require.Equal(t, time.Date(2026, 8, 9, 10, 0, 0, 0, time.UTC), f.MinTS)
	require.Equal(t, time.Date(2026, 8, 9, 10, 0, 0, 999_000_000, time.UTC), f.MaxTS)
	var sum string
	require.NoError(t, db.QueryRow(`SELECT sha256(content) FROM read_blob(?)`, file).Scan(&sum))
	require.Equal(t, sum, f.SHA256)
	b, err := json.Marshal(f)
	require.NoError(t, err)
	require.Contains(t, string(b), `"path":"format=claude-code/date=2026-08-09/host=h/part-1-1000.parquet"`)
}

// TestWriter_ColumnMetadata: every column chunk of every row group of
// every file names its column and codec (parquet-go's writer reuse once
// dropped them from the second file on; DuckDB does not mind, other
// readers do).
func TestWriter_ColumnMetadata(t *testing.T) {
	dir := t.TempDir()
	writeAll(t, mustWriter(t, parquet.Config{Dir: dir, PartBytes: 256 << 10, RowGroupRows: 100}), sessionsEntries(3000))
	_, parts := scan(t, dir)
	require.Greater(t, len(parts), 2)
	var chunks, bad, groups int64
	require.NoError(t, openDuckDB(t).QueryRow(`SELECT count(*), count(*) FILTER (WHERE path_in_schema = '' OR compression <> 'ZSTD' OR type IS NULL),
		count(DISTINCT (file_name, row_group_id)) FROM parquet_metadata('`+dir+`/**/*.parquet')`).Scan(&chunks, &bad, &groups))
	require.Greater(t, groups, int64(len(parts)), "several row groups per file")
	require.Zero(t, bad, "of %d column chunks", chunks)
}

// TestWriter_Statistics shows that row-group statistics let DuckDB skip
// row groups: the file is sorted by session, so each session lies in one
// row group of ten, and its min/max say so. To prove DuckDB does not read
// the other row groups, the session_id column chunk of another row group
// is overwritten with garbage: a query on session-03 still succeeds, while
// one that must read the damaged row group fails.
func TestWriter_Statistics(t *testing.T) {
	dir := t.TempDir()
	entries := sessionsEntries(1000)
	writeAll(t, mustWriter(t, parquet.Config{Dir: dir, RowGroupRows: 100}), entries)
	file := onlyFile(t, dir)
	db := openDuckDB(t)

	var groups, matching int64
	require.NoError(t, db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE stats_min_value <= 'session-03' AND 'session-03' <= stats_max_value)
		FROM parquet_metadata(?) WHERE path_in_schema = 'session_id'`, file).Scan(&groups, &matching))
	require.Equal(t, int64(10), groups)
	require.Equal(t, int64(1), matching, "session-03 is in one row group by its statistics")

	// Damage row group 5's session_id chunk (session-05).
	var dict sql.NullInt64
	var data, size int64
	require.NoError(t, db.QueryRow(`SELECT dictionary_page_offset, data_page_offset, total_compressed_size
		FROM parquet_metadata(?) WHERE path_in_schema = 'session_id' AND row_group_id = 5`, file).Scan(&dict, &data, &size))
	start := data
	if dict.Valid && dict.Int64 > 0 {
		start = min(start, dict.Int64)
	}
	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(bytes.Repeat([]byte{0xff}, int(size)), start)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	db2 := openDuckDB(t) // no cached metadata
	var n int64
	require.NoError(t, db2.QueryRow(`SELECT count(text) FROM `+glob(dir)+` WHERE session_id = 'session-03'`).Scan(&n),
		"row group 5 is skipped by its statistics")
	require.Equal(t, int64(100), n)
	err = db2.QueryRow(`SELECT count(text) FROM ` + glob(dir) + ` WHERE session_id = 'session-05'`).Scan(&n)
	require.Error(t, err, "reading the damaged row group fails: the damage is real")
}
