package duckdb_test

import (
	"bufio"
	"cmp"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/corpusgen"
	"github.com/sessionpipe/sessionpipe/internal/testutil/opencodetest"
	"github.com/sessionpipe/sessionpipe/internal/testutil/testcorpus"
	"github.com/sessionpipe/sessionpipe/pipeline/export/duckdb"
	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/opencode"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
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
	docs, err := filepath.Glob(filepath.Join(root, "pipeline", "formats", "*", "testdata", "*", "input.json")) // whole-file documents
	require.NoError(tb, err)
	cases = append(cases, docs...)
	for _, c := range cases {
		rel, err := filepath.Rel(filepath.Join(root, "pipeline", "formats"), filepath.Dir(c))
		require.NoError(tb, err)
		out["formats/"+rel] = []string{c}
	}
	// Kilo's rows are read from its database only (they are OpenCode's
	// in their JSON form): its golden rows in a kilo.db.
	out["formats/kilo/db"] = []string{kiloDB(tb, filepath.Join(root, "pipeline", "formats", "kilo", "testdata", "session", "input.jsonl"))}
	// Hermes's rows are read from its state.db only: its golden rows
	// there, each session at its last version.
	hermes := filepath.Join(tb.TempDir(), "state.db")
	db := opencodetest.CreateHermes(tb, hermes)
	opencodetest.LoadHermesJSONL(tb, db, filepath.Join(root, "pipeline", "formats", "hermes", "testdata", "sessions", "input.jsonl"))
	require.NoError(tb, db.Close())
	out["formats/hermes/db"] = []string{hermes}
	return out
}

// kiloDB writes the rows of a golden case of the kilo package into a
// kilo.db (time_updated their ordinal) and returns its path.
func kiloDB(tb testing.TB, rowsFile string) string {
	tb.Helper()
	data, err := os.ReadFile(rowsFile)
	require.NoError(tb, err)
	path := filepath.Join(tb.TempDir(), "kilo.db")
	db := opencodetest.Create(tb, path)
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r opencode.Row
		require.NoError(tb, json.Unmarshal([]byte(line), &r))
		r.TimeCreated, r.TimeUpdated = int64(i+1), int64(i+1)
		db.Put(r)
	}
	db.Close()
	return path
}

// TestDuckDBInit_Samples writes every sample as Parquet, runs the script
// and checks that the sessions view holds exactly what `sessionpipe
// sessions` computes on the same files: the same sessions in the same
// order, every counter, every token field and the cost to the last bit.
//
// All samples go into one export, read by one run of the views (one per
// sample took most of this package's time): each sample is read as if
// by a host of its own, and its record, message and API call ids carry
// that host's name, so that no sample's records count in another's
// sessions (a record seen on two hosts counts once, on purpose). Each
// sample's sessions are then compared with what the Go aggregator makes
// of that sample alone.
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
	var union []schema.Entry
	wants := map[string][]index.Session{} // by sample, under its host
	hosts := map[string]string{}          // sample's host by name
	for i, name := range names {
		entries := offlineEntries(t, all[name]...)
		if len(entries) == 0 {
			continue // nothing valid in the case: no Parquet to read
		}
		host := fmt.Sprintf("test-host-%03d", i)
		isolateSample(entries, host)
		want := goSessions(entries, price.Default())
		for _, s := range want {
			formatsSeen[string(s.Format)] = true
			sessions++
			turns += s.Turns
			tokens += s.TotalTokens
			calls += s.APICalls
			cost += s.CostUSD
		}
		wants[name], hosts[name] = want, host
		union = append(union, entries...)
	}
	dir := t.TempDir()
	exportTo(t, dir, union, 1)
	db := openViews(t, duckDBInit(dir))
	byHost := map[string][]sessionRow{}
	for _, r := range viewSessions(t, db) {
		byHost[r.Host] = append(byHost[r.Host], r)
	}
	var withSessions, inViews []string // no session on a host of no sample, or of a sample without one
	for name, want := range wants {
		if len(want) > 0 {
			withSessions = append(withSessions, hosts[name])
		}
	}
	for host := range byHost {
		inViews = append(inViews, host)
	}
	require.ElementsMatch(t, withSessions, inViews, "hosts of the sessions view")
	for _, name := range names {
		want, ok := wants[name]
		if !ok {
			continue
		}
		t.Run(name, func(t *testing.T) {
			requireSameSessions(t, want, byHost[hosts[name]])
		})
	}
	// The comparison covers every format and real numbers.
	require.Len(t, formatsSeen, len(schema.Formats()), "formats: %v", formatsSeen)
	require.Greater(t, sessions, int64(100))
	require.Greater(t, turns, int64(100))
	require.Greater(t, calls, int64(1000))
	require.Greater(t, tokens, int64(10_000_000))
	require.Greater(t, cost, 10.0)
}

