package ccusage

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests pin how ccusage 20.0.24 counts, where sessionpipe must
// explain any difference: which copy of a response it keeps and where,
// which lines it skips, what it does with forks and unknown models. Each
// runs the real binary on a few synthetic lines.

// writeTree writes files (relative path → content) under a new root; "{{ROOT}}"
// in a content stands for the root.
func writeTree(tb testing.TB, files map[string]string) string {
	tb.Helper()
	root := tb.TempDir()
	for rel, content := range files {
		path := filepath.Join(root, filepath.FromSlash(rel))
		content = strings.ReplaceAll(content, "{{ROOT}}", root)
		require.NoError(tb, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(tb, os.WriteFile(path, []byte(content), 0o644))
	}
	return root
}

// claudeLine is one Claude Code assistant line with usage.
func claudeLine(session, ts, msgID, model string, in, out, cacheRead, cacheWrite int) string {
	return fmt.Sprintf(`{"type":"assistant","sessionId":%q,"timestamp":%q,"requestId":"req_%s","message":{"id":"msg_%s","model":%q,"role":"assistant","usage":{"input_tokens":%d,"output_tokens":%d,"cache_read_input_tokens":%d,"cache_creation_input_tokens":%d}}}`+"\n",
		session, ts, msgID, msgID, model, in, out, cacheRead, cacheWrite)
}

// codexTokenCount is one Codex token_count event with cumulative totals.
func codexTokenCount(ts string, in, cached, out int) string {
	return fmt.Sprintf(`{"timestamp":%q,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":%d,"cached_input_tokens":%d,"output_tokens":%d,"reasoning_output_tokens":0,"total_tokens":%d}}}}`+"\n",
		ts, in, cached, out, in+out)
}

// piAssistant is one pi v3 assistant message with usage and recorded cost.
func piAssistant(id, parent, ts, model string, in, out int, cost float64) string {
	return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":%q,"message":{"role":"assistant","model":%q,"usage":{"input":%d,"output":%d,"cacheRead":0,"cacheWrite":0,"totalTokens":%d,"cost":{"total":%g}}}}`+"\n",
		id, parent, ts, model, in, out, in+out, cost)
}

// piUser is one pi v3 user message.
func piUser(id, parent, ts string) string {
	return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":%q,"message":{"role":"user","content":"hi"}}`+"\n", id, parent, ts)
}

// brief is a session reduced to what the quirk tests compare.
type brief struct {
	ID                 string
	In, Out, CR, CW    int64
	CostMicroUSD       int64
	Models             string
	Fallback, Unpriced bool
}

func briefs(sessions []Session) []brief {
	out := make([]brief, 0, len(sessions))
	for _, s := range sessions {
		b := brief{ID: s.ID, In: s.Input, Out: s.Output, CR: s.CacheRead, CW: s.CacheWrite,
			CostMicroUSD: int64(s.CostUSD*1e6 + 0.5), Models: strings.Join(s.Models, ",")}
		for _, m := range s.Breakdown {
			b.Fallback = b.Fallback || m.Fallback
			b.Unpriced = b.Unpriced || m.MissingPricing
		}
		out = append(out, b)
	}
	return out
}

const sonnet4 = "claude-sonnet-4-20250514"

