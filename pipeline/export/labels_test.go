package export_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/export"
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
	writeAll(t, mustWriter(t, export.Config{Dir: dir, RowGroupRows: 50}), entries)
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
		writeAll(t, mustWriter(t, export.Config{Dir: dir}), entries)
		m, err := export.ReadManifest(dir)
		require.NoError(t, err)
		require.Len(t, m.Files, 1)
		sums = append(sums, m.Files[0].SHA256)
	}
	require.Equal(t, sums[0], sums[1])
	require.Equal(t, sums[0], sums[2])
}