// isolateSample makes entries a sample of their own in an export shared
// with other samples: they are read on host, and their record, message
// and API call ids (which count once across hosts) are prefixed with it.
// Ids that are absent stay absent (an entry without a message id or a
// usage key counts differently); within the sample every id keeps its
// order and its equalities.
func isolateSample(entries []schema.Entry, host string) {
	prefix := host + "/"
	for i := range entries {
		e := &entries[i]
		e.Host = host
		e.EntryID = prefix + e.EntryID
		if e.MessageID != "" {
			e.MessageID = prefix + e.MessageID
		}
		if e.UsageKey != "" {
			e.UsageKey = prefix + e.UsageKey
		}
	}
}

// TestDuckDBInit_Generated compares the views with the Go aggregator on
// generated sessions of the three main formats with resumed and forked
// copies (corpusgen, a copy share of 20%), Claude Code's compaction and
// side-question replays, second compactions that re-append history and
// background copies (testcorpus): a record copied into another session
// counts once, in the session it was first written in.
func TestDuckDBInit_Generated(t *testing.T) {
	src := t.TempDir()
	st, err := corpusgen.WriteTree(t.Context(), corpusgen.TreeConfig{
		Dir: src, Format: corpusgen.MixMixed, Bytes: 2 << 20, Seed: 11, ResumeRate: 0.3,
		MinSessionBytes: 8 << 10, MaxSessionBytes: 32 << 10,
	})
	require.NoError(t, err)
	require.Positive(t, st.Resumed)
	require.Positive(t, testcorpus.WriteReplays(t, src))
	rep := testcorpus.WriteRepeats(t, src)
	require.Positive(t, rep.Compactions)
	require.NotEmpty(t, rep.Forks)
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
	db := openViews(t, duckDBInit(dir))
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
	db := openViews(t, duckDBInit(dir))

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
	script := duckDBInit(dir)
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
	db := openViews(t, duckDBInit(dir))

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

// TestDuckDBInit_PriceTable checks that the prices table holds every
// price of the Go table, base and dated, with exactly its resolved rates,
// its source and its lookup layer.
func TestDuckDBInit_PriceTable(t *testing.T) {
	table := price.Default()
	dir := t.TempDir()
	exportTo(t, dir, offlineEntries(t, filepath.Join(repoRoot(t), "testdata", "corpus", "codex")), 1)
	db := openViews(t, duckDBInit(dir))
	rows, err := db.Query(`SELECT model, valid_from, valid_until, source, layer, input, output, cache_read, cache_write_5m,
		cache_write_1h, fast, long_threshold, long_whole_request, long_input, long_output, long_cache_read,
		long_cache_write_5m, long_cache_write_1h FROM prices
		ORDER BY model, valid_from IS NOT NULL OR valid_until IS NOT NULL, valid_from NULLS FIRST`)
	require.NoError(t, err)
	defer rows.Close()
	var got []price.Price
	for rows.Next() {
		var p price.Price
		var from, until sql.NullTime
		l := &p.Long
		require.NoError(t, rows.Scan(&p.Model, &from, &until, &p.Source, &p.Layer, &p.Input, &p.Output, &p.CacheRead,
			&p.CacheWrite5m, &p.CacheWrite1h, &p.Fast, &l.Threshold, &l.WholeRequest, &l.Input, &l.Output, &l.CacheRead,
			&l.CacheWrite5m, &l.CacheWrite1h))
		if from.Valid {
			p.ValidFrom = from.Time.UTC()
		}
		if until.Valid {
			p.ValidUntil = until.Time.UTC()
		}
		got = append(got, p)
	}
	require.NoError(t, rows.Err())
	want := table.Prices()
	require.Len(t, got, len(want))
	var dated, md int
	for i := range want {
		require.Equal(t, want[i], got[i], "price %d, model %s", i, want[i].Model) // float64s bit for bit
		if !want[i].ValidFrom.IsZero() || !want[i].ValidUntil.IsZero() {
			dated++
		}
		if want[i].Source == price.SourceModelsDev {
			md++
		}
	}
	require.Greater(t, dated, 5)
	require.Greater(t, md, 2000)
}

// ccusageCase is one line of pipeline/price/testdata/ccusage-20.0.24.jsonl:
// a model name spelled as logs spell it, with one call's usage.
type ccusageCase struct {
	Model string       `json:"model"`
	Usage schema.Usage `json:"usage"`
	Fast  bool         `json:"fast"`
}

// pricedEntries returns one session with one API call per ccusage case
// of the price package (every embedded model below and above its tiers,
// the usual spellings, unknown names, fast mode), per spelling that
// price.Table.Lookup resolves step by step, and per recorded cost.
func pricedEntries(tb testing.TB) []schema.Entry {
	tb.Helper()
	f, err := os.Open(filepath.Join(repoRoot(tb), "pipeline", "price", "testdata", "ccusage-20.0.24.jsonl"))
	require.NoError(tb, err)
	defer f.Close()
	var cases []ccusageCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c ccusageCase
		require.NoError(tb, json.Unmarshal(sc.Bytes(), &c))
		if c.Fast {
			c.Usage.Speed = "fast"
		}
		cases = append(cases, c)
	}
	require.NoError(tb, sc.Err())
	require.Greater(tb, len(cases), 800)

	big := schema.Usage{Input: 250_001, Output: 300_000, CacheRead: 400_000, CacheWrite: 430_000, CacheWrite5m: 210_000, CacheWrite1h: 220_000}
	small := schema.Usage{Input: 1234, Output: 5678, CacheRead: 91011, CacheWrite: 1213}
	for _, m := range []string{
		"Claude-Sonnet-4.5[1m]", "claude-opus-4-6[1m]", "[x]", "anthropic/claude-opus-4-5", "openrouter/anthropic/claude-haiku-4-5",
		"vertex_ai/claude-sonnet-4-5@20250929", "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
		"apac.anthropic.claude-sonnet-4-20250514-v1:0", "anthropic.claude-haiku-4-5-20251001-v1:0",
		"bedrock/us.anthropic.claude-opus-4-1-20250805-v1:0", "global.anthropic.claude-opus-4-6-v1",
		"anthropic.claude-sonnet-4-5-v2:0", "eu.anthropic.claude-sonnet-4-6-v1", "gpt-5.3-spark", "GPT-5.3-Spark",
		"claude-haiku-4-5-20991231", "claude-haiku-4-5-2099-12-31", "openai/gpt-5.4", "OPENAI/GPT-5.4",
		"openai/openai/", "openai/", "<synthetic>", strings.Repeat("claude-opus-4-5", 20), "qwen3.5:9b",
		"gpt-5.4", "gpt-5.5", "claude-sonnet-4-5", "K-unicode-Ｋ",
	} {
		for _, u := range []schema.Usage{small, big, {Input: 100_000, CacheRead: 180_000, Output: 10}} {
			cases = append(cases, ccusageCase{Model: m, Usage: u})
			u.Speed = "fast"
			cases = append(cases, ccusageCase{Model: m, Usage: u})
		}
	}
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var entries []schema.Entry
	for i, c := range cases {
		u := c.Usage
		entries = append(entries, schema.Entry{
			Format: schema.FormatClaudeCode, Host: "h", Path: "/p/" + strconv.Itoa(i) + ".jsonl", Line: 1,
			SessionID: fmt.Sprintf("s%04d", i), EntryID: "e", TS: t0.Add(time.Duration(i) * time.Second),
			Kind: schema.KindMessage, Role: schema.RoleAssistant, Model: c.Model, MessageID: "m",
			Usage: &u, UsageKey: fmt.Sprintf("u%04d", i),
		})
	}
	for i, cost := range []float64{0.1234567891, 0.0000000004, 0.0000000005, 0, -1, 1e-3} {
		u := small
		entries = append(entries, schema.Entry{
			Format: schema.FormatPi, Host: "h", Path: "/pi.jsonl", Line: int64(i + 1),
			SessionID: "pi", EntryID: fmt.Sprintf("r%d", i), TS: t0.Add(time.Duration(i) * time.Minute),
			Kind: schema.KindMessage, Role: schema.RoleAssistant, Model: "claude-opus-4-5",
			Usage: &u, UsageKey: fmt.Sprintf("pi-%d", i), CostUSD: &cost,
		})
	}
	// Calls through the providers people run, at the times the dated
	// rows change, local runtimes, recorded zeros.
	zero := 0.0
	for i, c := range []struct {
		model, provider string
		ts              time.Time
		speed           string
		recorded        *float64
	}{
		{"MiniMax-M2.1", "minimax", t0, "", nil},
		{"MiniMax-M2.1", "minimax", time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC), "", &zero},
		{"minimax-m2.1", "anthropic", t0, "", nil},
		{"glm-4.7", "zai", t0, "", nil},
		{"GLM-4.7", "zai", t0, "", &zero},
		{"kimi-k2.5", "moonshot", t0, "", nil},
		{"qwen3-coder-plus", "qwen-portal", t0, "", nil},
		{"MiniMax-M3", "minimax", t0, "", nil},
		{"deepseek-chat", "deepseek", time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), "", nil},
		{"deepseek-chat", "deepseek", time.Date(2025, 2, 8, 16, 0, 0, 0, time.UTC), "", nil},
		{"deepseek-chat", "deepseek", time.Date(2025, 2, 8, 15, 59, 59, 999_999_000, time.UTC), "", nil},
		{"deepseek-chat", "deepseek", time.Date(2025, 9, 5, 16, 0, 0, 0, time.UTC), "", nil},
		{"deepseek-chat", "deepseek", time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC), "", nil},
		{"deepseek-chat", "deepseek", time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), "", nil},
		{"deepseek-reasoner", "deepseek", time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC), "", nil},
		{"deepseek-chat", "deepseek", time.Time{}, "", nil},
		{"deepseek-chat", "deepseek", time.Unix(0, 0).UTC(), "", nil},
		{"deepseek-chat", "deepseek", time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC), "", nil},
		{"claude-opus-4-7", "anthropic", time.Date(2026, 7, 23, 23, 59, 59, 0, time.UTC), "fast", nil},
		{"claude-opus-4-7", "anthropic", time.Date(2026, 7, 24, 0, 0, 0, 0, time.UTC), "fast", nil},
		{"claude-opus-4-5", "anthropic", time.Date(2026, 5, 1, 12, 0, 29, 0, time.UTC), "fast", nil},
		{"claude-opus-4-5", "anthropic", time.Date(2026, 5, 1, 12, 5, 0, 0, time.UTC), "", nil},
		{"claude-opus-4-5", "anthropic", time.Date(2026, 5, 1, 12, 5, 0, 1000, time.UTC), "", nil},
		{"qwen3-coder:30b", "ollama", t0, "", nil},
		{"qwen3.5-9b", "Ollama", t0, "", &zero},
		{"gpt-oss:120b-cloud", "ollama", t0, "", nil},
		{"qwen3-coder:480b-cloud", "OLLAMA", t0, "", nil},
		{"", "lmstudio", t0, "", nil},
		{"qwen3.5:9b", "", t0, "", nil},
		{"qwen3.5:9b", "llama.cpp", t0, "", nil},
		{"<synthetic>", "ollama", t0, "", nil},
	} {
		for j, u := range []schema.Usage{small, big} {
			u.Speed = c.speed
			entries = append(entries, schema.Entry{
				Format: schema.FormatPi, Host: "h", Path: "/providers.jsonl", Line: int64(2*i + j + 1),
				SessionID: fmt.Sprintf("p%02d", i), EntryID: fmt.Sprintf("p%d-%d", i, j), TS: c.ts,
				Kind: schema.KindMessage, Role: schema.RoleAssistant, Model: c.model, Provider: c.provider,
				Usage: &u, UsageKey: fmt.Sprintf("prov-%d-%d", i, j), CostUSD: c.recorded,
			})
		}
	}
	return entries
}

