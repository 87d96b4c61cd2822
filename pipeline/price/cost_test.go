package price_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
)

// TestTable_Cost prices calls by hand from the rates in prices.json
// (per million tokens: claude-sonnet-4-5 3 in, 15 out, 0.3 cache read,
// 3.75 5m write, 6 1h write, above 200k per counter 6 / 22.5 / 0.6 / 7.5 /
// 12; claude-opus-4-6 5 / 25 / 0.5 / 6.25 / 10, no tier, fast ×6; gpt-5.4
// 2.5 / 15 / 0.25, whole request above 272k 5 / 22.5 / 0.5, fast ×2;
// gpt-5.3-codex 1.75 / 14 / 0.175).
func TestTable_Cost(t *testing.T) {
	table := price.Default()
	tests := []struct {
		name  string
		model string
		u     schema.Usage
		fast  bool
		want  float64
	}{
		{
			name:  "SplitCacheWrites",
			model: "claude-sonnet-4-5-20250929",
			u:     schema.Usage{Input: 1000, Output: 500, CacheRead: 20000, CacheWrite: 3000, CacheWrite5m: 2000, CacheWrite1h: 1000},
			// 1000×3 + 500×15 + 2000×3.75 + 1000×6 + 20000×0.3, per million
			want: 0.003 + 0.0075 + 0.0075 + 0.006 + 0.006,
		},
		{
			name:  "UnsplitCacheWritesAre5Minute",
			model: "claude-sonnet-4-5-20250929",
			u:     schema.Usage{CacheWrite: 1000},
			want:  1000 * 3.75e-6,
		},
		{
			name:  "SplitRestIs5Minute",
			model: "claude-sonnet-4-5",
			u:     schema.Usage{CacheWrite: 1000, CacheWrite5m: 300, CacheWrite1h: 200},
			want:  800*3.75e-6 + 200*6e-6,
		},
		{
			name:  "TierPerCounter",
			model: "claude-sonnet-4-5",
			u:     schema.Usage{Input: 250000, CacheRead: 300000},
			// Only the tokens of each counter beyond 200k pay the higher rate.
			want: 200000*3e-6 + 50000*6e-6 + 200000*0.3e-6 + 100000*0.6e-6,
		},
		{
			name:  "TierCountersAreNotSummed",
			model: "claude-sonnet-4-5",
			u:     schema.Usage{Input: 150000, CacheRead: 150000},
			want:  150000*3e-6 + 150000*0.3e-6,
		},
		{
			name:  "TierOneHourWrite",
			model: "claude-sonnet-4-5",
			u:     schema.Usage{CacheWrite: 300000, CacheWrite1h: 300000},
			want:  200000*6e-6 + 100000*12e-6,
		},
		{
			name:  "TierOutput",
			model: "claude-sonnet-4-20250514",
			u:     schema.Usage{Output: 200001},
			want:  200000*15e-6 + 1*22.5e-6,
		},
		{
			name:  "NoTier",
			model: "claude-opus-4-6",
			u:     schema.Usage{Input: 300000, CacheWrite: 10, CacheWrite1h: 10},
			want:  300000*5e-6 + 10*10e-6,
		},
		{
			name:  "Fast",
			model: "claude-opus-4-6",
			u:     schema.Usage{Input: 1000, Output: 100},
			fast:  true,
			want:  (1000*5e-6 + 100*25e-6) * 6,
		},
		{
			name:  "FastWithoutFastTier",
			model: "claude-sonnet-4-5",
			u:     schema.Usage{Input: 1000},
			fast:  true,
			want:  1000 * 3e-6,
		},
		{
			name:  "WholeRequestAtThreshold",
			model: "gpt-5.4",
			u:     schema.Usage{Input: 200000, CacheRead: 72000, Output: 1000},
			want:  200000*2.5e-6 + 1000*15e-6 + 72000*0.25e-6,
		},
		{
			name:  "WholeRequestAboveThreshold",
			model: "gpt-5.4",
			u:     schema.Usage{Input: 200000, CacheRead: 72001, Output: 1000},
			// Cache reads count towards the context; every counter moves up.
			want: 200000*5e-6 + 1000*22.5e-6 + 72001*0.5e-6,
		},
		{
			name:  "WholeRequestIgnoresOutput",
			model: "gpt-5.4",
			u:     schema.Usage{Input: 1000, Output: 300000},
			want:  1000*2.5e-6 + 300000*15e-6,
		},
		{
			name:  "WholeRequestCacheWrites",
			model: "gpt-5.4",
			u:     schema.Usage{Input: 280000, CacheWrite: 20000, CacheWrite5m: 10000, CacheWrite1h: 10000},
			// No higher 5m rate (stays 1.25×2.5); 1h moves to 2×5.
			want: 280000*5e-6 + 10000*3.125e-6 + 10000*10e-6,
		},
		{
			name:  "WholeRequestFast",
			model: "gpt-5.4",
			u:     schema.Usage{Input: 300000},
			fast:  true,
			want:  300000 * 5e-6 * 2,
		},
		{
			name:  "ReasoningIsInsideOutput",
			model: "gpt-5.3-codex",
			u:     schema.Usage{Input: 13747, CacheRead: 3456, Output: 358, Reasoning: 193},
			want:  13747*1.75e-6 + 358*14e-6 + 3456*0.175e-6,
		},
		{
			name:  "NegativeCountersAreZero",
			model: "claude-sonnet-4-5",
			u:     schema.Usage{Input: -5, Output: 2},
			want:  2 * 15e-6,
		},
		{
			name:  "Empty",
			model: "claude-sonnet-4-5",
			want:  0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := tt.u
			if tt.fast {
				u.Speed = "fast"
			}
			got, ok := table.Cost(tt.model, u)
			require.True(t, ok, "Cost(%q) unpriced", tt.model)
			assert.InDelta(t, tt.want, got, 1e-12, "Cost(%q, %+v) = %v, want %v", tt.model, tt.u, got, tt.want)

			p, ok := table.Lookup(tt.model)
			require.True(t, ok)
			if !tt.fast {
				assert.InDelta(t, tt.want, p.Cost(tt.u), 1e-12, "Price.Cost")
			}
		})
	}
}

