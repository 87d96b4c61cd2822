package ccusage

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecode(t *testing.T) {
	claude := `{"sessions":[{"sessionId":"b","projectPath":"p","inputTokens":3,"outputTokens":13,"cacheCreationTokens":5,"cacheReadTokens":7,"totalTokens":28,"totalCost":0.5,
		"firstActivity":"2026-02-10T21:11:59.186Z","lastActivity":"2026-02-10T22:00:00Z","modelsUsed":["m2","m1"],
		"modelBreakdowns":[{"modelName":"m2","inputTokens":1,"outputTokens":13,"cacheCreationTokens":5,"cacheReadTokens":7,"cost":0.4},{"modelName":"m1","inputTokens":2,"cost":0.1}]},
		{"sessionId":"a","projectPath":"p","inputTokens":1,"totalTokens":1,"totalCost":0,"modelsUsed":[],"modelBreakdowns":[]}],
		"totals":{"inputTokens":4,"outputTokens":13,"cacheCreationTokens":5,"cacheReadTokens":7,"totalTokens":29,"totalCost":0.5}}`
	codex := `{"sessions":[{"sessionId":"d/r","directory":"d","sessionFile":"r","inputTokens":9,"outputTokens":4,"cacheCreationTokens":0,"cacheReadTokens":1,"reasoningOutputTokens":2,"totalTokens":14,"costUSD":0.25,
		"lastActivity":"2026-05-12T08:01:00.000Z","models":{"gpt-x":{"inputTokens":9,"outputTokens":4,"cacheReadTokens":1,"reasoningOutputTokens":2,"isFallback":true,"missingPricing":true}}}],
		"totals":{"inputTokens":9,"outputTokens":4,"cacheCreationTokens":0,"cacheReadTokens":1,"reasoningOutputTokens":2,"totalTokens":14,"costUSD":0.25}}`

	t.Run("ClaudeShape", func(t *testing.T) {
		rep, err := Decode([]byte(claude))
		require.NoError(t, err)
		require.Len(t, rep.Sessions, 2)
		assert.Equal(t, "a", rep.Sessions[0].ID, "sessions sorted by id")
		b := rep.Sessions[1]
		assert.Equal(t, Session{
			ID: "b", Project: "p", Usage: Usage{Input: 3, Output: 13, CacheRead: 7, CacheWrite: 5, Total: 28, CostUSD: 0.5},
			Models: []string{"m1", "m2"},
			Breakdown: []ModelUsage{
				{Model: "m1", Input: 2, CostUSD: 0.1},
				{Model: "m2", Input: 1, Output: 13, CacheRead: 7, CacheWrite: 5, CostUSD: 0.4},
			},
			FirstActivity: time.Date(2026, 2, 10, 21, 11, 59, 186e6, time.UTC),
			LastActivity:  time.Date(2026, 2, 10, 22, 0, 0, 0, time.UTC),
		}, b)
		assert.Equal(t, Usage{Input: 4, Output: 13, CacheRead: 7, CacheWrite: 5, Total: 29, CostUSD: 0.5}, rep.Totals)
		assert.Equal(t, rep.Totals, Sum(rep.Sessions))
	})
	t.Run("CodexShape", func(t *testing.T) {
		rep, err := Decode([]byte(codex))
		require.NoError(t, err)
		assert.Equal(t, []Session{{
			ID: "d/r", Project: "d", Usage: Usage{Input: 9, Output: 4, CacheRead: 1, Reasoning: 2, Total: 14, CostUSD: 0.25},
			Models:       []string{"gpt-x"},
			Breakdown:    []ModelUsage{{Model: "gpt-x", Input: 9, Output: 4, CacheRead: 1, Reasoning: 2, Fallback: true, MissingPricing: true}},
			LastActivity: time.Date(2026, 5, 12, 8, 1, 0, 0, time.UTC),
		}}, rep.Sessions)
		assert.Equal(t, Usage{Input: 9, Output: 4, CacheRead: 1, Reasoning: 2, Total: 14, CostUSD: 0.25}, rep.Totals)
	})
	t.Run("Empty", func(t *testing.T) {
		rep, err := Decode([]byte(`{"sessions":[],"totals":{"totalCost":0}}`))
		require.NoError(t, err)
		assert.Empty(t, rep.Sessions)
	})

	bad := []struct{ name, out string }{
		{"NotJSON", "No usage data found.\n"},
		{"NoTotals", `{"sessions":[]}`},
		{"NoSessions", `{"totals":{"totalCost":0}}`},
		{"TotalsWithoutCost", `{"sessions":[],"totals":{"inputTokens":1}}`},
		{"SessionWithoutID", `{"sessions":[{"totalCost":1}],"totals":{"totalCost":1}}`},
		{"SessionWithoutCost", `{"sessions":[{"sessionId":"a"}],"totals":{"totalCost":1}}`},
		{"BadTime", `{"sessions":[{"sessionId":"a","totalCost":1,"lastActivity":"yesterday"}],"totals":{"totalCost":1}}`},
		{"FloatTokens", `{"sessions":[{"sessionId":"a","totalCost":1,"inputTokens":1.5}],"totals":{"totalCost":1}}`},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.out))
			require.ErrorIs(t, err, ErrBadOutput, "Decode(%q)", tt.out)
		})
	}
}