// TestDuckDBInit_Cost checks the SQL cost of every priced case against
// the Go aggregator's, to the nano-dollar per call, and the unpriced
// ones against its unpriced counts.
func TestDuckDBInit_Cost(t *testing.T) {
	bySource := requireSameCosts(t, price.Default(), pricedEntries(t))
	for _, src := range []string{price.SourceRecorded, price.SourceLocal, price.SourceLiteLLM, price.SourceModelsDev} {
		require.Positive(t, bySource[src], "calls priced from %s", src)
	}
}

// TestDuckDBInit_CostOverride checks the views priced with a table that a
// price file overrides, with dated periods: each call at its own time,
// the override's price before a recorded cost, to the nano-dollar.
func TestDuckDBInit_CostOverride(t *testing.T) {
	override, err := price.Load(strings.NewReader(`{
  "claude-opus-4-5": {"input_cost_per_token": 4e-6, "periods": [
    {"valid_until": "2026-05-01T12:00:30Z", "input_cost_per_token": 1e-5, "provider_specific_entry": {"fast": 3}},
    {"valid_from": "2026-05-01T12:05:00.000001Z", "valid_until": "2026-05-01T12:10:00Z", "output_cost_per_token": 1e-4}]},
  "MiniMax-M2.1": {"periods": [{"valid_from": "2025-01-01", "valid_until": "2026-01-01", "input_cost_per_token": 9e-7}]},
  "qwen3.5:9b": {"cost": {"input": 0.01, "output": 0.02}}
}`))
	require.NoError(t, err)
	bySource := requireSameCosts(t, price.Default().Merge(override), pricedEntries(t))
	require.Greater(t, bySource[price.SourceOverride], 30)
	require.Positive(t, bySource[price.SourceLocal])
}

