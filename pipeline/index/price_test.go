package index_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/testutil/indextest"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
)

// pricedCalls returns one pi session with one API call per way a call
// gets its price: a cost the log recorded, a recorded 0 (no price), a
// local runtime, the LiteLLM rows, the models.dev rows, a dated period,
// and a model nobody prices.
func pricedCalls() []*schema.Entry {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	cost := func(c float64) *float64 { return &c }
	calls := []struct {
		model, provider string
		recorded        *float64
		ts              time.Time
	}{
		{"claude-opus-4-5", "anthropic", cost(0.25), t0},
		{"kimi-k2.5", "moonshot", cost(0), t0},
		{"qwen3-coder:30b", "ollama", nil, t0},
		{"claude-opus-4-5", "anthropic", nil, t0},
		{"MiniMax-M2.1", "minimax", nil, t0},
		{"deepseek-chat", "deepseek", nil, time.Date(2025, 1, 10, 0, 0, 0, 0, time.UTC)},
		{"qwen3.5:9b", "", nil, t0},
	}
	var out []*schema.Entry
	for i, c := range calls {
		out = append(out, &schema.Entry{
			Format: schema.FormatPi, Host: "h", Path: "/s.jsonl", Line: int64(i + 1), SessionID: "s",
			EntryID: "e" + string(rune('a'+i)), TS: c.ts.Add(time.Duration(i) * time.Second),
			Kind: schema.KindMessage, Role: schema.RoleAssistant, Model: c.model, Provider: c.provider,
			Usage: &schema.Usage{Input: 1_000_000}, UsageKey: "u" + string(rune('a'+i)), CostUSD: c.recorded,
		})
	}
	return out
}

// TestAggregator_PriceSources checks that a session splits its priced
// calls and cost by price source, that a recorded 0 is not a price, that
// a local call costs 0 by rule and that an unknown model stays unpriced.
func TestAggregator_PriceSources(t *testing.T) {
	t.Parallel()
	a := indextest.MustNew(t, index.Config{Pricer: price.Default()})
	for _, e := range pricedCalls() {
		a.Add(e)
	}
	all := a.Sessions()
	require.Len(t, all, 1)
	s := all[0]
	require.Equal(t, map[string]index.PriceSource{
		price.SourceRecorded:  {Calls: 1, CostUSD: 0.25},
		price.SourceLocal:     {Calls: 1, CostUSD: 0},
		price.SourceLiteLLM:   {Calls: 1, CostUSD: 5},
		price.SourceModelsDev: {Calls: 3, CostUSD: 0.6 + 0.3 + 0.14},
	}, s.PriceSources)
	require.Equal(t, int64(1), s.UnpricedCalls)
	require.Equal(t, []string{"qwen3.5:9b"}, s.UnpricedModels)
	require.InDelta(t, 0.25+5+0.6+0.3+0.14, s.CostUSD, 1e-9)
}

// TestIndexer_RepricesOnNewTable indexes calls with the embedded table,
// then restarts the indexer with a price file: the state is rebuilt from
// the stream and every call is repriced, with the override as its source;
// a restart with the same table rebuilds nothing.
func TestIndexer_RepricesOnNewTable(t *testing.T) {
	t.Parallel()
	js := indextest.NewStream(t, bus.StreamConfig{})
	last := indextest.Publish(t, js, pricedCalls())
	dir := t.TempDir()
	cfg := index.IndexerConfig{JS: js, Dir: dir, CommitInterval: 10 * time.Millisecond, Pricer: price.Default()}
	ix, stop := indextest.RunIndexer(t, cfg)
	indextest.WaitApplied(t, ix, last)
	before, err := ix.Sessions()
	require.NoError(t, err)
	require.Equal(t, offline(t, cfg.Pricer, pricedCalls()), before, "the indexer prices as sessions does")
	_, turns, err := ix.Session("s", schema.FormatPi, nil)
	require.NoError(t, err)
	require.Len(t, turns, 1, "calls before any input make one turn")
	require.Equal(t, map[string]int64{price.SourceRecorded: 1, price.SourceLocal: 1, price.SourceLiteLLM: 1,
		price.SourceModelsDev: 3}, turns[0].PriceSources)
	require.NoError(t, stop())

	override, err := price.Load(strings.NewReader(`{"MiniMax-M2.1": {"input_cost_per_token": 1e-6},
		"qwen3.5:9b": {"input_cost_per_token": 2e-6, "output_cost_per_token": 2e-6}}`))
	require.NoError(t, err)
	cfg.Pricer = price.Default().Merge(override)
	ix, stop = indextest.RunIndexer(t, cfg)
	indextest.WaitApplied(t, ix, last)
	after, err := ix.Sessions()
	require.NoError(t, err)
	require.Equal(t, uint64(1), ix.Stats().Reprices)
	require.Len(t, after, 1)
	require.InDelta(t, before[0].CostUSD-0.3+1+2, after[0].CostUSD, 1e-9)
	require.Zero(t, after[0].UnpricedCalls)
	require.Equal(t, index.PriceSource{Calls: 2, CostUSD: 3}, after[0].PriceSources[price.SourceOverride])
	require.Equal(t, offline(t, cfg.Pricer, pricedCalls()), after, "repriced as sessions --prices prices")
	require.NoError(t, stop())

	ix, stop = indextest.RunIndexer(t, cfg)
	indextest.WaitApplied(t, ix, last)
	require.Zero(t, ix.Stats().Reprices, "the same table reprices nothing")
	again, err := ix.Sessions()
	require.NoError(t, err)
	require.Equal(t, after, again)
	require.NoError(t, stop())
}

// TestIndexer_RepriceNeedsHistory checks that a new table does not
// discard a state whose first messages left the stream: its calls keep
// their costs, and new calls take the new table.
func TestIndexer_RepriceNeedsHistory(t *testing.T) {
	t.Parallel()
	js := indextest.NewStream(t, bus.StreamConfig{})
	calls := pricedCalls()
	last := indextest.Publish(t, js, calls[:4])
	dir := t.TempDir()
	cfg := index.IndexerConfig{JS: js, Dir: dir, CommitInterval: 10 * time.Millisecond, Pricer: price.Default()}
	ix, stop := indextest.RunIndexer(t, cfg)
	indextest.WaitApplied(t, ix, last)
	before, err := ix.Sessions()
	require.NoError(t, err)
	require.NoError(t, stop())

	s, err := js.Stream(t.Context(), bus.DefaultStream)
	require.NoError(t, err)
	require.NoError(t, s.Purge(t.Context()))
	last = indextest.Publish(t, js, calls[4:5])
	override, err := price.Load(strings.NewReader(`{"MiniMax-M2.1": {"input_cost_per_token": 1e-6},
		"claude-opus-4-5": {"input_cost_per_token": 1e-6}}`))
	require.NoError(t, err)
	cfg.Pricer = price.Default().Merge(override)
	ix, stop = indextest.RunIndexer(t, cfg)
	indextest.WaitApplied(t, ix, last)
	require.Zero(t, ix.Stats().Reprices)
	after, err := ix.Sessions()
	require.NoError(t, err)
	require.InDelta(t, before[0].CostUSD+1, after[0].CostUSD, 1e-9, "old calls keep their cost, the new one takes the new table")
	require.NoError(t, stop())
}

// offline aggregates entries in memory, as `sessionpipe sessions` does.
func offline(t *testing.T, p index.Pricer, entries []*schema.Entry) []index.Session {
	t.Helper()
	a := indextest.MustNew(t, index.Config{Pricer: p})
	for _, e := range entries {
		a.Add(e)
	}
	return a.Sessions()
}
