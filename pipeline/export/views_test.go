package export_test

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/export"
	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
)

// samples returns every transcript sample of the repository, by name:
// each file of testdata/corpus on its own, each format's directory and
// the whole corpus together, and each decoder case of pipeline/formats
// (the only samples of Fluux and m4dtimes).
func samples(tb testing.TB) map[string][]string {
	tb.Helper()
	root := repoRoot(tb)
	corpus := filepath.Join(root, "testdata", "corpus")
	out := map[string][]string{"corpus": {corpus}}
	found, err := formats.Walk([]string{corpus}, func(error) {})
	require.NoError(tb, err)
	for _, f := range found {
		rel, err := filepath.Rel(corpus, f.Path)
		require.NoError(tb, err)
		out["corpus/"+rel] = []string{f.Path}
	}
	dirs, err := os.ReadDir(corpus)
	require.NoError(tb, err)
	for _, d := range dirs {
		if d.IsDir() {
			out["corpus/"+d.Name()+"/"] = []string{filepath.Join(corpus, d.Name())}
		}
	}
	cases, err := filepath.Glob(filepath.Join(root, "pipeline", "formats", "*", "testdata", "*", "input.jsonl"))
	require.NoError(tb, err)
	for _, c := range cases {
		rel, err := filepath.Rel(filepath.Join(root, "pipeline", "formats"), filepath.Dir(c))
		require.NoError(tb, err)
		out["formats/"+rel] = []string{c}
	}
	return out
}

// TestDuckDBInit_Samples writes every sample as Parquet, runs the script
// and checks that the sessions view holds exactly what `sessionpipe
// sessions` computes on the same files: the same sessions in the same
// order, every counter, every token field and the cost to the last bit.
func TestDuckDBInit_Samples(t *testing.T) {
	all := samples(t)
	names := make([]string, 0, len(all))
	for name := range all {
		names = append(names, name)
	}
	sort.Strings(names)
	formatsSeen := map[string]bool{}
	var sessions, turns, tokens, calls int64
	var cost float64
	for _, name := range names {
		entries := offlineEntries(t, all[name]...)
		if len(entries) == 0 {
			continue // nothing valid in the case: no Parquet to read
		}
		want := goSessions(entries, price.Default())
		for _, s := range want {
			formatsSeen[string(s.Format)] = true
			sessions++
			turns += s.Turns
			tokens += s.TotalTokens
			calls += s.APICalls
			cost += s.CostUSD
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			exportTo(t, dir, entries, 1)
			db := openViews(t, export.DuckDBInit(dir))
			requireSameSessions(t, want, viewSessions(t, db))
		})
	}
	// The comparison covers every format and real numbers.
	require.Len(t, formatsSeen, 5, "formats: %v", formatsSeen)
	require.Greater(t, sessions, int64(100))
	require.Greater(t, turns, int64(100))
	require.Greater(t, calls, int64(1000))
	require.Greater(t, tokens, int64(10_000_000))
	require.Greater(t, cost, 10.0)
}
