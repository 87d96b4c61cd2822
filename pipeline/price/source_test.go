package price_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
)

// million is one million tokens of uncached input.
var million = schema.Usage{Input: 1_000_000}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestTable_LookupAt_Periods checks that a call is priced at the period
// of its row that holds its own time, bounds included from and excluded
// until, and at the base price outside every period and without a time.
func TestTable_LookupAt_Periods(t *testing.T) {
	table := mustLoad(t, `{"m": {"input_cost_per_token": 3e-6, "output_cost_per_token": 4e-6,
  "periods": [
    {"valid_from": "2025-03-01", "valid_until": "2025-04-01T12:00:00Z", "input_cost_per_token": 2e-6},
    {"valid_until": "2025-02-01", "input_cost_per_token": 1e-6, "provider_specific_entry": {"fast": 2}}
  ]}}`)
	tests := []struct {
		name string
		ts   time.Time
		in   float64
		fast float64
	}{
		{"BeforeEverything", at("2024-01-01T00:00:00Z"), 1e-6, 2},
		{"LastInstantOfFirst", at("2025-02-01T00:00:00Z").Add(-time.Nanosecond), 1e-6, 2},
		{"UntilIsExclusive", at("2025-02-01T00:00:00Z"), 3e-6, 1},
		{"FromIsInclusive", at("2025-03-01T00:00:00Z"), 2e-6, 1},
		{"InsideSecond", at("2025-04-01T11:59:59Z"), 2e-6, 1},
		{"AfterAll", at("2025-04-01T12:00:00Z"), 3e-6, 1},
		{"NoTime", time.Time{}, 3e-6, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := table.LookupAt("M", tt.ts)
			require.True(t, ok)
			assert.InDelta(t, tt.in, p.Input, 0)
			assert.InDelta(t, 4e-6, p.Output, 0, "fields a period leaves out keep the row's")
			assert.InDelta(t, tt.in*0.1, p.CacheRead, 1e-20, "derived rates follow the period's input rate")
			assert.InDelta(t, tt.fast, p.Fast, 0)
			usd, src, ok := table.CostAt("m", tt.ts, schema.Usage{Input: 1000, Speed: "fast"})
			require.True(t, ok)
			assert.InDelta(t, 1000*tt.in*tt.fast, usd, 1e-15)
			assert.Equal(t, price.SourceOverride, src)
		})
	}
	base, _ := table.Lookup("m")
	assert.True(t, base.ValidFrom.IsZero() && base.ValidUntil.IsZero())
	all := table.Prices()
	require.Len(t, all, 3, "the base price and one per period")
	assert.Equal(t, at("2025-02-01T00:00:00Z"), all[1].ValidUntil, "periods in time order")
	assert.Equal(t, at("2025-03-01T00:00:00Z"), all[2].ValidFrom)
}

