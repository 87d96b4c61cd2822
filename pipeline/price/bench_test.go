package price_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
)

// BenchmarkTable_Cost prices one API call, which the indexer does for
// every call it counts; it must not allocate whatever the spelling.
func BenchmarkTable_Cost(b *testing.B) {
	table := price.Default()
	u := schema.Usage{Input: 250000, Output: 1200, CacheRead: 91011, CacheWrite: 4000, CacheWrite5m: 3000, CacheWrite1h: 1000}
	for _, bc := range []struct {
		name, model string
		priced      bool
	}{
		{"name=exact", "claude-sonnet-4-5-20250929", true},
		{"name=normalised", "anthropic/claude-sonnet-4.5[1m]", true},
		{"name=bedrock", "apac.anthropic.claude-sonnet-4-5-20250929-v1:0", true},
		{"name=wholeRequestTier", "gpt-5.4", true},
		{"name=unknown", "qwen3.5:9b", false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			_, ok := table.Cost(bc.model, u)
			require.Equal(b, bc.priced, ok)
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.model)))
			for b.Loop() {
				table.Cost(bc.model, u)
			}
		})
	}
}

// BenchmarkDefault measures parsing the embedded table, done once per
// process.
func BenchmarkDefault(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		price.Default()
	}
}
