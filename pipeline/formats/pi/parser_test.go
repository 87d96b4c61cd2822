package pi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/pi"
	"github.com/sessionpipe/sessionpipe/schema"
)

// mustParse parses data as one file and returns its entries and errors.
func mustParse(tb testing.TB, cfg parse.Config, data []byte) ([]schema.Entry, []error) {
	tb.Helper()
	return formattest.ParseAll(tb, pi.New(cfg), data)
}

// usageKeys returns the usage keys of entries, in order.
func usageKeys(entries []schema.Entry) []string {
	var keys []string
	for _, e := range entries {
		if e.UsageKey != "" {
			keys = append(keys, e.UsageKey)
		}
	}
	return keys
}

func TestParse_EntriesValid(t *testing.T) {
	cases, err := filepath.Glob("testdata/*/input.jsonl")
	require.NoError(t, err)
	for _, in := range cases {
		t.Run(filepath.Base(filepath.Dir(in)), func(t *testing.T) {
			for _, text := range []bool{false, true} {
				entries, _ := mustParse(t, parse.Config{Path: in, Text: text}, formattest.ReadFile(t, in))
				keys := make(map[string]bool)
				for _, e := range entries {
					require.NoError(t, e.Validate(), "line %d", e.Line)
					assert.False(t, keys[e.Key()], "duplicate key %s", e.Key())
					keys[e.Key()] = true
					if e.Usage != nil {
						assert.NotZero(t, e.Usage.Total(), "line %d", e.Line)
						assert.NotEmpty(t, e.UsageKey, "line %d", e.Line)
						assert.Equal(t, schema.RoleAssistant, e.Role)
					}
				}
			}
		})
	}
}

func TestParse_UsageKeyOfCopies(t *testing.T) {
	t.Run("ForkCopy", func(t *testing.T) {
		orig, errs := mustParse(t, parse.Config{}, formattest.ReadFile(t, "testdata/v3-header/input.jsonl"))
		require.Empty(t, errs)
		fork, errs := mustParse(t, parse.Config{}, formattest.ReadFile(t, "testdata/fork-copy/input.jsonl"))
		require.Empty(t, errs)
		require.NotEqual(t, orig[0].SessionID, fork[0].SessionID)
		assert.Equal(t, orig[0].SessionID, fork[0].ParentSessionID, "fork header names its parent")
		forkKeys := usageKeys(fork)
		require.Len(t, forkKeys, 1)
		assert.Contains(t, usageKeys(orig), forkKeys[0], "a verbatim copy keeps its usage key")
	})

	t.Run("GatewayCompaction", func(t *testing.T) {
		// sessions.compact renames the transcript to .bak.<ts> and keeps
		// its last lines, without the header, under the original name.
		data := formattest.ReadFile(t, "testdata/openclaw-8555a0a4/input.jsonl")
		lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
		kept := strings.Join(lines[len(lines)-8:], "")
		dir := "/home/me/.openclaw/agents/main/sessions/"
		bak, errs := mustParse(t, parse.Config{Path: dir + "8555a0a4-0b79-459d-939c-e17cdbbf4fe2.jsonl.bak.2026-03-09T10-00-00.000Z"}, data)
		require.Empty(t, errs)
		live, errs := mustParse(t, parse.Config{Path: dir + "8555a0a4-0b79-459d-939c-e17cdbbf4fe2.jsonl"}, []byte(kept))
		require.Empty(t, errs)
		require.NotEqual(t, schema.KindSession, live[0].Kind, "the header was cut")
		for _, e := range live {
			assert.Equal(t, bak[0].SessionID, e.SessionID, "the live file's stem is the .bak's header id")
		}
		require.NotEmpty(t, usageKeys(live))
		assert.Subset(t, usageKeys(bak), usageKeys(live))
	})

	t.Run("MigrationV1ToV3", func(t *testing.T) {
		// pi migrates v1 files in place: ids and parentIds are added, the
		// header gets version 3, and the whole file is rewritten.
		data := formattest.ReadFile(t, "testdata/pi-mono-session/input.jsonl")
		v1, errs := mustParse(t, parse.Config{}, data)
		require.Empty(t, errs)
		v3, errs := mustParse(t, parse.Config{}, migrate(t, data))
		require.Empty(t, errs)
		require.Len(t, v3, len(v1))
		assert.NotEqual(t, v1[5].EntryID, v3[5].EntryID)
		assert.Equal(t, usageKeys(v1), usageKeys(v3))
	})

	t.Run("DistinctCalls", func(t *testing.T) {
		seen := make(map[string]int64)
		for _, c := range []string{"pi-mono-compact", "pi-mono-session", "pi-mono-large-session", "openclaw-8555a0a4"} {
			entries, errs := mustParse(t, parse.Config{}, formattest.ReadFile(t, "testdata/"+c+"/input.jsonl"))
			require.Empty(t, errs)
			for _, e := range entries {
				if e.UsageKey == "" {
					continue
				}
				_, dup := seen[e.UsageKey]
				assert.False(t, dup, "%s line %d reuses %s", c, e.Line, e.UsageKey)
				seen[e.UsageKey] = e.Line
			}
		}
		assert.Greater(t, len(seen), 1000)
	})
}

