package kilo_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/kilo"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
)

// row returns a message row line of an assistant message with tokens.
func row(id, tokens string) string {
	return fmt.Sprintf(`{"id":%q,"session_id":"ses_1","data":{"id":%q,"role":"assistant","time":{"created":1767312000000},"modelID":"gpt-5","providerID":"openai","tokens":%s}}`, id, id, tokens)
}

func one(t *testing.T, lines ...string) []schema.Entry {
	t.Helper()
	return formattest.MustParse(t, kilo.New(parse.Config{Path: "/h/.local/share/kilo/kilo.db"}), lines...)
}

// OpenCode's tokens keep the reasoning apart from the output and the cache
// apart from the input: output counts the reasoning, input stays.
func TestParse_ReasoningInOutput(t *testing.T) {
	es := one(t, row("m1", `{"input":100,"output":50,"reasoning":5,"cache":{"read":10,"write":20}}`))
	require.Equal(t, schema.Usage{Input: 100, Output: 55, CacheRead: 10, CacheWrite: 20, Reasoning: 5}, *es[0].Usage)
}

// A total beyond the parts counts as output (ccusage's fallback: all of it
// when no output is given).
func TestParse_TotalBeyondParts(t *testing.T) {
	es := one(t, row("m1", `{"total":234}`), row("m2", `{"input":100,"output":50,"total":180}`))
	require.Equal(t, schema.Usage{Output: 234}, *es[0].Usage)
	require.Equal(t, schema.Usage{Input: 100, Output: 80}, *es[1].Usage)
}

// A message is updated in place while it streams: the row given again
// keeps its entry id and usage key, so the call counts once, at its
// largest.
func TestParse_UpdatedRowSameKey(t *testing.T) {
	es := one(t, row("m1", `{"input":12}`), row("m1", `{"input":1200,"output":300}`))
	require.Equal(t, es[0].EntryID, es[1].EntryID)
	require.Equal(t, "kilo:ses_1:m1", es[0].UsageKey)
	require.Equal(t, es[0].UsageKey, es[1].UsageKey)
}

// A recorded cost above 0 is used as recorded; 0 is no recorded cost.
func TestParse_RecordedCost(t *testing.T) {
	p := kilo.New(parse.Config{})
	es := formattest.MustParse(t, p,
		`{"id":"r1","session_id":"s","data":{"id":"m1","role":"assistant","modelID":"x","cost":0.5,"tokens":{"input":1}}}`,
		`{"id":"r2","session_id":"s","data":{"id":"m2","role":"assistant","modelID":"x","cost":0,"tokens":{"input":1}}}`)
	require.InDelta(t, 0.5, *es[0].CostUSD, 0)
	require.Nil(t, es[1].CostUSD)
}

// The data column's text (a JSON string) reads as the object would.
func TestParse_DataAsText(t *testing.T) {
	obj := one(t, row("m1", `{"input":3,"output":4}`))
	txt := one(t, `{"id":"m1","session_id":"ses_1","data":"{\"id\":\"m1\",\"role\":\"assistant\",\"time\":{\"created\":1767312000000},\"modelID\":\"gpt-5\",\"providerID\":\"openai\",\"tokens\":{\"input\":3,\"output\":4}}"}`)
	obj[0].Offset, txt[0].Offset = 0, 0
	require.Equal(t, string(obj[0].AppendJSON(nil)), string(txt[0].AppendJSON(nil)))
}

// The session golden case through the aggregator gives the hand-computed
// figures: msg_a02 once at its largest (input 1200, output 300+40, cache
// 5000/800), msg_a03, the total-only msg_a05 (234 output), and in ses_k2
// 100 input, 50+5+15 output, 10 cache read.
//
// ccusage 20.0.24 (ccusage kilo session --json --offline, on a kilo.db
// holding these rows, the updated one in its last state) gave ses_k1:
// input 1500, output 624, cache read 11200, cache write 800, total 14164,
// cost 0.02364; ses_k2: input 100, output 50, cache read 10, total 180,
// cost 0.5. The same input and cache; its output leaves the reasoning
// (and, with an output given, what total holds beyond the parts) out of
// the output column but in its total, so the totals agree. Its cost
// takes msg_a03's recorded 0 as the cost, where a 0 here is priced from
// the table.
func TestParse_SessionsAsCcusage(t *testing.T) {
	data := formattest.ReadFile(t, filepath.Join("testdata", "session", "input.jsonl"))
	entries, errs := formattest.ParseAll(t, kilo.New(parse.Config{Path: "kilo.db"}), data)
	require.Empty(t, errs)
	agg := index.NewAggregator(price.Default())
	for i := range entries {
		agg.Add(&entries[i])
	}
	ss := agg.Sessions()
	require.Len(t, ss, 2)
	got := map[string][6]int64{}
	for _, s := range ss {
		got[s.SessionID] = [6]int64{s.InputTokens, s.OutputTokens, s.CacheReadTokens, s.CacheWriteTokens, s.TotalTokens, s.APICalls}
	}
	require.Equal(t, map[string][6]int64{
		"ses_k1": {1500, 664, 11200, 800, 14164, 3},
		"ses_k2": {100, 70, 10, 0, 180, 1},
	}, got)
	for _, s := range ss {
		if s.SessionID == "ses_k1" {
			require.Equal(t, int64(2), s.UserMessages)
			require.Equal(t, int64(3), s.AssistantMessages)
			require.Zero(t, s.UnpricedCalls)
			require.Greater(t, s.CostUSD, 0.02364, "msg_a03's recorded 0 is priced from the table")
		}
	}
}
