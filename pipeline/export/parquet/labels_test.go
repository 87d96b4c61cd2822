package parquet_test

import (
	"database/sql"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Labels are a MAP(VARCHAR, VARCHAR) column that DuckDB filters by key,
// NULL for an entry without labels.
func TestWriter_Labels(t *testing.T) {
	dir := t.TempDir()
	entries := sessionsEntries(300)
	for i := range entries {
		switch i % 3 {
		case 0:
			entries[i].Labels = map[string]string{"team": "infra", "cost_centre": "42"}
		case 1:
			entries[i].Labels = map[string]string{"team": "research"}
		}
	}
	writeAll(t, mustWriter(t, parquet.Config{Dir: dir, RowGroupRows: 50}), entries)
	db := openDuckDB(t)

	var typ string
	require.NoError(t, db.QueryRow(`SELECT typeof(labels) FROM `+glob(dir)+` LIMIT 1`).Scan(&typ))
	require.Equal(t, "MAP(VARCHAR, VARCHAR)", typ)

	count := func(where string) (n int64) {
		t.Helper()
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM `+glob(dir)+` WHERE `+where).Scan(&n))
		return n
	}
	require.Equal(t, int64(100), count(`labels['team'] = 'infra'`))
	require.Equal(t, int64(100), count(`labels['team'] = 'research'`))
	require.Equal(t, int64(100), count(`labels['cost_centre'] = '42'`))
	require.Equal(t, int64(100), count(`labels IS NULL`))
	require.Equal(t, int64(200), count(`list_contains(map_keys(labels), 'team')`))

	// Usage by team, as a fleet report would group it.
	rows, err := db.Query(`SELECT coalesce(labels['team'], '(none)') AS team, count(*) FROM ` + glob(dir) + ` GROUP BY team ORDER BY team`)
	require.NoError(t, err)
	got := map[string]int64{}
	for rows.Next() {
		var team string
		var n int64
		require.NoError(t, rows.Scan(&team, &n))
		got[team] = n
	}
	require.NoError(t, rows.Err())
	require.Equal(t, map[string]int64{"(none)": 100, "infra": 100, "research": 100}, got)
}

// The api_calls view carries each call's labels: spend by team is one
// GROUP BY, and the teams' sums add up to the whole.
func TestDuckDBInit_SpendByLabel(t *testing.T) {
	dir := t.TempDir()
	entries := sessionsEntries(300)
	want := map[string]int64{}
	for i := range entries {
		e := &entries[i]
		e.Role, e.Model, e.UsageKey = schema.RoleAssistant, "claude-sonnet-4-5", fmt.Sprintf("call-%d", i)
		e.Usage = &schema.Usage{Input: int64(i + 1), Output: 10}
		team := ""
		switch i % 3 {
		case 0:
			team = "infra"
		case 1:
			team = "research"
		}
		if team != "" {
			e.Labels = map[string]string{"team": team}
		}
		want[team] += int64(i+1) + 10
	}
	writeAll(t, mustWriter(t, parquet.Config{Dir: dir}), entries)
	db := openDuckDB(t)
	db.SetMaxOpenConns(1) // the views are temporary: one connection
	_, err := db.Exec(duckDBInit(dir))
	require.NoError(t, err)
	// The query the README shows.
	rows, err := db.Query(`SELECT labels['team'] AS team, sum(total_tokens) FROM api_calls GROUP BY team`)
	require.NoError(t, err)
	got := map[string]int64{}
	for rows.Next() {
		var team sql.NullString
		var n int64
		require.NoError(t, rows.Scan(&team, &n))
		got[team.String] = n
	}
	require.NoError(t, rows.Err())
	require.Equal(t, want, got)
}

// The labels column does not depend on the order of a map: the same
// entries give the same bytes.
func TestWriter_LabelsDeterministic(t *testing.T) {
	var sums []string
	for range 3 {
		dir := t.TempDir()
		entries := sessionsEntries(50)
		for i := range entries {
			entries[i].Labels = map[string]string{"a": "1", "b": "2", "c": "3", "d": "4", "e": "5", "f": "6"}
		}
		writeAll(t, mustWriter(t, parquet.Config{Dir: dir}), entries)
		m, err := parquet.ReadManifest(dir)
		require.NoError(t, err)
		require.Len(t, m.Files, 1)
		sums = append(sums, m.Files[0].SHA256)
	}
	require.Equal(t, sums[0], sums[1])
	require.Equal(t, sums[0], sums[2])
}