func TestLoad_PeriodErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		at   string // the error's offset is where this first occurs
	}{
		{"NoBounds", `{"m": {"periods": [{"input_cost_per_token": 1}]}}`, `{"input`},
		{"Reversed", `{"m": {"periods": [{"valid_from": "2025-02-01", "valid_until": "2025-01-01"}]}}`, `{"valid_from"`},
		{"Empty", `{"m": {"periods": [{"valid_from": "2025-02-01", "valid_until": "2025-02-01"}]}}`, `{"valid_from"`},
		{"NotATime", `{"m": {"periods": [{"valid_from": "yesterday"}]}}`, `"yesterday"`},
		{"NumberTime", `{"m": {"periods": [{"valid_until": 20250101}]}}`, `20250101`},
		{"Overlap", `{"m": {"periods": [{"valid_until": "2025-03-01"}, {"valid_from": "2025-02-01", "input_cost_per_token": 1}]}}`, `{"valid_from"`},
		{"TwoOpenEnds", `{"m": {"periods": [{"valid_from": "2025-03-01"}, {"valid_from": "2025-04-01"}]}}`, `{"valid_from": "2025-04`},
		{"Nested", `{"m": {"periods": [{"valid_from": "2025-03-01", "periods": []}]}}`, `[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := price.Load(strings.NewReader(tt.doc))
			require.ErrorIs(t, err, price.ErrPeriod)
			var de *schema.DecodeError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, int64(strings.Index(tt.doc, tt.at)), de.Offset, "offset of %v", err)
			assert.Contains(t, err.Error(), `model "m"`)
		})
	}
}

// TestLoad_ModelsDevShape reads rows shaped like models.dev's: rates per
// million tokens under "cost", a context tier from "tiers" (the smallest
// context one) or "context_over_200k", defaults as for LiteLLM rows.
func TestLoad_ModelsDevShape(t *testing.T) {
	table := mustLoad(t, `{
  "a": {"cost": {"input": 0.3, "output": 1.2}, "limit": {"context": 204800}},
  "b": {"cost": {"input": 2, "output": 8, "cache_read": 0.5, "cache_write": 0,
        "tiers": [{"input": 9, "tier": {"type": "context", "size": 900000}},
                  {"input": 4, "output": 16, "tier": {"type": "context", "size": 256000}},
                  {"input": 99, "tier": {"type": "batch", "size": 1}}]}},
  "c": {"cost": {"input": 1, "output": 2, "context_over_200k": {"input": 2, "cache_read": 0.2}}}
}`)
	a, ok := table.Lookup("a")
	require.True(t, ok)
	in := 0.3 / 1e6
	assert.Equal(t, price.Price{Model: "a", Input: in, Output: 1.2 / 1e6, CacheRead: in * 0.1, CacheWrite5m: in * 1.25,
		CacheWrite1h: in * 2, Fast: 1, Source: price.SourceOverride}, a)
	b, _ := table.Lookup("b")
	assert.InDelta(t, 0.5/1e6, b.CacheRead, 0)
	assert.Zero(t, b.CacheWrite5m, "an explicit 0 is a rate")
	assert.Equal(t, price.LongContext{Threshold: 256000, WholeRequest: true, Input: 4 / 1e6, Output: 16 / 1e6,
		CacheRead: 0.5 / 1e6, CacheWrite5m: 0, CacheWrite1h: 8 / 1e6}, b.Long, "the smallest context tier, whole request")
	usd, _ := table.Cost("b", schema.Usage{Input: 100_000, CacheRead: 156_001})
	assert.InDelta(t, 100_000*4/1e6+156_001*0.5/1e6, usd, 1e-12, "above the size every token takes the tier's rate")
	c, _ := table.Lookup("c")
	assert.Equal(t, int64(200_000), c.Long.Threshold)
	assert.InDelta(t, 2/1e6, c.Long.Output, 0, "a rate the tier leaves out stays at the base rate")
}

// TestDefault_ModelsDev checks that the models people run against
// Claude Code and OpenClaw are priced from the embedded models.dev
// snapshot, that the LiteLLM rows keep precedence, and that a local
// model's name is not priced by a lookalike row.
func TestDefault_ModelsDev(t *testing.T) {
	table := price.Default()
	for _, tt := range []struct {
		model, key string
		input      float64 // USD per million
	}{
		{"MiniMax-M2.1", "MiniMax-M2.1", 0.3},
		{"minimax-m2.1", "MiniMax-M2.1", 0.3},
		{"glm-4.7", "glm-4.7", 0.6},
		{"kimi-k2.5", "kimi-k2.5", 0.6},
		{"qwen3-coder-plus", "qwen3-coder-plus", 1},
		{"deepseek-reasoner", "deepseek-reasoner", 0.56},
		{"grok-code-fast-1", "grok-code-fast-1", 0.2},
		{"devstral-2512", "devstral-2512", 0.4},
	} {
		p, ok := table.Lookup(tt.model)
		if assert.True(t, ok, tt.model) {
			assert.Equal(t, tt.key, p.Model)
			assert.Equal(t, price.SourceModelsDev, p.Source, tt.model)
			assert.InDelta(t, tt.input/1e6, p.Input, 1e-18, tt.model)
		}
	}
	p, ok := table.Lookup("claude-sonnet-4.5")
	require.True(t, ok)
	assert.Equal(t, price.SourceLiteLLM, p.Source, "a name the LiteLLM rows price keeps their price")
	_, ok = table.Lookup("qwen3.5:9b")
	assert.False(t, ok, "an Ollama tag is not the hosted qwen3.5-9b")
	bySource := map[string]int{}
	for _, p := range table.Prices() {
		if p.ValidFrom.IsZero() && p.ValidUntil.IsZero() {
			bySource[p.Source]++
		}
	}
	t.Logf("models by source: %v", bySource)
	assert.Greater(t, bySource[price.SourceModelsDev], 2000)
}

// TestTable_PriceEntry checks the order of the sources of a call's price.
func TestTable_PriceEntry(t *testing.T) {
	table := price.Default().Merge(mustLoad(t, `{"glm-4.7": {"input_cost_per_token": 1e-6}}`))
	ts := at("2026-05-01T00:00:00Z")
	cost := func(c float64) *float64 { return &c }
	tests := []struct {
		name     string
		e        schema.Entry
		usd      float64
		source   string
		unpriced bool
	}{
		{"Override", schema.Entry{Model: "GLM-4.7", Provider: "zai", CostUSD: cost(0.5)}, 1, price.SourceOverride, false},
		{"OverrideBeforeLocal", schema.Entry{Model: "glm-4.7", Provider: "ollama"}, 1, price.SourceOverride, false},
		{"Recorded", schema.Entry{Model: "claude-opus-4-5", Provider: "anthropic", CostUSD: cost(0.25)}, 0.25, price.SourceRecorded, false},
		{"RecordedZeroIsNoPrice", schema.Entry{Model: "kimi-k2.5", Provider: "moonshot", CostUSD: cost(0)}, 0.6, price.SourceModelsDev, false},
		{"RecordedNegativeIsNoPrice", schema.Entry{Model: "claude-opus-4-5", CostUSD: cost(-1)}, 5, price.SourceLiteLLM, false},
		{"RecordedNaNIsNoPrice", schema.Entry{Model: "claude-opus-4-5", CostUSD: cost(math.NaN())}, 5, price.SourceLiteLLM, false},
		{"LocalByProvider", schema.Entry{Model: "qwen3-coder", Provider: "ollama", CostUSD: cost(0)}, 0, price.SourceLocal, false},
		{"LocalBeatsLookalike", schema.Entry{Model: "qwen3.5-9b", Provider: "LMStudio"}, 0, price.SourceLocal, false},
		{"OllamaCloudIsNotLocal", schema.Entry{Model: "qwen3-coder:480b-cloud", Provider: "ollama"}, 0, "", true},
		{"RecordedBeforeLocal", schema.Entry{Model: "x", Provider: "ollama", CostUSD: cost(0.01)}, 0.01, price.SourceRecorded, false},
		{"LiteLLM", schema.Entry{Model: "claude-opus-4-5"}, 5, price.SourceLiteLLM, false},
		{"ModelsDev", schema.Entry{Model: "MiniMax-M2.1", Provider: "minimax"}, 0.3, price.SourceModelsDev, false},
		{"UnknownUnpriced", schema.Entry{Model: "qwen3.5:9b"}, 0, "", true},
		{"SyntheticUnpriced", schema.Entry{Model: "<synthetic>", Provider: "ollama"}, 0, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.e
			e.TS = ts
			u := million
			e.Usage = &u
			usd, src, ok := table.PriceEntry(&e)
			assert.Equal(t, !tt.unpriced, ok)
			assert.Equal(t, tt.source, src)
			assert.InDelta(t, tt.usd, usd, 1e-12)
		})
	}
	_, _, ok := table.PriceEntry(&schema.Entry{Model: "claude-opus-4-5"})
	assert.False(t, ok, "an entry without usage is not a call")
}

// TestDefault_History checks the dated rows the embedded history lays
// over the snapshots (history.json, with the sources of every date).
func TestDefault_History(t *testing.T) {
	table := price.Default()
	for _, tt := range []struct {
		model, ts string
		in, out   float64 // USD per million
	}{
		{"deepseek-chat", "2025-01-15T00:00:00Z", 0.14, 0.28},
		{"deepseek-chat", "2025-02-08T16:00:00Z", 0.27, 1.10},
		{"deepseek-chat", "2025-09-05T15:59:59Z", 0.27, 1.10},
		{"deepseek-chat", "2025-09-05T16:00:00Z", 0.56, 1.68},
		{"deepseek-chat", "2025-10-01T00:00:00Z", 0.28, 0.42},
		{"deepseek-chat", "2026-10-01T00:00:00Z", 0.1, 0.425},
		{"deepseek-reasoner", "2025-03-01T00:00:00Z", 0.55, 2.19},
		{"deepseek-reasoner", "2025-11-01T00:00:00Z", 0.28, 0.42},
	} {
		p, ok := table.LookupAt(tt.model, at(tt.ts))
		require.True(t, ok)
		assert.InDelta(t, tt.in/1e6, p.Input, 1e-18, "%s at %s", tt.model, tt.ts)
		assert.InDelta(t, tt.out/1e6, p.Output, 1e-18, "%s at %s", tt.model, tt.ts)
		assert.Equal(t, price.SourceModelsDev, p.Source, "a period keeps its row's source")
	}
	fast := schema.Usage{Input: 1000, Speed: "fast"}
	before, _, _ := table.CostAt("claude-opus-4-7", at("2026-07-23T23:59:59Z"), fast)
	after, _, _ := table.CostAt("claude-opus-4-7", at("2026-07-24T00:00:00Z"), fast)
	assert.InDelta(t, 6*after, before, 1e-15, "fast mode for Opus 4.7 was removed on 2026-07-24")
	assert.InDelta(t, 1000*5e-6, after, 1e-15)
}

// TestTable_Fingerprint checks that the fingerprint changes with every
// price and only with prices.
func TestTable_Fingerprint(t *testing.T) {
	d := price.Default()
	assert.Equal(t, d.Fingerprint(), price.Default().Fingerprint())
	assert.Equal(t, d.Fingerprint(), d.Merge(mustLoad(t, `{}`)).Fingerprint())
	changed := d.Merge(mustLoad(t, `{"glm-4.7": {"input_cost_per_token": 1e-6}}`))
	assert.NotEqual(t, d.Fingerprint(), changed.Fingerprint())
	dated := d.Merge(mustLoad(t, `{"glm-4.7": {"periods": [{"valid_until": "2025-01-01", "input_cost_per_token": 1e-6}]}}`))
	assert.NotEqual(t, d.Fingerprint(), dated.Fingerprint())
	assert.NotEqual(t, changed.Fingerprint(), dated.Fingerprint())
	var zero price.Table
	assert.NotEmpty(t, zero.Fingerprint())
}

func TestSnapshots(t *testing.T) {
	s := price.Snapshots()
	require.Len(t, s, 2)
	assert.Equal(t, price.SourceLiteLLM, s[0].Source)
	assert.Equal(t, price.SourceModelsDev, s[1].Source)
	for _, x := range s {
		_, err := time.Parse(time.DateOnly, x.Date)
		assert.NoError(t, err, "%s snapshot date %q", x.Source, x.Date)
		assert.Contains(t, x.From, "ccusage 20.0.24")
	}
}
