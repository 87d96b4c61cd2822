package benchmarks

import (
	"bytes"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/corpusgen"
)

// benchCorpora are the corpora of BenchmarkDecode: about 64 MB of the
// realistic mix (multi-MB image lines included) and 16 MB of ~1 KB lines.
var benchCorpora = []corpusgen.Config{
	{Mix: corpusgen.MixMixed, Bytes: 64 << 20, Seed: 1},
	{Mix: corpusgen.Mix1K, Bytes: 16 << 20, Seed: 1},
}

// testCorpora are the small corpora of TestExtractionAgrees. Seed 2 of
// the 6 MB mix holds image lines (the test checks).
var testCorpora = []corpusgen.Config{
	{Mix: corpusgen.MixMixed, Bytes: 6 << 20, Seed: 2},
	{Mix: corpusgen.Mix1K, Bytes: 2 << 20, Seed: 2},
}

// fixture is a corpus with its reference extraction.
type fixture struct {
	c    *corpus
	want []record // encoding/json's records, cloned
}

// fixtures caches the corpora across the runs of a benchmark (-count):
// generating 64 MB takes seconds. Test-only state.
var fixtures struct {
	sync.Mutex
	m map[corpusgen.Config]*fixture
}

func mustFixture(tb testing.TB, cfg corpusgen.Config) *fixture {
	tb.Helper()
	fixtures.Lock()
	defer fixtures.Unlock()
	if f, ok := fixtures.m[cfg]; ok {
		return f
	}
	var buf bytes.Buffer
	buf.Grow(int(cfg.Bytes) + 1<<20)
	require.NoError(tb, corpusgen.Write(&buf, cfg))
	data := buf.Bytes()
	c := &corpus{name: string(cfg.Mix), data: data, lines: corpusgen.Split(data)}
	want, err := collect(c, libDecoder[stdContent](stdUnmarshal)())
	require.NoError(tb, err, "reference extraction")
	require.Len(tb, want, len(c.lines))
	f := &fixture{c: c, want: want}
	if fixtures.m == nil {
		fixtures.m = map[corpusgen.Config]*fixture{}
	}
	fixtures.m[cfg] = f
	return f
}

// collect runs dec over c and returns owned copies of its records.
func collect(c *corpus, dec decodeFunc) ([]record, error) {
	out := make([]record, 0, len(c.lines))
	err := dec(c, func(r *record) { out = append(out, clone(r)) })
	return out, err
}

// checkImpl verifies im on f: a decoder's records must equal encoding/json's
// on every line, a floor's count must be the expected one.
func checkImpl(tb testing.TB, f *fixture, im impl) {
	tb.Helper()
	if im.floor != nil {
		require.Equal(tb, im.want(f.c), im.floor(f.c, nil), "%s: count", im.name)
		return
	}
	got, err := collect(f.c, im.newDecoder())
	require.NoError(tb, err, im.name)
	require.Len(tb, got, len(f.want), "%s: records", im.name)
	for i := range got {
		if !reflect.DeepEqual(f.want[i], got[i]) {
			require.Equal(tb, f.want[i], got[i], "%s: line %d: %.300s", im.name, i+1, f.c.lines[i])
		}
	}
}

// TestExtractionAgrees checks every implementation against encoding/json
// on small corpora, the same check BenchmarkDecode makes before timing.
func TestExtractionAgrees(t *testing.T) {
	for _, cfg := range testCorpora {
		f := mustFixture(t, cfg)
		if cfg.Mix == corpusgen.MixMixed {
			big := 0
			for _, l := range f.c.lines {
				if len(l) > 1<<20 {
					big++
				}
			}
			require.Positive(t, big, "the test corpus must hold image lines")
		}
		for _, im := range impls() {
			t.Run(fmt.Sprintf("corpus=%s/impl=%s", cfg.Mix, im.name), func(t *testing.T) {
				checkImpl(t, f, im)
			})
		}
	}
}