// migrate rewrites a v1 transcript as pi's migrateToCurrentVersion does:
// every entry gets an 8-hex id and the previous entry as parentId, the
// header gets version 3, and each entry is re-serialised.
func migrate(tb testing.TB, data []byte) []byte {
	tb.Helper()
	var out bytes.Buffer
	dec := json.NewDecoder(bytes.NewReader(data))
	prev := any(nil)
	for n := 0; dec.More(); n++ {
		var m map[string]any
		require.NoError(tb, dec.Decode(&m))
		if m["type"] == "session" {
			m["version"] = 3
		} else {
			id := fmt.Sprintf("%08x", n)
			m["id"], m["parentId"] = id, prev
			prev = id
		}
		b, err := json.Marshal(m)
		require.NoError(tb, err)
		out.Write(b)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

func TestParse_TextOff(t *testing.T) {
	entries, errs := mustParse(t, parse.Config{}, formattest.ReadFile(t, "testdata/v2-header/input.jsonl"))
	require.Empty(t, errs)
	byID := make(map[string]schema.Entry)
	for _, e := range entries {
		byID[e.EntryID] = e
	}
	assert.Equal(t, "list the files", byID["a0000002"].Text, "a real user input keeps its text")
	assert.Empty(t, byID["a0000003"].Text, "assistant text only with Config.Text")
	require.Len(t, byID["a0000003"].ToolCalls, 1)
	assert.Equal(t, schema.ToolCall{ID: "toolu_01", Name: "bash"}, byID["a0000003"].ToolCalls[0], "no input without Config.Text")
	require.Len(t, byID["a0000004"].ToolResults, 1)
	assert.Equal(t, schema.ToolResult{ToolCallID: "toolu_01", IsError: true}, byID["a0000004"].ToolResults[0])
	assert.Empty(t, byID["a0000005"].Text, "injected text only with Config.Text")
	assert.True(t, byID["a0000005"].Meta)
}

func TestParse_KeyOrder(t *testing.T) {
	// The same assistant message with its keys in different orders.
	tests := []struct {
		name string
		line string
	}{
		{"PiOrder", `{"type":"message","id":"x1","parentId":"x0","timestamp":"2026-03-01T10:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hi"},{"type":"toolCall","id":"t1","name":"read","arguments":{"p":1}}],"model":"m1","provider":"anthropic","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"cost":{"total":0.5}},"stopReason":"toolUse","timestamp":1772359202000}}`},
		{"IDsLast", `{"type":"message","timestamp":"2026-03-01T10:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hi"},{"type":"toolCall","id":"t1","name":"read","arguments":{"p":1}}],"model":"m1","provider":"anthropic","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"cost":{"total":0.5}},"stopReason":"toolUse","timestamp":1772359202000},"id":"x1","parentId":"x0"}`},
		{"TypeLastRoleLast", `{"message":{"timestamp":1772359202000,"usage":{"cost":{"total":0.5},"cacheWrite":4,"cacheRead":3,"output":2,"input":1},"content":[{"text":"hi","type":"text"},{"arguments":{"p":1},"name":"read","id":"t1","type":"toolCall"}],"stopReason":"toolUse","provider":"anthropic","model":"m1","role":"assistant"},"parentId":"x0","id":"x1","timestamp":"2026-03-01T10:00:04.000Z","type":"message"}`},
		{"Spaced", "{ \"type\" : \"message\" , \"id\":\"x1\",\"parentId\":\"x0\",\"timestamp\":\"2026-03-01T10:00:04.000Z\",\"message\": {\"role\":\"assistant\",\"content\":[ {\"type\":\"text\",\"text\":\"hi\"} , {\"type\":\"toolCall\",\"id\":\"t1\",\"name\":\"read\",\"arguments\":{\"p\":1}} ],\"model\":\"m1\",\"provider\":\"anthropic\",\"usage\":{\"input\":1,\"output\":2,\"cacheRead\":3,\"cacheWrite\":4,\"cost\":{\"total\":0.5}},\"stopReason\":\"toolUse\",\"timestamp\":1772359202000} }"},
	}
	var want []byte
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries, errs := mustParse(t, parse.Config{Path: "s.jsonl", Text: true}, []byte(tt.line+"\n"))
			require.Empty(t, errs)
			require.Len(t, entries, 1)
			e := entries[0]
			assert.Equal(t, "pi:1772359202000:m1:1/2/3/4", e.UsageKey)
			got := e.AppendJSON(nil)
			if want == nil {
				want = got
			}
			assert.JSONEq(t, string(want), string(got))
		})
	}
}

