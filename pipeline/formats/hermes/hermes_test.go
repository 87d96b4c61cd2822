package hermes_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/hermes"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
)

func parseRows(t *testing.T, rows ...string) []schema.Entry {
	t.Helper()
	return formattest.MustParse(t, hermes.New(parse.Config{Path: "/h/.hermes/state.db"}), rows...)
}

// A row is the session's totals so far: one meta entry (not a reply)
// whose key is the session's, so the row given again as it grows counts
// once, at its largest.
func TestParse_RowIsSessionTotal(t *testing.T) {
	es := parseRows(t,
		`{"id":"s1","model":"gpt-5","started_at":1750000000,"input_tokens":10,"output_tokens":1}`,
		`{"id":"s1","model":"gpt-5","started_at":1750000000,"input_tokens":50,"output_tokens":9}`)
	for _, e := range es {
		require.Equal(t, "hermes:s1", e.UsageKey)
		require.Equal(t, "session", e.EntryID)
		require.True(t, e.Meta)
		require.Equal(t, hermes.SubtypeSessionTotal, e.Subtype)
	}
	agg := index.NewAggregator(price.Default())
	for i := range es {
		agg.Add(&es[i])
	}
	ss := agg.Sessions()
	require.Len(t, ss, 1)
	require.Equal(t, [4]int64{50, 9, 1, 0}, [4]int64{ss[0].InputTokens, ss[0].OutputTokens, ss[0].APICalls, ss[0].AssistantMessages})
}

// Hermes's output holds the reasoning (CanonicalUsage: reasoning is
// telemetry): it is not added to the output again.
func TestParse_ReasoningWithinOutput(t *testing.T) {
	es := parseRows(t, `{"id":"s1","model":"gpt-5","started_at":1750000000,"input_tokens":100,"output_tokens":50,"cache_read_tokens":7,"cache_write_tokens":3,"reasoning_tokens":20}`)
	require.Equal(t, schema.Usage{Input: 100, Output: 50, CacheRead: 7, CacheWrite: 3, Reasoning: 20}, *es[0].Usage)
}

// The recorded cost is the actual one above 0, else the estimated one
// above 0, else none (priced from the table).
func TestParse_RecordedCost(t *testing.T) {
	es := parseRows(t,
		`{"id":"a","model":"gpt-5","started_at":1,"input_tokens":1,"estimated_cost_usd":0.1,"actual_cost_usd":0.3}`,
		`{"id":"b","model":"gpt-5","started_at":1,"input_tokens":1,"estimated_cost_usd":0.1,"actual_cost_usd":null}`,
		`{"id":"c","model":"gpt-5","started_at":1,"input_tokens":1,"estimated_cost_usd":0,"actual_cost_usd":0}`)
	require.InDelta(t, 0.3, *es[0].CostUSD, 0)
	require.InDelta(t, 0.1, *es[1].CostUSD, 0)
	require.Nil(t, es[2].CostUSD)
}

// Provider names are folded as ccusage folds them; without one, the
// model's name tells.
func TestParse_Provider(t *testing.T) {
	es := parseRows(t,
		`{"id":"a","model":"gpt-5.5","billing_provider":"openai-codex","started_at":1,"input_tokens":1}`,
		`{"id":"b","model":"claude-sonnet-4-5","started_at":1,"input_tokens":1}`,
		`{"id":"c","model":"gemini-2.5-pro","billing_provider":"Vertex_AI","started_at":1,"input_tokens":1}`,
		`{"id":"d","model":"hermes-4","started_at":1,"input_tokens":1}`)
	require.Equal(t, []string{"openai", "anthropic", "google", ""}, []string{es[0].Provider, es[1].Provider, es[2].Provider, es[3].Provider})
}

// The sessions golden case (the first session's row given twice, as it
// grew) through the aggregator. ccusage 20.0.24 (ccusage hermes session
// --json --offline, on a state.db holding these rows in their last state)
// gave the same input, output and cache columns: 5200/900/30050/2020,
// 800/120, 244075/10019/3339776; its totals add the reasoning (110, 3216)
// again. Its costs: 0.12 (actual) as here; 0.007 for the OpenRouter
// session, whose actual_cost_usd is NULL: ccusage reads the NULL as an
// actual 0 and prices from its table, where the estimated 0.07 is the
// recorded cost here.
func TestParse_SessionsAsCcusage(t *testing.T) {
	data := formattest.ReadFile(t, filepath.Join("testdata", "sessions", "input.jsonl"))
	entries, errs := formattest.ParseAll(t, hermes.New(parse.Config{Path: "state.db"}), data)
	require.Empty(t, errs)
	agg := index.NewAggregator(price.Default())
	for i := range entries {
		agg.Add(&entries[i])
	}
	got := map[string][5]int64{}
	cost := map[string]float64{}
	for _, s := range agg.Sessions() {
		got[s.SessionID] = [5]int64{s.InputTokens, s.OutputTokens, s.CacheReadTokens, s.CacheWriteTokens, s.APICalls}
		cost[s.SessionID] = s.CostUSD
	}
	require.Equal(t, map[string][5]int64{
		"20260519_101500_a1b2c3": {5200, 900, 30050, 2020, 1},
		"20260519_113000_d4e5f6": {800, 120, 0, 0, 1},
		"20260519_120000_g7h8i9": {244075, 10019, 3339776, 0, 1},
	}, got, "the rows without model or usage are no session")
	require.InDelta(t, 0.12, cost["20260519_101500_a1b2c3"], 1e-9)
	require.InDelta(t, 0.07, cost["20260519_113000_d4e5f6"], 1e-9)
	require.Greater(t, cost["20260519_120000_g7h8i9"], 0.0, "a recorded 0 is priced from the table")
}