// requireSameCosts exports entries, runs the views with table embedded
// and checks sessions, and every call's cost and price source, against
// the Go aggregator with the same table.
func requireSameCosts(t *testing.T, table *price.Table, entries []schema.Entry) (bySource map[string]int) {
	t.Helper()
	want := goSessions(entries, table)
	dir := t.TempDir()
	exportTo(t, dir, entries, 1)
	db := openViews(t, duckdb.DuckDBScript(duckdb.ViewConfig{Dir: dir, Prices: table}))
	requireSameSessions(t, want, viewSessions(t, db))

	// Per call: the Go price of the call, rounded as the aggregator
	// rounds it, against the view's.
	rows, err := db.Query("SELECT usage_key, cost_nano_usd, price_model, price_source FROM api_calls")
	require.NoError(t, err)
	defer rows.Close()
	got := map[string]sql.NullInt64{}
	resolved := map[string]string{}
	sources := map[string]string{}
	bySource = map[string]int{}
	for rows.Next() {
		var k string
		var nano sql.NullInt64
		var pm, ps sql.NullString
		require.NoError(t, rows.Scan(&k, &nano, &pm, &ps))
		got[k], resolved[k], sources[k] = nano, pm.String, ps.String
	}
	require.NoError(t, rows.Err())
	var priced, unpriced, tiered int
	for i := range entries {
		e := &entries[i]
		n, ok := got[e.UsageKey]
		require.True(t, ok, "call %s", e.UsageKey)
		usd, src, isPriced := table.PriceEntry(e)
		require.Equal(t, isPriced, n.Valid, "%q priced", e.Model)
		require.Equal(t, src, sources[e.UsageKey], "%q %s price source", e.Model, e.TS)
		if !isPriced {
			unpriced++
			continue
		}
		require.Equal(t, nanoUSD(usd), n.Int64, "%q %s %+v", e.Model, e.TS, *e.Usage)
		bySource[src]++
		if src == price.SourceRecorded || src == price.SourceLocal {
			continue
		}
		p, _ := table.Lookup(e.Model)
		require.Equal(t, p.Model, resolved[e.UsageKey], "%q resolves to its row", e.Model)
		priced++
		if p.Long.Threshold > 0 && e.Usage.Total() > p.Long.Threshold {
			tiered++
		}
	}
	require.Greater(t, priced, 800)
	require.Greater(t, unpriced, 10)
	require.Greater(t, tiered, 100)
	return bySource
}