// TestExtraction_Fields checks the reference extraction on hand-written
// lines of each format, so that agreement is agreement on the right values.
func TestExtraction_Fields(t *testing.T) {
	data := []byte(`{"parentUuid":"p1","isSidechain":true,"sessionId":"s1","message":{"model":"claude-opus-4-6","id":"msg_1","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}],"stop_reason":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":10,"cache_read_input_tokens":20,"cache_creation":{"ephemeral_5m_input_tokens":4,"ephemeral_1h_input_tokens":6},"output_tokens":7}},"requestId":"req_1","type":"assistant","uuid":"u1","timestamp":"2026-02-11T20:36:47.925Z"}
{"type":"user","message":{"role":"user","content":"caf\u00e9 \"prompt\""},"isMeta":true,"uuid":"u\u00e92"}
{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":[{"type":"text","text":"x"}],"is_error":true}]},"toolUseResult":{"stdout":"x","usage":{"input_tokens":99}}}
{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-03-08T13:03:27.042Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"call_1","name":"read","arguments":{"path":"/x"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-opus-4-5","usage":{"input":3,"output":88,"cacheRead":0,"cacheWrite":4442,"totalTokens":4533,"cost":{"input":0.000015000000000000002,"total":0.029977500000000004}},"stopReason":"toolUse","timestamp":1766000357543}}
{"timestamp":"2026-02-23T11:40:42.097Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":17203,"cached_input_tokens":3456,"output_tokens":358,"reasoning_output_tokens":193,"total_tokens":17561},"last_token_usage":{"input_tokens":1}},"rate_limits":null}}
{"timestamp":"2026-02-23T11:40:29.289Z","type":"turn_context","payload":{"turn_id":"t","model":"gpt-5.3-codex","collaboration_mode":{"settings":{"model":"other"}}}}
`)
	want := []record{
		{Type: "assistant", UUID: "u1", ParentUUID: "p1", SessionID: "s1", Timestamp: "2026-02-11T20:36:47.925Z",
			RequestID: "req_1", IsSidechain: true, Message: message[[]block]{ID: "msg_1", Model: "claude-opus-4-6",
				Role: "assistant", Usage: usage{InputTokens: 3, OutputTokens: 7, CacheCreationInputTokens: 10,
					CacheReadInputTokens: 20, CacheCreation: cacheCreation{Ephemeral5m: 4, Ephemeral1h: 6}},
				Content: []block{{Type: "tool_use", ID: "toolu_1", Name: "Bash"}}}},
		{Type: "user", UUID: "ué2", IsMeta: true, Message: message[[]block]{Role: "user"}},
		{Type: "user", Message: message[[]block]{Role: "user",
			Content: []block{{Type: "tool_result", ToolUseID: "toolu_1", IsError: true}}}},
		{Type: "message", ID: "a1b2c3d4", Timestamp: "2026-03-08T13:03:27.042Z", Message: message[[]block]{
			Role: "assistant", Model: "claude-opus-4-5", Provider: "anthropic", Timestamp: 1766000357543,
			Usage:   usage{Input: 3, Output: 88, CacheWrite: 4442, Cost: cost{Total: 0.029977500000000004}},
			Content: []block{{Type: "toolCall", ID: "call_1", Name: "read"}}}},
		{Type: "event_msg", Timestamp: "2026-02-23T11:40:42.097Z", Payload: payload{Type: "token_count",
			Info: tokenInfo{Total: tokenTotals{InputTokens: 17203, CachedInputTokens: 3456, OutputTokens: 358,
				ReasoningOutputTokens: 193, TotalTokens: 17561}}}},
		{Type: "turn_context", Timestamp: "2026-02-23T11:40:29.289Z", Payload: payload{Model: "gpt-5.3-codex"}},
	}
	c := &corpus{data: data, lines: corpusgen.Split(data)}
	for _, im := range impls() {
		if im.floor != nil {
			continue
		}
		t.Run(im.name, func(t *testing.T) {
			got, err := collect(c, im.newDecoder())
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
}

// TestScannerDecoder_Validates checks that the sessionpipe implementation
// rejects a line whose error lies in a value it does not extract.
func TestScannerDecoder_Validates(t *testing.T) {
	tests := []struct {
		name string
		line string
	}{
		{"BadLiteralInSkippedObject", `{"type":"user","toolUseResult":{"ok":tru}}`},
		{"BadEscapeInSkippedText", `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"a\qb"}]}}`},
		{"RawControlCharInSkippedText", "{\"type\":\"user\",\"toolUseResult\":{\"s\":\"a\x01b\"}}"},
		{"BadNumberInSkippedObject", `{"type":"user","toolUseResult":{"n":01}}`},
		{"TrailingCommaInSkippedObject", `{"type":"user","toolUseResult":{"a":1,}}`},
		{"Truncated", `{"type":"user","message":{"role":"user","content":"abc`},
		{"NotAnObject", `["type"]`},
		{"TrailingGarbage", `{"type":"user"} x`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &corpus{data: []byte(tt.line + "\n"), lines: [][]byte{[]byte(tt.line)}}
			_, err := collect(c, newScannerDecoder())
			require.Error(t, err)
			assert.Contains(t, err.Error(), "line 1:")
		})
	}
}

// TestScannerDecoder_ZeroAlloc checks that, once warm, the sessionpipe
// implementation allocates nothing, escaped strings included.
func TestScannerDecoder_ZeroAlloc(t *testing.T) {
	f := mustFixture(t, testCorpora[1])
	dec := newScannerDecoder()
	var sum int64
	visit := func(r *record) { sum += r.Message.Usage.OutputTokens + int64(len(r.UUID)) }
	require.NoError(t, dec(f.c, visit))
	allocs := testing.AllocsPerRun(3, func() {
		if err := dec(f.c, visit); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
	assert.Positive(t, sum)
}

// sink keeps the benchmarked work observable.
var sink int64

// BenchmarkDecode times each implementation over each corpus, after
// checking its extraction against encoding/json on every line. Bytes/op
// is the whole corpus; lines/s counts corpus lines.
func BenchmarkDecode(b *testing.B) {
	for _, cfg := range benchCorpora {
		b.Run("corpus="+string(cfg.Mix), func(b *testing.B) {
			f := mustFixture(b, cfg)
			for _, im := range impls() {
				b.Run("impl="+im.name, func(b *testing.B) {
					checkImpl(b, f, im)
					var acc int64
					visit := func(r *record) { acc += r.Message.Usage.OutputTokens + int64(len(r.UUID)) }
					var dec decodeFunc
					if im.newDecoder != nil {
						dec = im.newDecoder()
					}
					buf := make([]byte, 0, maxLen(f.c.lines))
					// Warm up: buffers grow to the corpus's needs once,
					// before b.Loop resets the timer and the counters.
					if dec != nil {
						if err := dec(f.c, visit); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportAllocs()
					b.SetBytes(int64(len(f.c.data)))
					for b.Loop() {
						if dec == nil {
							acc += int64(im.floor(f.c, buf))
							continue
						}
						if err := dec(f.c, visit); err != nil {
							b.Fatal(err)
						}
					}
					sink += acc
					b.ReportMetric(float64(len(f.c.lines))*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
				})
			}
		})
	}
}

func maxLen(lines [][]byte) int {
	n := 0
	for _, l := range lines {
		n = max(n, len(l))
	}
	return n
}