func TestQuirks(t *testing.T) {
	const (
		t0 = "2026-01-01T00:00:00.000Z"
		t1 = "2026-01-01T00:00:01.000Z"
		t2 = "2026-01-01T00:00:02.000Z"
		d1 = "2026-01-02T00:00:00.000Z"
	)
	piParent := "2026-01-01T00-00-00-000Z_parent.jsonl"
	tests := []struct {
		name  string
		kind  Kind
		files map[string]string
		want  []brief
	}{
		{
			// A resumed session copies responses verbatim into a new file.
			// ccusage keeps one copy (message id + request id), in the file
			// whose path sorts first, whatever the timestamps; sessionpipe
			// keeps it in the session that wrote it first.
			name: "ClaudeCopyCountsInFirstPath", kind: Claude,
			files: map[string]string{
				"projects/b/original.jsonl": claudeLine("s1", t0, "1", sonnet4, 10, 500, 0, 0),
				"projects/a/resumed.jsonl":  claudeLine("s2", d1, "1", sonnet4, 10, 500, 0, 0),
			},
			want: []brief{{ID: "resumed", In: 10, Out: 500, CostMicroUSD: 7530, Models: sonnet4}},
		},
		{
			// Streaming writes one response on several lines with growing
			// output; ccusage keeps the line with the largest total, as
			// sessionpipe does, and across files the larger copy wins its
			// own session.
			name: "ClaudeLargestTotalWins", kind: Claude,
			files: map[string]string{
				"projects/p/a.jsonl": claudeLine("s", t0, "1", sonnet4, 10, 5, 0, 0) +
					claudeLine("s", t1, "1", sonnet4, 10, 500, 0, 0) +
					claudeLine("s", t2, "1", sonnet4, 10, 7, 0, 0) +
					claudeLine("s", t0, "2", sonnet4, 10, 5, 0, 0),
				"projects/p/b.jsonl": claudeLine("s", d1, "2", sonnet4, 10, 50, 0, 0),
			},
			want: []brief{
				{ID: "a", In: 10, Out: 500, CostMicroUSD: 7530, Models: sonnet4},
				{ID: "b", In: 10, Out: 50, CostMicroUSD: 780, Models: sonnet4},
			},
		},
		{
			// The session is the file, never the sessionId field; a
			// subagent file counts in the session directory that holds it.
			name: "ClaudeSessionIsFileStem", kind: Claude,
			files: map[string]string{
				"projects/p/x.jsonl":                         claudeLine("real-id", t0, "1", sonnet4, 10, 5, 0, 0),
				"projects/p/real-id/subagents/agent-a.jsonl": claudeLine("real-id", t0, "2", sonnet4, 20, 5, 0, 0),
			},
			want: []brief{
				{ID: "real-id", In: 20, Out: 5, CostMicroUSD: 135, Models: sonnet4},
				{ID: "x", In: 10, Out: 5, CostMicroUSD: 105, Models: sonnet4},
			},
		},
		{
			// Valid JSON with a space after the colons (as Python's
			// json.dumps writes it) is skipped without a word: ccusage
			// prefilters lines on compact byte patterns.
			name: "ClaudeSpacedJSONSkipped", kind: Claude,
			files: map[string]string{
				"projects/p/spaced.jsonl":  strings.ReplaceAll(claudeLine("s", t0, "1", sonnet4, 10, 5, 0, 0), `":`, `": `),
				"projects/p/compact.jsonl": claudeLine("s", t0, "2", sonnet4, 10, 5, 0, 0),
			},
			want: []brief{{ID: "compact", In: 10, Out: 5, CostMicroUSD: 105, Models: sonnet4}},
		},
		{
			// A cost recorded in the line (costUSD) is used as is; an
			// unknown model costs $0 with nothing in the JSON to say so;
			// "<synthetic>" is not listed as a model.
			name: "ClaudePricing", kind: Claude,
			files: map[string]string{
				"projects/p/recorded.jsonl":  strings.Replace(claudeLine("s", t0, "1", sonnet4, 10, 5, 0, 0), `"type":"assistant"`, `"type":"assistant","costUSD":1.5`, 1),
				"projects/p/unknown.jsonl":   claudeLine("s", t0, "2", "claude-fable-9", 1000, 1000, 0, 0),
				"projects/p/synthetic.jsonl": claudeLine("s", t0, "3", "<synthetic>", 1000, 1000, 0, 0),
				// Per-call counters over 200k are priced at the long-context
				// rate for the part above 200k (LiteLLM above_200k_tokens),
				// each counter on its own.
				"projects/p/long.jsonl":     claudeLine("s", t0, "4", sonnet4, 1_000_000, 1_000_000, 1_000_000, 1_000_000),
				"projects/p/sonnet46.jsonl": claudeLine("s", t0, "5", "claude-sonnet-4-6", 1_000_000, 1_000_000, 1_000_000, 1_000_000),
				"projects/p/opus46.jsonl":   claudeLine("s", t0, "6", "claude-opus-4-6", 1_000_000, 1_000_000, 1_000_000, 1_000_000),
				"projects/p/haiku45.jsonl":  claudeLine("s", t0, "7", "claude-haiku-4-5-20251001", 1_000_000, 1_000_000, 1_000_000, 1_000_000),
			},
			want: []brief{
				{ID: "haiku45", In: 1e6, Out: 1e6, CR: 1e6, CW: 1e6, CostMicroUSD: 7_350_000, Models: "claude-haiku-4-5-20251001"},
				{ID: "long", In: 1e6, Out: 1e6, CR: 1e6, CW: 1e6, CostMicroUSD: 33_690_000, Models: sonnet4},
				{ID: "opus46", In: 1e6, Out: 1e6, CR: 1e6, CW: 1e6, CostMicroUSD: 36_750_000, Models: "claude-opus-4-6"},
				{ID: "recorded", In: 10, Out: 5, CostMicroUSD: 1_500_000, Models: sonnet4},
				{ID: "sonnet46", In: 1e6, Out: 1e6, CR: 1e6, CW: 1e6, CostMicroUSD: 22_050_000, Models: "claude-sonnet-4-6"},
				{ID: "synthetic", In: 1000, Out: 1000},
				{ID: "unknown", In: 1000, Out: 1000, Models: "claude-fable-9"},
			},
		},
		{
			// A branch file without session_meta that replays its parent's
			// token_count counts it again (the parent's 1000/100/200 is in
			// both sessions): ccusage cannot tell it is a copy. gpt-5 is
			// $1.25 input, $0.125 cached, $10 output per million.
			name: "CodexBranchWithoutMetaDoubleCounts", kind: Codex,
			files: map[string]string{
				"sessions/parent.jsonl": codexTokenCount(t0, 1000, 100, 200),
				"sessions/branch.jsonl": codexTokenCount(t0, 1000, 100, 200) + codexTokenCount(t1, 1600, 300, 450),
			},
			want: []brief{
				{ID: "branch", In: 1300, Out: 450, CR: 300, CostMicroUSD: 6163, Models: "gpt-5", Fallback: true},
				{ID: "parent", In: 900, Out: 200, CR: 100, CostMicroUSD: 3138, Models: "gpt-5", Fallback: true},
			},
		},
		{
			// With session_meta.forked_from_id naming a scanned parent, the
			// replayed prefix counts only in the parent, as in sessionpipe.
			// No turn_context model: priced as gpt-5, flagged fallback.
			name: "CodexForkWithMetaCountsOnce", kind: Codex,
			files: map[string]string{
				"sessions/2026/01/01/rollout-2026-01-01T00-00-00-p.jsonl": `{"timestamp":"` + t0 + `","type":"session_meta","payload":{"id":"p","timestamp":"` + t0 + `"}}` + "\n" +
					codexTokenCount(t0, 1000, 100, 200),
				"sessions/2026/01/01/rollout-2026-01-01T00-00-01-c.jsonl": `{"timestamp":"` + t1 + `","type":"session_meta","payload":{"id":"c","forked_from_id":"p","timestamp":"` + t1 + `"}}` + "\n" +
					codexTokenCount(t0, 1000, 100, 200) + codexTokenCount(t2, 1600, 300, 450),
			},
			want: []brief{
				{ID: "2026/01/01/rollout-2026-01-01T00-00-00-p", In: 900, Out: 200, CR: 100, CostMicroUSD: 3138, Models: "gpt-5", Fallback: true},
				{ID: "2026/01/01/rollout-2026-01-01T00-00-01-c", In: 400, Out: 250, CR: 200, CostMicroUSD: 3025, Models: "gpt-5", Fallback: true},
			},
		},
		{
			// A model ccusage has no price for costs $0 and is flagged.
			name: "CodexUnknownModel", kind: Codex,
			files: map[string]string{
				"sessions/u.jsonl": `{"timestamp":"` + t0 + `","type":"turn_context","payload":{"model":"gpt-unknown-7"}}` + "\n" +
					codexTokenCount(t1, 1000, 0, 1000),
			},
			want: []brief{{ID: "u", In: 1000, Out: 1000, Models: "gpt-unknown-7", Unpriced: true}},
		},
		{
			// pi: the session is the file stem after its first "_"; the
			// recorded cost is used as is (here $0.50 for any tokens); a
			// line holding two JSON objects (a missing newline) is dropped
			// whole, usage and all.
			name: "PiCostAndTwoObjectLines", kind: Pi,
			files: map[string]string{
				"sessions/proj/2026-01-01T00-00-00-000Z_abc.jsonl": `{"type":"session","version":3,"id":"abc","timestamp":"` + t0 + `"}` + "\n" +
					piAssistant("a1", "null", t0, "claude-opus-4-5", 100, 10, 0.5) +
					strings.TrimSuffix(piAssistant("a2", `"a1"`, t1, "claude-opus-4-5", 1000, 10, 0.5), "\n") +
					`{"type":"compaction","id":"c1","parentId":"a2","timestamp":"` + t1 + `"}` + "\n",
			},
			want: []brief{{ID: "abc", In: 100, Out: 10, CostMicroUSD: 500_000, Models: "[pi] claude-opus-4-5"}},
		},
		{
			// A fork whose header names its parent file (parentSession, an
			// absolute path)
			// counts the replayed entries only in the parent; a verbatim
			// copy without that header counts them twice.
			name: "PiForkAndCopy", kind: Pi,
			files: map[string]string{
				"sessions/p/" + piParent: `{"type":"session","version":3,"id":"parent","timestamp":"` + t0 + `"}` + "\n" +
					piUser("u1", "null", t0) + piAssistant("a1", `"u1"`, t0, "claude-opus-4-5", 100, 10, 0.5),
				"sessions/p/2026-01-01T00-00-01-000Z_fork.jsonl": `{"type":"session","version":3,"id":"fork","timestamp":"` + t1 + `","parentSession":"{{ROOT}}/sessions/p/` + piParent + `"}` + "\n" +
					piUser("u1", "null", t0) + piAssistant("a1", `"u1"`, t0, "claude-opus-4-5", 100, 10, 0.5) +
					piUser("u2", `"a1"`, t2) + piAssistant("a2", `"u2"`, t2, "claude-opus-4-5", 200, 10, 0.25),
				"sessions/p/2026-01-01T00-00-02-000Z_copy.jsonl": `{"type":"session","version":3,"id":"copy","timestamp":"` + t2 + `"}` + "\n" +
					piUser("u1", "null", t0) + piAssistant("a1", `"u1"`, t0, "claude-opus-4-5", 100, 10, 0.5),
			},
			want: []brief{
				{ID: "copy", In: 100, Out: 10, CostMicroUSD: 500_000, Models: "[pi] claude-opus-4-5"},
				{ID: "fork", In: 200, Out: 10, CostMicroUSD: 250_000, Models: "[pi] claude-opus-4-5"},
				{ID: "parent", In: 100, Out: 10, CostMicroUSD: 500_000, Models: "[pi] claude-opus-4-5"},
			},
		},
		{
			// OpenClaw reads the .bak/.reset archives beside a session
			// under the session's id and counts identical records once per
			// session; the same records under another file name count again.
			name: "OpenClawArchives", kind: OpenClaw,
			files: map[string]string{
				"agents/main/sessions/s1.jsonl.bak.2026-01-01T00-10-00":   piAssistant("a1", "null", t0, "gpt-5.4", 100, 10, 0.5),
				"agents/main/sessions/s1.jsonl.reset.2026-01-01T00-10-00": piAssistant("a1", "null", t0, "gpt-5.4", 100, 10, 0.5),
				"agents/main/sessions/other.jsonl":                        piAssistant("a1", "null", t0, "gpt-5.4", 100, 10, 0.5),
			},
			want: []brief{
				{ID: "other", In: 100, Out: 10, CostMicroUSD: 500_000, Models: "[openclaw] gpt-5.4"},
				{ID: "s1", In: 100, Out: 10, CostMicroUSD: 500_000, Models: "[openclaw] gpt-5.4"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := writeTree(t, tt.files)
			rep := MustRun(t, tt.kind, root)
			assert.Equal(t, tt.want, briefs(rep.Sessions))
			if len(rep.Sessions) > 0 {
				assertConsistent(t, tt.kind, rep)
			}
		})
	}
}