// nanoUSD is index.nanoUSD: a cost in dollars as whole nano-dollars.
func nanoUSD(usd float64) int64 {
	switch {
	case math.IsNaN(usd) || usd <= 0:
		return 0
	case usd >= math.MaxInt64/1e9:
		return math.MaxInt64
	}
	return int64(math.Round(usd * 1e9))
}

// TestDuckDBInit_Attribution builds the cases where the aggregator's
// order-independent rules decide which session counts a shared call or
// entry, and checks the views decide alike.
func TestDuckDBInit_Attribution(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	usage := func(n int64) *schema.Usage { return &schema.Usage{Input: n, Output: 10} }
	var entries []schema.Entry
	add := func(e schema.Entry) {
		e.Format, e.Host = schema.FormatPi, "h"
		if e.Path == "" {
			e.Path = "/s/" + e.SessionID + ".jsonl"
		}
		e.Line = int64(len(entries) + 1)
		if e.Kind == "" {
			e.Kind = schema.KindMessage
		}
		if e.Model == "" && e.Usage != nil {
			e.Model = "claude-opus-4-5"
		}
		entries = append(entries, e)
	}
	// parent and child have the same creation time; the child ends first.
	// A call both hold with the same total at the same time counts in the
	// parent (createdBefore's parent rule), not in the session that
	// ended first.
	add(schema.Entry{SessionID: "parent", EntryID: "h", Kind: schema.KindSession, TS: at(0)})
	add(schema.Entry{SessionID: "parent", EntryID: "u1", Role: schema.RoleUser, Text: "hi", TS: at(1)})
	add(schema.Entry{SessionID: "parent", EntryID: "a1", Role: schema.RoleAssistant, TS: at(2), Usage: usage(100), UsageKey: "shared"})
	add(schema.Entry{SessionID: "parent", EntryID: "a2", Role: schema.RoleAssistant, TS: at(30), Usage: usage(5), UsageKey: "p-late"})
	add(schema.Entry{SessionID: "child", EntryID: "h", Kind: schema.KindSession, TS: at(0), ParentSessionID: "parent"})
	add(schema.Entry{SessionID: "child", EntryID: "u1", Role: schema.RoleUser, Text: "hi", TS: at(1)})
	add(schema.Entry{SessionID: "child", EntryID: "a1", Role: schema.RoleAssistant, TS: at(2), Usage: usage(100), UsageKey: "shared"})
	// The larger total wins whatever the session: a streamed response
	// written again, complete, in the child.
	add(schema.Entry{SessionID: "parent", EntryID: "a3", Role: schema.RoleAssistant, TS: at(3), Usage: usage(50), UsageKey: "grown"})
	add(schema.Entry{SessionID: "child", EntryID: "a3", Role: schema.RoleAssistant, TS: at(3), Usage: usage(70), UsageKey: "grown"})
	// A sidechain replay ranks after the main transcript, even earlier.
	add(schema.Entry{SessionID: "other", EntryID: "u1", Role: schema.RoleUser, Text: "x", TS: at(4)})
	add(schema.Entry{SessionID: "other", EntryID: "a1", Role: schema.RoleAssistant, TS: at(5), Usage: usage(40), UsageKey: "side"})
	add(schema.Entry{SessionID: "child", EntryID: "s1", Role: schema.RoleAssistant, TS: at(4), Usage: usage(40), UsageKey: "side",
		Sidechain: true, AgentID: "agent-1", Path: "/s/child/agent-1.jsonl"})
	// A copy counts nothing, even when it is earlier.
	add(schema.Entry{SessionID: "other", EntryID: "c1", Role: schema.RoleAssistant, TS: at(0), Usage: usage(500), UsageKey: "copied", Copy: true})
	add(schema.Entry{SessionID: "child", EntryID: "c1", Role: schema.RoleAssistant, TS: at(6), Usage: usage(500), UsageKey: "copied"})
	// Two user inputs in a row are one turn; a tool error counts once.
	add(schema.Entry{SessionID: "other", EntryID: "u2", Role: schema.RoleUser, Text: "a", TS: at(7)})
	add(schema.Entry{SessionID: "other", EntryID: "u3", Role: schema.RoleUser, Text: "b", TS: at(8),
		ToolResults: []schema.ToolResult{{ToolCallID: "t", IsError: true}}})

	want := goSessions(entries, price.Default())
	dir := t.TempDir()
	exportTo(t, dir, entries, 1)
	db := openViews(t, duckDBInit(dir))
	requireSameSessions(t, want, viewSessions(t, db))

	owner := map[string]string{}
	rows, err := db.Query("SELECT usage_key, session_id FROM api_calls")
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var k, s string
		require.NoError(t, rows.Scan(&k, &s))
		owner[k] = s
	}
	require.NoError(t, rows.Err())
	require.Equal(t, map[string]string{"shared": "parent", "p-late": "parent", "grown": "child", "side": "other", "copied": "child"}, owner)
	var turns int64
	scalar(t, db, "SELECT turns FROM sessions WHERE session_id = 'other'", &turns)
	require.Equal(t, int64(2), turns)
}

