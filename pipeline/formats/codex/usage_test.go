package codex_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

// tokenLine returns a token_count line with cumulative totals (input,
// cached, output, reasoning; total = input + output).
func tokenLine(ts string, in, cached, out, reasoning int64) string {
	return fmt.Sprintf(`{"timestamp":%q,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":`+
		`{"input_tokens":%d,"cached_input_tokens":%d,"output_tokens":%d,"reasoning_output_tokens":%d,"total_tokens":%d}}}}`,
		ts, in, cached, out, reasoning, in+out)
}

func TestParser_UsageDeltas(t *testing.T) {
	const meta = `{"timestamp":"2025-10-01T10:00:00Z","type":"session_meta","payload":{"id":"s1","model_provider":"openai"}}`
	tests := []struct {
		name  string
		lines []string
		want  []schema.Usage // one per usage entry, in order
	}{
		{
			name:  "FirstTotalIsTheDelta",
			lines: []string{meta, tokenLine("2025-10-01T10:00:01Z", 1000, 400, 50, 10)},
			want:  []schema.Usage{{Input: 600, CacheRead: 400, Output: 50, Reasoning: 10}},
		},
		{
			name: "ReemitCountsNothing",
			lines: []string{meta,
				tokenLine("2025-10-01T10:00:01Z", 1000, 400, 50, 10),
				tokenLine("2025-10-01T10:00:02Z", 1000, 400, 50, 10),
				tokenLine("2025-10-01T10:00:03Z", 1500, 900, 70, 10),
			},
			want: []schema.Usage{
				{Input: 600, CacheRead: 400, Output: 50, Reasoning: 10},
				{Input: 0, CacheRead: 500, Output: 20},
			},
		},
		{
			name: "InfoNullCountsNothing",
			lines: []string{meta,
				`{"timestamp":"2025-10-01T10:00:01Z","type":"event_msg","payload":{"type":"token_count","info":null}}`,
				`{"timestamp":"2025-10-01T10:00:02Z","type":"event_msg","payload":{"type":"token_count"}}`,
			},
		},
		{
			name: "ResetCountsNewTotalFromZero",
			lines: []string{meta,
				tokenLine("2025-10-01T10:00:01Z", 1000, 0, 50, 0),
				tokenLine("2025-10-01T10:00:02Z", 300, 100, 20, 5),
			},
			want: []schema.Usage{
				{Input: 1000, Output: 50},
				{Input: 200, CacheRead: 100, Output: 20, Reasoning: 5},
			},
		},
		{
			name: "LastWhenNoTotal",
			lines: []string{meta,
				`{"timestamp":"2025-10-01T10:00:01Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":100,"cached_input_tokens":30,"output_tokens":7,"reasoning_output_tokens":0,"total_tokens":107}}}}`,
			},
			want: []schema.Usage{{Input: 70, CacheRead: 30, Output: 7}},
		},
		{
			name: "TotalPreferredOverLast",
			lines: []string{meta,
				tokenLine("2025-10-01T10:00:01Z", 1000, 0, 50, 0),
				`{"timestamp":"2025-10-01T10:00:02Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":940499,"output_tokens":0,"total_tokens":940499},"total_token_usage":{"input_tokens":1000,"output_tokens":50,"total_tokens":1050}}}}`,
			},
			want: []schema.Usage{{Input: 1000, Output: 50}},
		},
		{
			name: "CacheWriteCounted",
			lines: []string{meta,
				`{"timestamp":"2025-10-01T10:00:01Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":100,"cached_input_tokens":10,"cache_write_input_tokens":40,"output_tokens":5,"total_tokens":105}}}}`,
			},
			want: []schema.Usage{{Input: 90, CacheRead: 10, CacheWrite: 40, Output: 5}},
		},
		{
			name: "MissingTotalTokensIsInputPlusOutput",
			lines: []string{meta,
				`{"timestamp":"2025-10-01T10:00:01Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":100,"output_tokens":20,"reasoning_output_tokens":15}}}}`,
			},
			want: []schema.Usage{{Input: 100, Output: 20, Reasoning: 15}},
		},
		{
			name: "CachedAboveInputIsCapped",
			lines: []string{meta,
				`{"timestamp":"2025-10-01T10:00:01Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":100,"cached_input_tokens":150,"output_tokens":20,"total_tokens":120}}}}`,
			},
			want: []schema.Usage{{Input: 0, CacheRead: 100, Output: 20}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries := mustParse(t, parse.Config{}, []byte(strings.Join(tt.lines, "\n")+"\n"))
			var got []schema.Usage
			for _, e := range usages(entries) {
				got = append(got, *e.Usage)
				assert.NotEmpty(t, e.UsageKey, "usage without key at line %d", e.Line)
				assert.Equal(t, "openai", e.Provider)
			}
			assert.Equal(t, tt.want, got)
			for _, e := range entries {
				if e.Usage == nil {
					assert.Empty(t, e.UsageKey, "key without usage at line %d", e.Line)
				}
			}
		})
	}
}

