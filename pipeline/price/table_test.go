package price_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
)

func mustLoad(tb testing.TB, doc string) *price.Table {
	tb.Helper()
	t, err := price.Load(strings.NewReader(doc))
	require.NoError(tb, err)
	return t
}

func TestDefault(t *testing.T) {
	table := price.Default()
	assert.Greater(t, table.Len(), 200)
	models := table.Models()
	assert.Len(t, models, table.Len())
	assert.IsNonDecreasing(t, models)
	for _, want := range []string{"claude-3-haiku-20240307", "claude-3-5-sonnet-20241022", "claude-3-7-sonnet-20250219",
		"claude-opus-4", "claude-opus-4-1", "claude-sonnet-4", "claude-opus-4-5", "claude-sonnet-4-5", "claude-haiku-4-5",
		"claude-opus-4-6", "claude-sonnet-4-6", "gpt-5", "gpt-5-codex", "gpt-5.1-codex-max", "gpt-5.2-codex",
		"gpt-5.3-codex", "codex-mini-latest", "o3", "o4-mini", "gpt-4.1", "gpt-4o"} {
		assert.Contains(t, models, want)
	}
	// Each call parses afresh: tables are independent values.
	assert.NotSame(t, table, price.Default())
}

// TestDefault_EveryKeyNormalises checks that no two embedded keys share a
// normalised spelling (which would leave both unreachable by any other
// spelling) by looking every key up in upper case.
func TestDefault_EveryKeyNormalises(t *testing.T) {
	table := price.Default()
	for _, p := range table.Prices() {
		m := p.Model
		if p.Source != price.SourceLiteLLM {
			// A models.dev key may be spelled like a LiteLLM key (the
			// LiteLLM row wins) or like another models.dev key.
			got, ok := table.Lookup(m)
			if assert.True(t, ok, "Lookup(%q)", m) {
				assert.Equal(t, m, got.Model, "an exact key finds its own row")
			}
			continue
		}
		p, ok := table.Lookup(strings.ToUpper(m))
		if assert.True(t, ok, "Lookup(%q)", strings.ToUpper(m)) {
			assert.Equal(t, m, p.Model)
		}
	}
}

func TestLoad(t *testing.T) {
	// Shaped like LiteLLM's file: a sample_spec row with strings where
	// numbers go elsewhere, rows without token prices, nulls, unknown
	// fields and provider-specific multipliers.
	table := mustLoad(t, `{
  "sample_spec": {"max_input_tokens": "max input tokens, if the provider specifies it",
    "input_cost_per_token": 0.0, "output_cost_per_token": 0.0, "litellm_provider": "one of ...",
    "supported_regions": ["global"], "supports_vision": true},
  "dall-e-3": {"input_cost_per_pixel": 1e-8, "output_cost_per_pixel": 0.0, "mode": "image_generation"},
  "tts-1": {"input_cost_per_character": 1.5e-5},
  "half": {"output_cost_per_token": 2e-6},
  "m": {"input_cost_per_token": 1e-6, "output_cost_per_token": 4e-6, "cache_read_input_token_cost": null,
    "input_cost_per_token_above_128k_tokens": 9e-6, "provider_specific_entry": {"fast": 3, "us": 1.1},
    "search_context_cost_per_query": {"search_context_size_low": 0.03}}
}`)
	assert.Equal(t, []string{"m", "sample_spec"}, table.Models())
	p, ok := table.Lookup("m")
	require.True(t, ok)
	in := 1e-6 // a variable: the defaults are multiplied at run time, as ccusage
	assert.Equal(t, price.Price{
		Model: "m", Input: in, Output: 4e-6,
		CacheRead: in * 0.1, CacheWrite5m: in * 1.25, CacheWrite1h: 2e-6,
		Fast: 3, Source: price.SourceOverride,
	}, p, "defaults derive from the input rate; the 128k tier is ignored")
	_, ok = table.Lookup("half")
	assert.False(t, ok, "a row without an input rate prices nothing")
	_, ok = table.Lookup("dall-e-3")
	assert.False(t, ok)
}