// docQueries returns the ```sql blocks of docs/duckdb.md by their first
// line, a "-- name" comment.
func docQueries(tb testing.TB) map[string]string {
	tb.Helper()
	doc, err := os.ReadFile(filepath.Join(repoRoot(tb), "docs", "duckdb.md"))
	require.NoError(tb, err)
	out := map[string]string{}
	for _, m := range regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllStringSubmatch(string(doc), -1) {
		name, _, ok := strings.Cut(m[1], "\n")
		require.True(tb, ok && strings.HasPrefix(name, "-- "), "query without a name: %q", m[1])
		out[strings.TrimPrefix(name, "-- ")] = m[1]
	}
	return out
}

// TestDuckDBInit_DocQueries runs the example queries of docs/duckdb.md
// on the corpus and checks their results against the Go aggregates and
// the entries, so that the document cannot go stale.
func TestDuckDBInit_DocQueries(t *testing.T) {
	queries := docQueries(t)
	require.Len(t, queries, 3)
	entries := offlineEntries(t, filepath.Join(repoRoot(t), "testdata", "corpus"))
	want := goSessions(entries, price.Default())
	dir := t.TempDir()
	exportTo(t, dir, entries, 1)
	db := openViews(t, duckDBInit(dir))

	t.Run("SpendByModelPerDay", func(t *testing.T) {
		q := queries["Spend by model per day"]
		require.NotEmpty(t, q)
		var calls, tokens, unpriced int64
		require.NoError(t, db.QueryRow("SELECT sum(calls)::BIGINT, sum(tokens)::BIGINT, sum(unpriced_calls)::BIGINT FROM ("+strings.TrimSuffix(strings.TrimSpace(q), ";")+")").Scan(&calls, &tokens, &unpriced))
		var goCalls, goTokens, goUnpriced int64
		for _, s := range want {
			goCalls += s.APICalls
			goTokens += s.TotalTokens
			goUnpriced += s.UnpricedCalls
		}
		require.Equal(t, goCalls, calls)
		require.Equal(t, goTokens, tokens)
		require.Equal(t, goUnpriced, unpriced)
		var days int64
		scalar(t, db, "SELECT count(DISTINCT date) FROM ("+strings.TrimSuffix(strings.TrimSpace(q), ";")+")", &days)
		require.Greater(t, days, int64(3))
	})

	t.Run("CostliestSessions", func(t *testing.T) {
		rows, err := db.Query(queries["The costliest sessions"])
		require.NoError(t, err)
		defer rows.Close()
		var got []string
		var costs []float64
		for rows.Next() {
			var id, format string
			var cwd sql.NullString
			var first sql.NullTime
			var turns, calls, tokens int64
			var cost float64
			var models any
			require.NoError(t, rows.Scan(&id, &format, &cwd, &first, &turns, &calls, &tokens, &cost, &models))
			got = append(got, id)
			costs = append(costs, cost)
		}
		require.NoError(t, rows.Err())
		byCost := slices.Clone(want)
		slices.SortStableFunc(byCost, func(x, y index.Session) int {
			if c := cmp.Compare(y.CostUSD, x.CostUSD); c != 0 {
				return c
			}
			return cmp.Compare(x.SessionID, y.SessionID)
		})
		var top []string
		for _, s := range byCost[:10] {
			top = append(top, s.SessionID)
		}
		require.Equal(t, top, got)
		require.InDelta(t, byCost[0].CostUSD, costs[0], 0.00005)
		require.Greater(t, costs[0], 1.0)
	})

	t.Run("ToolErrorRates", func(t *testing.T) {
		// The same join in Go: results of non-copies with the call they
		// answer in their session.
		type callKey struct{ format, session, id string }
		names := map[callKey]string{}
		for i := range entries {
			e := &entries[i]
			for _, c := range e.ToolCalls {
				if !e.Copy && e.SessionID != "" {
					names[callKey{string(e.Format), e.SessionID, c.ID}] = c.Name
				}
			}
		}
		type rate struct{ results, errors int64 }
		wantRates := map[string]rate{}
		for i := range entries {
			e := &entries[i]
			for _, r := range e.ToolResults {
				if e.Copy || e.SessionID == "" {
					continue
				}
				name, ok := names[callKey{string(e.Format), e.SessionID, r.ToolCallID}]
				if !ok {
					continue
				}
				x := wantRates[name]
				x.results++
				if r.IsError {
					x.errors++
				}
				wantRates[name] = x
			}
		}
		rows, err := db.Query(queries["Tool error rates"])
		require.NoError(t, err)
		defer rows.Close()
		got := map[string]rate{}
		var errs int64
		for rows.Next() {
			var tool string
			var x rate
			var pct float64
			require.NoError(t, rows.Scan(&tool, &x.results, &x.errors, &pct))
			require.InDelta(t, 100*float64(x.errors)/float64(x.results), pct, 0.05)
			got[tool] = x
			errs += x.errors
		}
		require.NoError(t, rows.Err())
		require.Equal(t, wantRates, got)
		require.Greater(t, len(got), 5)
		require.Positive(t, errs)
	})
}