// finalTotal reads the last cumulative total_token_usage of a rollout
// with encoding/json, converted to the disjoint counters.
func finalTotal(tb testing.TB, path string) schema.Usage {
	tb.Helper()
	f, err := os.Open(path)
	require.NoError(tb, err)
	defer f.Close()
	type counters struct {
		Input     int64 `json:"input_tokens"`
		Cached    int64 `json:"cached_input_tokens"`
		Output    int64 `json:"output_tokens"`
		Reasoning int64 `json:"reasoning_output_tokens"`
	}
	var last *counters
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var line struct {
			Type    string `json:"type"`
			Payload struct {
				Type string `json:"type"`
				Info *struct {
					Total *counters `json:"total_token_usage"`
				} `json:"info"`
			} `json:"payload"`
		}
		require.NoError(tb, json.Unmarshal(sc.Bytes(), &line))
		if line.Type == "event_msg" && line.Payload.Type == "token_count" && line.Payload.Info != nil && line.Payload.Info.Total != nil {
			last = line.Payload.Info.Total
		}
	}
	require.NoError(tb, sc.Err())
	require.NotNil(tb, last, "no total in %s", path)
	return schema.Usage{
		Input:     last.Input - last.Cached,
		CacheRead: last.Cached,
		Output:    last.Output,
		Reasoning: last.Reasoning,
	}
}

// The deltas of a real rollout add up to its final cumulative total,
// although half of its token_count lines are re-emits.
func TestParser_LocalpushSumIsFinalTotal(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "localpush-*", "input.jsonl"))
	require.NoError(t, err)
	require.Len(t, files, 5)
	for _, path := range files {
		t.Run(filepath.Base(filepath.Dir(path)), func(t *testing.T) {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			entries := mustParse(t, parse.Config{Path: path}, data)
			want := finalTotal(t, path)
			require.NotZero(t, want.Total())
			assert.Equal(t, want, sumUsage(entries))

			keys := make(map[string]bool)
			for _, e := range usages(entries) {
				assert.False(t, keys[e.UsageKey], "UsageKey %s repeated", e.UsageKey)
				keys[e.UsageKey] = true
				assert.Equal(t, "gpt-5.3-codex", e.Model)
			}
		})
	}
}

// unionTotal counts usage once per UsageKey, the largest total winning, as
// the aggregator does.
func unionTotal(files ...[]schema.Entry) (schema.Usage, int) {
	best := make(map[string]schema.Usage)
	for _, entries := range files {
		for _, e := range usages(entries) {
			if cur, ok := best[e.UsageKey]; !ok || e.Usage.Total() > cur.Total() {
				best[e.UsageKey] = *e.Usage
			}
		}
	}
	var sum schema.Usage
	for _, u := range best {
		sum.Add(u)
	}
	return sum, len(best)
}

// A branch copies its parent's token_count verbatim: the copy shares the
// parent's UsageKey, so the union of both files counts it once.
func TestParser_ForkCopyCountsOnce(t *testing.T) {
	parent := mustParse(t, parse.Config{Path: "2026-05-12T08-00-00-parent.jsonl"}, mustReadCase(t, "ccusage-branch-parent"))
	branch := mustParse(t, parse.Config{Path: "2026-05-12T08-02-00-branch.jsonl"}, mustReadCase(t, "ccusage-branch-child"))
	require.Len(t, usages(parent), 1)
	require.Len(t, usages(branch), 2)
	assert.Equal(t, usages(parent)[0].UsageKey, usages(branch)[0].UsageKey, "copied call must share its key")
	assert.NotEqual(t, usages(branch)[0].UsageKey, usages(branch)[1].UsageKey)

	sum, calls := unionTotal(parent, branch)
	assert.Equal(t, 2, calls)
	// The branch's final cumulative total: 1600 input (300 cached), 450 output.
	assert.Equal(t, schema.Usage{Input: 1300, CacheRead: 300, Output: 450, Reasoning: 40}, sum)
	naive := sumUsage(parent)
	naive.Add(sumUsage(branch))
	assert.Greater(t, naive.Total(), sum.Total(), "without keys the copy would count twice")
}

