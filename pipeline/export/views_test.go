package export_test

import (
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/benchmarks/corpusgen"
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

// TestDuckDBInit_Generated compares the views with the Go aggregator on
// generated sessions of the three main formats with resumed and forked
// copies (corpusgen, a copy share of 20%): a record copied into another
// session counts once, in the session it was first written in.
func TestDuckDBInit_Generated(t *testing.T) {
	src := t.TempDir()
	st, err := corpusgen.WriteTree(t.Context(), corpusgen.TreeConfig{
		Dir: src, Format: corpusgen.MixMixed, Bytes: 2 << 20, Seed: 11, ResumeRate: 0.3,
		MinSessionBytes: 8 << 10, MaxSessionBytes: 32 << 10,
	})
	require.NoError(t, err)
	require.Positive(t, st.Resumed)
	entries := offlineEntries(t, src)
	// Resumed sessions repeat records of the sessions they resume: the
	// same entry in several sessions, counted once.
	sessionsOf := map[string]map[string]bool{}
	for i := range entries {
		e := &entries[i]
		id := string(e.Format) + "/" + e.EntryID
		if sessionsOf[id] == nil {
			sessionsOf[id] = map[string]bool{}
		}
		sessionsOf[id][e.SessionID] = true
	}
	shared := 0
	for _, s := range sessionsOf {
		if len(s) > 1 {
			shared++
		}
	}
	require.Greater(t, shared, 100, "entries in several sessions")
	want := goSessions(entries, price.Default())
	dir := t.TempDir()
	exportTo(t, dir, entries, 1)
	db := openViews(t, export.DuckDBInit(dir))
	requireSameSessions(t, want, viewSessions(t, db))
}

// TestDuckDBInit_Duplicates writes every entry a second time, in other
// files under other sequences (a tailer's re-send past the duplicate
// window): the views do not change.
func TestDuckDBInit_Duplicates(t *testing.T) {
	entries := offlineEntries(t, filepath.Join(repoRoot(t), "testdata", "corpus"))
	want := goSessions(entries, price.Default())
	dir := t.TempDir()
	exportTo(t, dir, entries, 1)
	exportTo(t, dir, entries, uint64(len(entries))+1) // a second Writer: other files
	db := openViews(t, export.DuckDBInit(dir))

	var rows, keys, kept, maxSeq int64
	scalar(t, db, "SELECT count(*) FROM read_parquet('"+dir+"/**/*.parquet')", &rows)
	require.Equal(t, int64(2*len(entries)), rows, "every entry is in the files twice")
	scalar(t, db, "SELECT count(DISTINCT key) FROM read_parquet('"+dir+"/**/*.parquet')", &keys)
	scalar(t, db, "SELECT count(*) FROM entries", &kept)
	require.Equal(t, keys, kept, "entries holds one row per key")
	scalar(t, db, "SELECT max(seq) FROM entries", &maxSeq)
	require.LessOrEqual(t, maxSeq, int64(len(entries)), "the copy with the lowest seq is kept")
	var files int64
	scalar(t, db, "SELECT count(DISTINCT filename) FROM read_parquet('"+dir+"/**/*.parquet', filename = true)", &files)
	require.Greater(t, files, int64(1))

	requireSameSessions(t, want, viewSessions(t, db))
	var calls, goCalls int64
	scalar(t, db, "SELECT count(*) FROM api_calls", &calls)
	for _, s := range want {
		goCalls += s.APICalls
	}
	require.Equal(t, goCalls, calls)
}

// TestDuckDBInit_QuotedDir reads a directory whose name holds a quote,
// glob characters and a backslash.
func TestDuckDBInit_QuotedDir(t *testing.T) {
	entries := offlineEntries(t, filepath.Join(repoRoot(t), "testdata", "corpus", "codex"))
	want := goSessions(entries, price.Default())
	require.NotEmpty(t, want)
	dir := filepath.Join(t.TempDir(), `it's [a] *dir?\ "x"`)
	exportTo(t, dir, entries, 1)
	// Siblings that the glob characters would match if they were read as
	// a pattern, and one that the glob matches where dir has a backslash
	// (DuckDB's glob cannot match one literally): their rows must not be
	// read.
	for _, sibling := range []string{`it's a dir\ "x"`, `it's [a] *dir?X "x"`} {
		exportTo(t, filepath.Join(filepath.Dir(dir), sibling), entries[:1], 1)
	}
	script := export.DuckDBInit(dir)
	require.True(t, strings.Contains(script, `/it''s [[]a] [*]dir[?]? "x"/**/*.parquet'`), "quoted and escaped")
	db := openViews(t, script)
	var n int64
	scalar(t, db, "SELECT count(*) FROM entries", &n)
	require.Equal(t, int64(len(entries)), n)
	requireSameSessions(t, want, viewSessions(t, db))
}

// TestDuckDBInit_APICalls checks that api_calls holds one row per
// usage_key with a non-zero total, the occurrence with the largest total,
// and that its sums are the sessions'.
func TestDuckDBInit_APICalls(t *testing.T) {
	entries := offlineEntries(t, filepath.Join(repoRoot(t), "testdata", "corpus"))
	want := goSessions(entries, price.Default())
	dir := t.TempDir()
	exportTo(t, dir, entries, 1)
	db := openViews(t, export.DuckDBInit(dir))

	// The usage keys the aggregator counts: non-copies with a non-zero
	// total, each with its largest total.
	largest := map[string]int64{}
	for i := range entries {
		e := &entries[i]
		if e.Copy || e.UsageKey == "" || e.Usage == nil || e.SessionID == "" {
			continue
		}
		if tot := e.Usage.Total(); tot > 0 && tot > largest[e.UsageKey] {
			largest[e.UsageKey] = tot
		}
	}
	require.Greater(t, len(largest), 1000)

	var rows, distinct int64
	scalar(t, db, "SELECT count(*) FROM api_calls", &rows)
	scalar(t, db, "SELECT count(DISTINCT usage_key) FROM api_calls", &distinct)
	require.Equal(t, int64(len(largest)), rows)
	require.Equal(t, rows, distinct, "one row per usage_key")

	got := map[string]int64{}
	r, err := db.Query("SELECT usage_key, total_tokens FROM api_calls")
	require.NoError(t, err)
	defer r.Close()
	for r.Next() {
		var k string
		var tot int64
		require.NoError(t, r.Scan(&k, &tot))
		got[k] = tot
	}
	require.NoError(t, r.Err())
	require.Equal(t, largest, got)

	var goCalls, goTokens, goNano int64
	for _, s := range want {
		goCalls += s.APICalls
		goTokens += s.TotalTokens
		goNano += int64(math.Round(s.CostUSD * 1e9))
	}
	var calls, tokens, nano int64
	scalar(t, db, "SELECT sum(api_calls)::BIGINT FROM sessions", &calls)
	scalar(t, db, "SELECT sum(total_tokens)::BIGINT FROM api_calls", &tokens)
	scalar(t, db, "SELECT sum(cost_nano_usd)::BIGINT FROM api_calls", &nano)
	require.Equal(t, goCalls, calls)
	require.Equal(t, goTokens, tokens)
	require.Equal(t, goNano, nano)
}