// TestDuckDBInit_NoParquet: over a directory without Parquet, the glob
// script is refused by DuckDB ("No files found"), and the script for an
// empty output (ViewConfig.Empty, what `sessionpipe duckdb` prints for a
// fresh data directory) defines every view over no rows, with the very
// columns and types the views have over files.
func TestDuckDBInit_NoParquet(t *testing.T) {
	db := openDuckDB(t)
	db.SetMaxOpenConns(1)
	_, err := db.Exec(duckDBInit(t.TempDir()))
	require.ErrorContains(t, err, "No files found")
	var n int64
	scalar(t, db, "SELECT count(*) FROM prices", &n)
	require.Equal(t, int64(len(price.Default().Prices())), n, "the statements before the views ran")

	describe := func(db *sql.DB, view string) []string {
		rows, err := db.Query("SELECT column_name || ' ' || column_type FROM (DESCRIBE " + view + ")")
		require.NoError(t, err)
		defer rows.Close()
		var cols []string
		for rows.Next() {
			var c string
			require.NoError(t, rows.Scan(&c))
			cols = append(cols, c)
		}
		require.NoError(t, rows.Err())
		return cols
	}
	empty := openViews(t, duckdb.DuckDBScript(duckdb.ViewConfig{Dir: t.TempDir(), Empty: true}))
	dir := t.TempDir()
	exportTo(t, dir, offlineEntries(t, filepath.Join(repoRoot(t), "testdata", "corpus", "codex")), 1)
	full := openViews(t, duckDBInit(dir))
	for _, view := range []string{"entry_copies", "entries", "api_calls", "sessions"} {
		want := describe(full, view)
		require.NotEmpty(t, want)
		require.Equal(t, want, describe(empty, view), view)
		scalar(t, empty, "SELECT count(*) FROM "+view, &n)
		require.Zero(t, n, view)
	}
}