func TestParse_Usage(t *testing.T) {
	line := func(usage string) string {
		return `{"type":"message","id":"u1","timestamp":"2026-03-01T10:00:04.000Z","message":{"role":"assistant","content":[],"model":"m","usage":` + usage + `,"timestamp":1772359202000}}`
	}
	tests := []struct {
		name     string
		line     string
		want     *schema.Usage
		wantCost *float64
	}{
		{"Plain", line(`{"input":10,"output":5,"cacheRead":100,"cacheWrite":20,"totalTokens":135}`),
			&schema.Usage{Input: 10, Output: 5, CacheRead: 100, CacheWrite: 20}, nil},
		{"CacheWrite1h", line(`{"input":10,"output":49,"cacheRead":0,"cacheWrite":12331,"totalTokens":12390,"cost":{"total":0.01566875},"cacheWrite1h":331,"reasoning":43}`),
			&schema.Usage{Input: 10, Output: 49, CacheWrite: 12331, CacheWrite5m: 12000, CacheWrite1h: 331, Reasoning: 43}, ptr(0.01566875)},
		{"CacheWrite1hZero", line(`{"input":1,"output":1,"cacheRead":0,"cacheWrite":7,"cacheWrite1h":0}`),
			&schema.Usage{Input: 1, Output: 1, CacheWrite: 7, CacheWrite5m: 7}, nil},
		{"CacheWrite1hOverTotal", line(`{"input":1,"output":1,"cacheRead":0,"cacheWrite":7,"cacheWrite1h":9}`),
			&schema.Usage{Input: 1, Output: 1, CacheWrite: 7, CacheWrite1h: 9}, nil},
		{"IntegralFloat", line(`{"input":1.0,"output":2e1,"cacheRead":0,"cacheWrite":0}`),
			&schema.Usage{Input: 1, Output: 20}, nil},
		{"Zero", line(`{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"cost":{"total":0}}`), nil, nil},
		{"Null", line(`null`), nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries, errs := mustParse(t, parse.Config{}, []byte(tt.line+"\n"))
			require.Empty(t, errs)
			require.Len(t, entries, 1)
			e := entries[0]
			assert.Equal(t, tt.want, e.Usage)
			assert.Equal(t, tt.wantCost, e.CostUSD)
			assert.Equal(t, tt.want != nil, e.UsageKey != "", "usage key %q", e.UsageKey)
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestParse_NoAlias(t *testing.T) {
	data := formattest.ReadFile(t, "testdata/v3-header/input.jsonl")
	entries := formattest.RequireOwned(t, pi.New(parse.Config{Text: true, Raw: true}), formattest.Lines(t, data)...)
	require.NotEmpty(t, entries)
}
func TestParse_Raw(t *testing.T) {
	a := `{"type":"message","id":"r1","timestamp":"2026-03-01T10:00:10.000Z","message":{"role":"user","content":"a"}}`
	b := `{"type":"label","id":"r2","timestamp":"2026-03-01T10:00:11.000Z","targetId":"r1","label":"x"}`
	entries, errs := mustParse(t, parse.Config{Raw: true}, []byte(a+"  "+b+"\n"))
	require.Empty(t, errs)
	require.Len(t, entries, 2)
	assert.Equal(t, a, string(entries[0].Raw))
	assert.Equal(t, b, string(entries[1].Raw))
	assert.Equal(t, 1, entries[1].Object)
	assert.Equal(t, entries[0].Offset, entries[1].Offset)
}

func TestParse_SessionWithoutHeader(t *testing.T) {
	line := []byte(`{"type":"message","id":"s1","timestamp":"2026-03-01T10:00:10.000Z","message":{"role":"user","content":"a"}}` + "\n")
	tests := []struct {
		name, path, want string
	}{
		{"OpenClawLive", "/home/me/.openclaw/agents/main/sessions/8555a0a4-0b79-459d-939c-e17cdbbf4fe2.jsonl", "8555a0a4-0b79-459d-939c-e17cdbbf4fe2"},
		{"Reset", "/x/sessions/abc.jsonl.reset.2026-03-20T06-34-44.520Z", "abc"},
		{"NoPath", "", pi.UnknownSession},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries, errs := mustParse(t, parse.Config{Path: tt.path}, line)
			require.Empty(t, errs)
			require.Len(t, entries, 1)
			assert.Equal(t, tt.want, entries[0].SessionID)
		})
	}
}

func TestParse_ErrorsAreLocated(t *testing.T) {
	data := "{\"type\":\"session\",\"id\":\"s\",\"cwd\":\"/\"}\n" +
		"{\"type\":\"message\",\"id\":\"a\",\"message\":{\"role\":\"user\",\"content\":\"x\"}}{\"type\":\"message\",\"id\":\"b\",\"message\":{\"role\":\"toolResult\",\"isError\":\"1\"}}\n"
	entries, errs := mustParse(t, parse.Config{Path: "f.jsonl"}, []byte(data))
	require.Len(t, entries, 2, "the header and the object before the fault")
	require.Len(t, errs, 1)
	var de *schema.DecodeError
	require.ErrorAs(t, errs[0], &de)
	assert.ErrorIs(t, errs[0], parse.ErrBadField)
	assert.Equal(t, "f.jsonl", de.Path)
	assert.Equal(t, int64(2), de.Line)
	assert.Equal(t, `1"}}`+"\n", data[de.Offset:de.Offset+5])
}

func TestParse_Header(t *testing.T) {
	tests := []struct {
		name, line        string
		wantSession       string
		wantParent        string
		wantSubtype       string
		wantModel, wantPr string
	}{
		{"V1", `{"type":"session","id":"d703a1a9","timestamp":"2025-11-20T23:33:50.805Z","cwd":"/w","provider":"anthropic","modelId":"claude-sonnet-4-5","thinkingLevel":"off"}`,
			"d703a1a9", "", "", "claude-sonnet-4-5", "anthropic"},
		{"V1BranchedFrom", `{"type":"session","id":"b1","timestamp":"2025-12-01T00:00:00Z","cwd":"/w","branchedFrom":"/Users/me/.pi/agent/sessions/--w--/2025-11-30T10-00-00-000Z_a0a0a0a0-1111-2222-3333-444444444444.jsonl"}`,
			"b1", "a0a0a0a0-1111-2222-3333-444444444444", "", "", ""},
		{"V3ParentSession", `{"type":"session","version":3,"id":"f1","timestamp":"2026-03-02T08:00:00Z","cwd":"/w","parentSession":"C:\\Users\\me\\.pi\\agent\\sessions\\--w--\\2026-03-01T10-00-00-000Z_p1.jsonl"}`,
			"f1", "p1", "", "", ""},
		{"NexusSubagent", `{"type":"session","id":"child","timestamp":"2026-01-21T12:00:00Z","parentSessionId":"parent","parentMessageId":"m","toolCallId":"t"}`,
			"child", "parent", "subagent", "", ""},
		{"NexusFork", `{"type":"session","version":"3","id":"fork","timestamp":"2026-01-21T12:00:00Z","cwd":"/w","forkedFromSessionId":"orig"}`,
			"fork", "orig", "", "", ""},
		{"NoID", `{"type":"session","version":3,"timestamp":"2026-01-21T12:00:00Z","cwd":"/w"}`,
			"stem", "", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := `{"type":"message","id":"x","timestamp":"2026-01-21T12:00:01Z","message":{"role":"assistant","content":[],"usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0},"timestamp":1}}`
			entries, errs := mustParse(t, parse.Config{Path: "/d/stem.jsonl"}, []byte(tt.line+"\n"+next+"\n"))
			require.Empty(t, errs)
			require.Len(t, entries, 2)
			h, m := entries[0], entries[1]
			assert.Equal(t, schema.KindSession, h.Kind)
			assert.Equal(t, tt.wantSession, h.SessionID)
			assert.Equal(t, tt.wantParent, h.ParentSessionID)
			assert.Equal(t, tt.wantSubtype, h.Subtype)
			assert.Equal(t, tt.wantSession, m.SessionID, "entries belong to the header's session")
			assert.Empty(t, m.ParentSessionID, "only the header names the parent")
			assert.Equal(t, tt.wantModel, m.Model, "the header model is the default")
			assert.Equal(t, tt.wantPr, m.Provider)
		})
	}
}