func TestLoad_Tiers(t *testing.T) {
	table := mustLoad(t, `{
  "per-counter": {"input_cost_per_token": 1, "output_cost_per_token": 2, "input_cost_per_token_above_200k_tokens": 3,
    "input_cost_per_token_above_272k_tokens": 99},
  "whole": {"input_cost_per_token": 1, "output_cost_per_token": 2, "output_cost_per_token_above_272k_tokens": 4,
    "cache_creation_input_token_cost_above_1hr_above_272k_tokens": 7},
  "explicit-1h": {"input_cost_per_token": 1, "output_cost_per_token": 2, "cache_creation_input_token_cost_above_1hr": 5,
    "cache_read_input_token_cost_above_200k_tokens": 0.5}
}`)
	p, _ := table.Lookup("per-counter")
	assert.Equal(t, price.LongContext{Threshold: 200000, Input: 3, Output: 2, CacheRead: 0.1, CacheWrite5m: 1.25, CacheWrite1h: 6}, p.Long,
		"a 200k tier wins over a 272k one; the 1h write follows input above × 2")
	p, _ = table.Lookup("whole")
	assert.Equal(t, price.LongContext{Threshold: 272000, WholeRequest: true, Input: 1, Output: 4, CacheRead: 0.1, CacheWrite5m: 1.25, CacheWrite1h: 7}, p.Long)
	p, _ = table.Lookup("explicit-1h")
	assert.InDelta(t, 5, p.CacheWrite1h, 0)
	assert.Equal(t, price.LongContext{Threshold: 200000, Input: 1, Output: 2, CacheRead: 0.5, CacheWrite5m: 1.25, CacheWrite1h: 5}, p.Long,
		"without a higher input rate the 1h write keeps its own")
}

func TestLoad_Errors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want error
		line int64
		at   string // the error's offset is where this first occurs; "" = end of input
	}{
		{"Empty", ``, price.ErrSyntax, 1, ""},
		{"Truncated", "{\n \"m\": {\"input_cost_per_token\": 1", price.ErrSyntax, 2, ""},
		{"TrailingComma", "{\n \"m\": {\"input_cost_per_token\": 1,}\n}", price.ErrSyntax, 2, "}\n}"},
		{"TopLevelArray", `[{"m": {}}]`, price.ErrShape, 1, `{"m"`},
		{"RowNotObject", "{\n \"a\": {},\n \"m\": 3\n}", price.ErrShape, 3, "3\n"},
		{"RateIsString", "{\n \"m\": {\n  \"input_cost_per_token\": \"3e-6\"\n }\n}", price.ErrBadRate, 3, `"3e-6"`},
		{"RateNegative", "{\"m\": {\"output_cost_per_token\": -1e-6}}", price.ErrBadRate, 1, "-1e-6"},
		{"RateIsArray", "{\"m\": {\"cache_read_input_token_cost\": [1]}}", price.ErrBadRate, 1, "[1]"},
		{"FastZero", "{\"m\": {\"provider_specific_entry\": {\"fast\": 0}}}", price.ErrBadRate, 1, "0}}"},
		{"ProviderEntryNotObject", "{\"m\": {\"provider_specific_entry\": 2}}", price.ErrShape, 1, "2}}"},
		{"DataAfterObject", "{}\n[]", price.ErrSyntax, 2, "[]"},
		{"GarbageAfterObject", "{} x", price.ErrSyntax, 1, "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := price.Load(strings.NewReader(tt.doc))
			require.ErrorIs(t, err, tt.want)
			var de *schema.DecodeError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tt.line, de.Line, "line of %v", err)
			if tt.at != "" {
				assert.Equal(t, int64(strings.Index(tt.doc, tt.at)), de.Offset, "offset of %v", err)
			}
			if tt.want != price.ErrSyntax && !strings.HasPrefix(tt.doc, "[") {
				assert.Contains(t, err.Error(), `model "m"`)
			}
		})
	}
}