// A thread_spawn child replays its parent's history re-stamped at its
// creation second: the replay counts nothing in the child, and the
// child's own calls count over the last replayed total.
func TestParser_ThreadSpawnReplay(t *testing.T) {
	const (
		parentID = "019a0000-0000-7000-8000-0000000000aa"
		childID  = "019a0000-0000-7000-8000-0000000000cc"
	)
	parentFile := strings.Join([]string{
		`{"timestamp":"2025-10-01T10:00:00.000Z","type":"session_meta","payload":{"id":"` + parentID + `","source":"cli"}}`,
		`{"timestamp":"2025-10-01T10:00:00.500Z","type":"turn_context","payload":{"turn_id":"t1","model":"gpt-5-codex"}}`,
		tokenLine("2025-10-01T10:00:04.000Z", 1000, 0, 100, 10),
		tokenLine("2025-10-01T10:00:09.000Z", 2500, 800, 250, 30),
	}, "\n") + "\n"
	parent := mustParse(t, parse.Config{}, []byte(parentFile))
	child := mustParse(t, parse.Config{}, mustReadCase(t, "thread-spawn-replay"))

	require.Equal(t, childID, child[0].SessionID)
	assert.Equal(t, parentID, child[0].ParentSessionID)
	for _, e := range child {
		assert.Equal(t, childID, e.SessionID)
		assert.True(t, e.Sidechain, "line %d of a subagent file", e.Line)
		if e.TS.Unix() == child[0].TS.Unix() && e.Line > 1 {
			assert.True(t, e.Copy, "replayed line %d must be a copy", e.Line)
			assert.Nil(t, e.Usage, "replayed line %d must count nothing", e.Line)
		}
		if e.Kind == schema.KindMessage && e.Role == schema.RoleUser {
			assert.True(t, e.Meta, "a subagent prompt is not human input (line %d)", e.Line)
		}
	}
	own := usages(child)
	require.Len(t, own, 1)
	// Own total 4000/2000/400/50 over the replayed 2500/800/250/30.
	assert.Equal(t, schema.Usage{Input: 300, CacheRead: 1200, Output: 150, Reasoning: 20}, *own[0].Usage)
	assert.Equal(t, "gpt-5.1-codex-mini", own[0].Model)

	sum, calls := unionTotal(parent, child)
	assert.Equal(t, 3, calls)
	assert.Equal(t, schema.Usage{Input: 2000, CacheRead: 2000, Output: 400, Reasoning: 50}, sum)
}

// Replay ends for good at the first line stamped after the creation
// second; a header without a parent opens no replay at all.
func TestParser_ReplayWindow(t *testing.T) {
	tests := []struct {
		name      string
		header    string
		wantCalls int
	}{
		{
			name:      "ThreadSpawn",
			header:    `{"timestamp":"2025-10-01T11:00:00.900Z","type":"session_meta","payload":{"id":"c","source":{"subagent":{"thread_spawn":{"parent_thread_id":"p"}}}}}`,
			wantCalls: 1,
		},
		{
			name:      "ForkedFrom",
			header:    `{"timestamp":"2025-10-01T11:00:00.900Z","type":"session_meta","payload":{"id":"c","forked_from_id":"p"}}`,
			wantCalls: 1,
		},
		{
			name:      "HeaderTimeFromPayload",
			header:    `{"type":"session_meta","payload":{"id":"c","timestamp":"2025-10-01T11:00:00.100Z","parent_thread_id":"p"}}`,
			wantCalls: 1,
		},
		{
			name:      "NoParent",
			header:    `{"timestamp":"2025-10-01T11:00:00.900Z","type":"session_meta","payload":{"id":"c","source":"cli"}}`,
			wantCalls: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := strings.Join([]string{
				tt.header,
				tokenLine("2025-10-01T11:00:00.950Z", 1000, 0, 100, 0),
				tokenLine("2025-10-01T10:59:00.000Z", 2000, 0, 200, 0), // original timestamp, earlier
				tokenLine("2025-10-01T11:00:03.000Z", 3000, 0, 300, 0),
			}, "\n") + "\n"
			entries := mustParse(t, parse.Config{}, []byte(data))
			calls := usages(entries)
			require.Len(t, calls, tt.wantCalls)
			last := calls[len(calls)-1]
			if tt.wantCalls == 1 {
				assert.Equal(t, schema.Usage{Input: 1000, Output: 100}, *last.Usage)
				assert.True(t, entries[1].Copy)
				assert.True(t, entries[2].Copy)
				assert.False(t, entries[3].Copy)
			}
		})
	}
}

