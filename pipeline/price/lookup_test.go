package price_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sessionpipe/sessionpipe/pipeline/price"
)

func TestTable_Lookup(t *testing.T) {
	table := price.Default()
	tests := []struct {
		name  string
		model string
		want  string // the key it resolves to; "" = unpriced
	}{
		{"Exact", "claude-sonnet-4-5-20250929", "claude-sonnet-4-5-20250929"},
		{"ExactBedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"},
		{"Case", "Claude-Sonnet-4-5", "claude-sonnet-4-5"},
		{"OneMillionContextSuffix", "claude-sonnet-4-5[1m]", "claude-sonnet-4-5"},
		{"OneMillionContextDated", "claude-opus-4-5-20251101[1m]", "claude-opus-4-5-20251101"},
		{"AnthropicPath", "anthropic/claude-opus-4-6", "claude-opus-4-6"},
		{"OpenRouterPath", "openrouter/anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"},
		{"OpenAIPath", "openai/gpt-5.3-codex", "gpt-5.3-codex"},
		{"OpenAIPathNotPro", "openai/gpt-5.2", "gpt-5.2"},
		{"Dots", "claude-opus-4.6", "claude-opus-4-6"},
		{"VertexPath", "vertex_ai/claude-sonnet-4-5@20250929", "claude-sonnet-4-5-20250929"},
		{"VertexAt", "claude-opus-4-1@20250805", "claude-opus-4-1-20250805"},
		{"BedrockPath", "bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"},
		{"BedrockRevision", "us.anthropic.claude-opus-4-6-v1:0", "us.anthropic.claude-opus-4-6-v1"},
		{"BedrockUnknownRegion", "apac.anthropic.claude-sonnet-4-5-20250929-v1:0", "anthropic.claude-sonnet-4-5-20250929-v1:0"},
		{"BedrockBare", "apac.anthropic.claude-sonnet-4-6-v1:0", "claude-sonnet-4-6"},
		{"BedrockBareDated", "anthropic.claude-opus-4-1-20990101-v1:0", "claude-opus-4-1"},
		{"NewDate", "claude-haiku-4-5-20991231", "claude-haiku-4-5"},
		{"NewDashedDate", "gpt-5.4-2099-01-02", "gpt-5.4"},
		{"Alias", "gpt-5.3-spark", "gpt-5.3-codex-spark"},
		{"GrokBuildHarness", "grok-4.5-build", "grok-4.5"},
		{"GrokBuildUnknownBase", "grok-9-build", ""},
		{"OSeries", "o3", "o3"},
		{"Synthetic", "<synthetic>", ""},
		{"Empty", "", ""},
		{"FamilyOnly", "sonnet", ""},
		{"LocalModel", "qwen3.5:9b", ""},
		{"NotAModel", "gateway-injected", ""},
		{"VersionIsNotADate", "claude-opus-4-70", ""},
		{"NewMinorVersion", "claude-opus-4-0", ""},
		{"FastSuffixIsATier", "claude-opus-4-6-fast", ""},
		{"RevisionOnlyOnBedrock", "gpt-5:1", ""},
		{"PrefixOnly", "anthropic/", ""},
		{"Bracket", "[1m]", ""},
		{"TooLong", strings.Repeat("claude-", 40) + "sonnet-4-5", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := table.Lookup(tt.model)
			assert.Equal(t, tt.want != "", ok, "Lookup(%q) = %q, %v", tt.model, p.Model, ok)
			assert.Equal(t, tt.want, p.Model, "Lookup(%q)", tt.model)
		})
	}
}

// TestTable_Lookup_Ambiguous checks that a spelling two keys share names
// neither, while each key still matches itself.
func TestTable_Lookup_Ambiguous(t *testing.T) {
	table := mustLoad(t, `{
  "x-1.5": {"input_cost_per_token": 1, "output_cost_per_token": 1},
  "x-1-5": {"input_cost_per_token": 2, "output_cost_per_token": 2}
}`)
	for _, m := range []string{"x-1.5", "x-1-5"} {
		p, ok := table.Lookup(m)
		assert.True(t, ok)
		assert.Equal(t, m, p.Model)
	}
	_, ok := table.Lookup("X-1@5")
	assert.False(t, ok)
}