func TestLoad_ReadError(t *testing.T) {
	boom := errors.New("boom")
	_, err := price.Load(iotest.ErrReader(boom))
	require.ErrorIs(t, err, boom)
	var de *schema.DecodeError
	assert.False(t, errors.As(err, &de))
}

func TestTable_Merge(t *testing.T) {
	base := price.Default()
	override := mustLoad(t, `{
  "claude-opus-4-6": {"input_cost_per_token": 4e-6},
  "gpt-5.3-codex": {"input_cost_per_token": 2e-6},
  "my-model": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6},
  "orphan": {"cache_read_input_token_cost": 1e-7}
}`)
	merged := base.Merge(override)

	opus, ok := merged.Lookup("claude-opus-4-6")
	require.True(t, ok)
	assert.InDelta(t, 4e-6, opus.Input, 0)
	assert.InDelta(t, 25e-6, opus.Output, 0, "fields the override leaves out keep the base row's")
	assert.InDelta(t, 0.5e-6, opus.CacheRead, 0, "an explicit base cache rate is kept")
	assert.InDelta(t, 6, opus.Fast, 0)

	codex, _ := merged.Lookup("gpt-5.3-codex")
	assert.InDelta(t, 2e-6*1.25, codex.CacheWrite5m, 1e-18, "a derived cache rate follows the new input rate")
	assert.InDelta(t, 0.175e-6, codex.CacheRead, 0)

	my, ok := merged.Lookup("MY-MODEL")
	require.True(t, ok, "added models are normalised too")
	assert.Equal(t, "my-model", my.Model)
	_, ok = merged.Lookup("orphan")
	assert.False(t, ok, "a partial row over nothing prices nothing")
	assert.Equal(t, base.Len()+1, merged.Len())

	// Neither input changed.
	p, _ := base.Lookup("claude-opus-4-6")
	assert.InDelta(t, 5e-6, p.Input, 0)
	_, ok = override.Lookup("claude-opus-4-6")
	assert.False(t, ok)
	assert.Same(t, base, base.Merge(nil))
}

func TestTable_Zero(t *testing.T) {
	var table price.Table
	_, ok := table.Cost("claude-sonnet-4-5", schema.Usage{Input: 1})
	assert.False(t, ok)
	assert.Zero(t, table.Len())
	assert.Equal(t, 1, table.Merge(mustLoad(t, `{"m": {"input_cost_per_token": 1, "output_cost_per_token": 1}}`)).Len())
}

// TestTable_Concurrent looks names up from several goroutines at once, as
// the indexer may; run with -race.
func TestTable_Concurrent(t *testing.T) {
	table := price.Default()
	names := []string{"claude-sonnet-4-5", "anthropic/claude-opus-4.6", "apac.anthropic.claude-sonnet-4-6-v1:0", "nope", "<synthetic>"}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				name := names[(g+i)%len(names)]
				_, ok := table.Cost(name, schema.Usage{Input: 1})
				assert.Equal(t, name != "nope" && name != "<synthetic>", ok, name)
			}
		})
	}
	wg.Wait()
}

// TestTable_Lookup_ManyNames resolves more distinct names than the table
// remembers; the ones past the bound are resolved afresh, with the same
// answers.
func TestTable_Lookup_ManyNames(t *testing.T) {
	table := price.Default()
	for i := range 5000 {
		_, ok := table.Lookup(fmt.Sprintf("unknown-%d", i))
		require.False(t, ok)
	}
	for range 2 {
		p, ok := table.Lookup("Claude-Sonnet-4.5[1m]")
		require.True(t, ok)
		assert.Equal(t, "claude-sonnet-4-5", p.Model)
		_, ok = table.Lookup("unknown-4999")
		assert.False(t, ok)
	}
}