func TestParse_LogsUnknownType(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	entries, errs := mustParse(t, parse.Config{Path: "f.jsonl", Logger: log}, []byte(`{"type":"brand_new","id":"z"}`+"\n"))
	require.Empty(t, errs, "unknown types are not errors")
	require.Len(t, entries, 1)
	assert.Equal(t, schema.KindEvent, entries[0].Kind)
	assert.Equal(t, "brand_new", entries[0].Subtype)
	assert.Contains(t, buf.String(), "entry_type=brand_new")
	assert.Contains(t, buf.String(), "path=f.jsonl line=1")
}

// A provider response id is not a message identity (Ollama reuses
// chatcmpl-14), and OpenClaw's own assistant messages are meta.
func TestParse_AssistantIdentityAndOpenClawMessages(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "openclaw-synthetic", "input.jsonl"))
	require.NoError(t, err)
	entries, errs := mustParse(t, parse.Config{Path: "5b1c0d2e-7f3a-4c5b-9d6e-0f1a2b3c4d5e.jsonl"}, data)
	require.Empty(t, errs)
	var model, meta []string
	for _, e := range entries {
		if e.Role != schema.RoleAssistant {
			continue
		}
		require.Empty(t, e.MessageID, "entry %s: the entry id is the identity", e.EntryID)
		if e.Meta {
			meta = append(meta, e.Model)
			require.Nil(t, e.Usage)
			continue
		}
		model = append(model, e.EntryID)
		require.Equal(t, "chatcmpl-14", e.RequestID, "the response id is kept, as a request id")
	}
	require.Equal(t, []string{"9a533f48", "2d3e4f5a"}, model)
	require.Equal(t, []string{"delivery-mirror", "gateway-injected"}, meta)
}