func TestTable_Cost_Unpriced(t *testing.T) {
	table := price.Default()
	u := schema.Usage{Input: 10, Output: 10}
	for _, model := range []string{"", "<synthetic>", "gpt-9", "qwen3.5:9b", "gateway-injected", "sonnet"} {
		got, ok := table.Cost(model, u)
		assert.False(t, ok, "Cost(%q) = %v, want unpriced", model, got)
		assert.Zero(t, got)
		fast := u
		fast.Speed = "fast"
		got, ok = table.Cost(model, fast)
		assert.False(t, ok, "Cost(%q, fast) = %v, want unpriced", model, got)
	}
}

func TestTable_Cost_SyntheticNeverPriced(t *testing.T) {
	override, err := price.Load(strings.NewReader(`{"<synthetic>": {"input_cost_per_token": 1, "output_cost_per_token": 1}}`))
	require.NoError(t, err)
	_, ok := price.Default().Merge(override).Cost("<synthetic>", schema.Usage{Output: 1})
	assert.False(t, ok)
}

// TestDefault_SampleModels pins the price of every model with usage in
// testdata/corpus, per million tokens: input, output, cache read, 5-minute
// write, 1-hour write, and the tier.
func TestDefault_SampleModels(t *testing.T) {
	table := price.Default()
	type rates struct{ in, out, read, w5, w1 float64 }
	tests := []struct {
		model     string
		key       string
		base      rates
		threshold int64
		whole     bool
		above     rates
		fast      float64
	}{
		{"claude-opus-4-5", "claude-opus-4-5", rates{5, 25, 0.5, 6.25, 10}, 0, false, rates{5, 25, 0.5, 6.25, 10}, 1},
		{"claude-opus-4-6", "claude-opus-4-6", rates{5, 25, 0.5, 6.25, 10}, 0, false, rates{5, 25, 0.5, 6.25, 10}, 6},
		{"claude-opus-4-20250514", "claude-opus-4-20250514", rates{15, 75, 1.5, 18.75, 30}, 0, false, rates{15, 75, 1.5, 18.75, 30}, 1},
		{"claude-sonnet-4-5", "claude-sonnet-4-5", rates{3, 15, 0.3, 3.75, 6}, 200000, false, rates{6, 22.5, 0.6, 7.5, 12}, 1},
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5-20250929", rates{3, 15, 0.3, 3.75, 6}, 200000, false, rates{6, 22.5, 0.6, 7.5, 12}, 1},
		{"claude-sonnet-4-20250514", "claude-sonnet-4-20250514", rates{3, 15, 0.3, 3.75, 6}, 200000, false, rates{6, 22.5, 0.6, 7.5, 12}, 1},
		{"claude-haiku-4-5-20251001", "claude-haiku-4-5-20251001", rates{1, 5, 0.1, 1.25, 2}, 0, false, rates{1, 5, 0.1, 1.25, 2}, 1},
		{"gpt-5.1-codex", "gpt-5.1-codex", rates{1.25, 10, 0.125, 1.25, 2.5}, 0, false, rates{1.25, 10, 0.125, 1.25, 2.5}, 1},
		{"gpt-5.2", "gpt-5.2", rates{1.75, 14, 0.175, 1.75, 3.5}, 0, false, rates{1.75, 14, 0.175, 1.75, 3.5}, 1},
		{"gpt-5.2-codex", "gpt-5.2-codex", rates{1.75, 14, 0.175, 1.75, 3.5}, 0, false, rates{1.75, 14, 0.175, 1.75, 3.5}, 1},
		{"gpt-5.3-codex", "gpt-5.3-codex", rates{1.75, 14, 0.175, 2.1875, 3.5}, 0, false, rates{1.75, 14, 0.175, 2.1875, 3.5}, 2},
		{"gpt-5.4", "gpt-5.4", rates{2.5, 15, 0.25, 3.125, 5}, 272000, true, rates{5, 22.5, 0.5, 3.125, 10}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			p, ok := table.Lookup(tt.model)
			require.True(t, ok)
			assert.Equal(t, tt.key, p.Model)
			got := rates{p.Input, p.Output, p.CacheRead, p.CacheWrite5m, p.CacheWrite1h}
			gotAbove := rates{p.Long.Input, p.Long.Output, p.Long.CacheRead, p.Long.CacheWrite5m, p.Long.CacheWrite1h}
			if tt.threshold == 0 {
				gotAbove = got
			}
			perMillion := func(r rates) rates {
				return rates{r.in * 1e6, r.out * 1e6, r.read * 1e6, r.w5 * 1e6, r.w1 * 1e6}
			}
			assertRates := func(want, got rates, what string) {
				t.Helper()
				g := perMillion(got)
				assert.InDelta(t, want.in, g.in, 1e-9, "%s input", what)
				assert.InDelta(t, want.out, g.out, 1e-9, "%s output", what)
				assert.InDelta(t, want.read, g.read, 1e-9, "%s cache read", what)
				assert.InDelta(t, want.w5, g.w5, 1e-9, "%s 5m write", what)
				assert.InDelta(t, want.w1, g.w1, 1e-9, "%s 1h write", what)
			}
			assertRates(tt.base, got, "base")
			assertRates(tt.above, gotAbove, "above")
			assert.Equal(t, tt.threshold, p.Long.Threshold)
			assert.Equal(t, tt.whole, p.Long.WholeRequest)
			assert.InDelta(t, tt.fast, p.Fast, 0)
		})
	}
}