// TestDuckDBScript_EmptyPriceTable checks that a table that prices
// nothing gives a script whose calls are all unpriced, never $0.
func TestDuckDBScript_EmptyPriceTable(t *testing.T) {
	dir := t.TempDir()
	exportTo(t, dir, offlineEntries(t, filepath.Join(repoRoot(t), "testdata", "corpus", "codex")), 1)
	db := openViews(t, duckdb.DuckDBScript(duckdb.ViewConfig{Dir: dir, Prices: new(price.Table)}))
	var n, priced int64
	scalar(t, db, "SELECT count(*) FROM prices", &n)
	require.Zero(t, n)
	scalar(t, db, "SELECT count(*) FILTER (WHERE NOT unpriced) FROM api_calls", &priced)
	require.Zero(t, priced)
	scalar(t, db, "SELECT count(*) FROM api_calls", &n)
	require.Positive(t, n)
}

// A session is identified by agent, host and id in the views as in the
// Go aggregator: a Claude Code and a Codex session share an id, two hosts
// share a Claude Code session id, and an m4dtimes file (ids unique only
// within a host, as are its record ids) is on both hosts: every session
// is listed on its own and counted as offline.
func TestDuckDBInit_SessionIdentity(t *testing.T) {
	const root = "../../index/testdata/identity"
	onHost := func(host string, paths ...string) []schema.Entry {
		entries := offlineEntries(t, paths...)
		for i := range entries {
			entries[i].Host = host
		}
		return entries
	}
	entries := append(onHost("host-a", root+"/a"), onHost("host-b", root+"/b")...)
	want := goSessions(entries, price.Default())
	keys := map[string]int{}
	for _, s := range want {
		keys[string(s.Format)+"/"+s.SessionID]++
	}
	require.Equal(t, 2, keys["claude-code/session-alpha"], "one per host")
	require.Equal(t, 2, keys["m4dtimes/12345"], "one per host")
	require.Equal(t, 1, keys["codex/session-alpha"])

	dir := t.TempDir()
	exportTo(t, dir, entries, 1)
	db := openViews(t, duckDBInit(dir))
	requireSameSessions(t, want, viewSessions(t, db))
}