func TestParser_ModelFallback(t *testing.T) {
	// No turn_context: the model stays empty (ccusage would assume gpt-5).
	entries := mustParse(t, parse.Config{}, mustReadCase(t, "no-turn-context"))
	calls := usages(entries)
	require.Len(t, calls, 1)
	assert.Empty(t, calls[0].Model)
	assert.Equal(t, "openai", calls[0].Provider)

	// info.model wins over the turn_context model and becomes current.
	entries = mustParse(t, parse.Config{}, mustReadCase(t, "ccusage-alpha"))
	calls = usages(entries)
	require.Len(t, calls, 2)
	assert.Equal(t, "gpt-5.2-codex", calls[0].Model)
	assert.Equal(t, "gpt-5.3-codex", calls[1].Model)
}

// A paginated subagent rollout (CLI 0.150 and later) replays its
// parent's history below subagent_history_start_ordinal, stamped when the
// child wrote it (after its creation second, so the timestamp window
// would take it for the child's own): the ordinals tell. Each call counts
// once between parent and child.
func TestParser_PaginatedSubagentReplayByOrdinal(t *testing.T) {
	const (
		parentID = "019e1a2b-3c4d-7e5f-8a6b-7c8d9e0f1a2b"
		childID  = "019e1a2b-5f60-7a71-8b82-93a4b5c6d7e8"
	)
	parent := mustParse(t, parse.Config{}, mustReadCase(t, "paginated-parent"))
	child := mustParse(t, parse.Config{Path: "rollout-2026-10-02T09-00-07-" + parentID + "_" + childID + ".jsonl"}, mustReadCase(t, "paginated-subagent"))

	require.Equal(t, parentID, child[0].ParentSessionID)
	for _, e := range child {
		assert.Equal(t, childID, e.SessionID)
		assert.True(t, e.Sidechain, "line %d: thread_source subagent", e.Line)
		assert.Equal(t, e.Line >= 2 && e.Line <= 6, e.Copy, "line %d: ordinals 1-5 are the parent's", e.Line)
	}
	own := usages(child)
	require.Len(t, own, 1)
	assert.Equal(t, schema.Usage{Input: 2000, CacheRead: 1000, Output: 400, Reasoning: 50}, *own[0].Usage)
	assert.Equal(t, "gpt-6.1-codex-mini", own[0].Model)

	sum, calls := unionTotal(parent, child)
	assert.Equal(t, 3, calls)
	assert.Equal(t, int64(23500+3400), sum.Total(), "the parent's two calls and the child's one")
}

// A paginated fork or later page names the history it starts from
// (history_base) instead of replaying it: its cumulative counters go on
// from the base thread's, so its first token_count counts only its own
// call (last_token_usage), and the next ones their deltas.
func TestParser_HistoryBaseCountsOwnCalls(t *testing.T) {
	fork := mustParse(t, parse.Config{}, mustReadCase(t, "paginated-fork"))
	require.Equal(t, "019e1a2b-3c4d-7e5f-8a6b-7c8d9e0f1a2b", fork[0].ParentSessionID, "history_base.thread_id")
	calls := usages(fork)
	require.Len(t, calls, 2)
	assert.Equal(t, schema.Usage{Input: 2000, CacheRead: 3000, Output: 600, Reasoning: 80}, *calls[0].Usage)
	assert.Equal(t, schema.Usage{Input: 500, CacheRead: 3500, Output: 300, Reasoning: 20}, *calls[1].Usage)

	parent := mustParse(t, parse.Config{}, mustReadCase(t, "paginated-parent"))
	sum, n := unionTotal(parent, fork)
	assert.Equal(t, 4, n)
	assert.Equal(t, int64(23500+5600+4300), sum.Total())
}
