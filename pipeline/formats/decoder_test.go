package formats

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/claude"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Real-shaped lines of each format.
const (
	claudeUser  = `{"type":"user","uuid":"u1","sessionId":"s1","timestamp":"2026-03-01T08:00:00.000Z","message":{"role":"user","content":"hi"}}`
	claudeTitle = `{"type":"ai-title","aiTitle":"Hunting a flaky test","sessionId":"s1"}`
	piUser      = `{"type":"message","id":"1a2b3c4d","parentId":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi","timestamp":1767225600000}}`
	piAssistant = `{"type":"message","id":"5e6f7a8b","parentId":"1a2b3c4d","timestamp":"2026-01-01T00:00:01Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15},"stopReason":"stop","timestamp":1767225601000}}`
	codexMeta   = `{"timestamp":"2026-02-23T11:40:29.275Z","type":"session_meta","payload":{"id":"019c","cwd":"/w"}}`
	knowledge   = `{"key":"k","content":"fact","ts":"2026-01-01T00:00:00Z"}`
)

// fed is what a decoder handed out: one string per result.
type fed struct {
	results []string
}

func (f *fed) fn(r *Result) error {
	s := fmt.Sprintf("%d@%d-%d:%d", r.Line.Number, r.Line.Offset, r.Line.End, len(r.Entries))
	if len(r.Entries) > 0 {
		s += ":" + string(r.Entries[0].Format)
	}
	if r.Err != nil {
		s += ": " + r.Err.Error()
	}
	f.results = append(f.results, s)
	return nil
}

// lines numbers and places lines as a line reader would (one "\n" each).
func lines(texts ...string) []jsonl.Line {
	var out []jsonl.Line
	var off int64
	for i, t := range texts {
		end := off + int64(len(t)) + 1
		out = append(out, jsonl.Line{Bytes: []byte(t), Offset: off, End: end, Number: int64(i + 1)})
		off = end
	}
	return out
}

func mustDecoder(tb testing.TB, cfg DecoderConfig) *Decoder {
	tb.Helper()
	d, err := NewDecoder(cfg)
	require.NoError(tb, err)
	return d
}

func TestDecoder_HoldsUntilALineDecides(t *testing.T) {
	d := mustDecoder(t, DecoderConfig{Config: parse.Config{Path: "s.jsonl"}})
	var got fed
	in := lines(`{"type":"sess`, `{"type":"permission-mode","permissionMode":"default"}`, claudeUser)
	require.NoError(t, d.Decode(in[0], got.fn))
	require.NoError(t, d.Decode(in[1], got.fn))
	require.Empty(t, got.results, "nothing is handed out while the format is undecided")
	require.Equal(t, 2, d.Held())
	require.Equal(t, schema.Format(""), d.Format())

	// Held bytes are copies: the reader's buffer is reused.
	copy(in[0].Bytes, "XXXXXXXXXXXXX")
	require.NoError(t, d.Decode(in[2], got.fn))
	require.Equal(t, schema.FormatClaudeCode, d.Format())
	require.Equal(t, 0, d.Held())
	require.Len(t, got.results, 3)
	require.Equal(t, "1@0-14:0: s.jsonl:1: offset 13: jsonl: unexpected end of JSON input at offset 13", got.results[0])
	require.Equal(t, "2@14-68:1:claude-code", got.results[1])
	require.Equal(t, "3@68-193:1:claude-code", got.results[2])

	// Decided: each line is handed out at once.
	more := lines(claudeUser, claudeUser)
	more[1].Number, more[1].Offset, more[1].End = 4, 193, 318
	require.NoError(t, d.Decode(more[1], got.fn))
	require.Len(t, got.results, 4)
	require.Equal(t, "4@193-318:1:claude-code", got.results[3])
}

func TestDecoder_WeakMatchWaitsForTheEnd(t *testing.T) {
	d := mustDecoder(t, DecoderConfig{Config: parse.Config{Path: "8555a0a4.jsonl"}})
	var got fed
	in := lines(piUser, piAssistant)
	for _, l := range in {
		require.NoError(t, d.Decode(l, got.fn))
	}
	// A growing file with only a weak match stays undecided.
	require.NoError(t, d.End(false, got.fn))
	require.Empty(t, got.results)
	require.Equal(t, 2, d.Held())

	// A final one is decided from what it holds.
	require.NoError(t, d.End(true, got.fn))
	require.Equal(t, schema.FormatPi, d.Format())
	require.Equal(t, []string{"1@0-153:1:pi", "2@153-494:1:pi"}, got.results)
}

func TestDecoder_UnknownFormat(t *testing.T) {
	t.Run("Final", func(t *testing.T) {
		d := mustDecoder(t, DecoderConfig{})
		var got fed
		require.NoError(t, d.Decode(lines(knowledge)[0], got.fn))
		require.NoError(t, d.End(false, got.fn), "a growing file may still tell")
		require.ErrorIs(t, d.End(true, got.fn), ErrUnknownFormat)
		require.ErrorIs(t, d.Decode(lines(claudeUser)[0], got.fn), ErrUnknownFormat, "decided for good")
		require.Empty(t, got.results)
		require.Zero(t, d.Held())
	})
	t.Run("EmptyFinal", func(t *testing.T) {
		d := mustDecoder(t, DecoderConfig{})
		require.ErrorIs(t, d.End(true, (&fed{}).fn), ErrUnknownFormat)
	})
	t.Run("DetectLinesBound", func(t *testing.T) {
		d := mustDecoder(t, DecoderConfig{})
		var got fed
		in := make([]string, DetectLines)
		for i := range in {
			in[i] = knowledge
		}
		ls := lines(in...)
		for _, l := range ls[:DetectLines-1] {
			require.NoError(t, d.Decode(l, got.fn))
		}
		require.Equal(t, DetectLines-1, d.Held())
		require.ErrorIs(t, d.Decode(ls[DetectLines-1], got.fn), ErrUnknownFormat, "a growing file holds at most DetectLines lines")
		require.Zero(t, d.Held())
	})
	t.Run("HeldBytesBound", func(t *testing.T) {
		d := mustDecoder(t, DecoderConfig{MaxHeldBytes: 2*len(piUser) + len(knowledge)})
		var got fed
		ls := lines(piUser, knowledge, piUser)
		require.NoError(t, d.Decode(ls[0], got.fn))
		require.NoError(t, d.Decode(ls[1], got.fn))
		require.Empty(t, got.results, "within the bound")
		require.NoError(t, d.Decode(ls[2], got.fn))
		require.Len(t, got.results, 3, "at the bound, the weak match decides")
		require.Equal(t, schema.FormatPi, d.Format())

		d = mustDecoder(t, DecoderConfig{MaxHeldBytes: len(knowledge) + 1})
		require.NoError(t, d.Decode(ls[1], got.fn))
		require.ErrorIs(t, d.Decode(ls[1], got.fn), ErrUnknownFormat, "at the bound, no match: not a transcript")
	})
}

func TestDecoder_BookkeepingOnlyClaudeFileDecidesAtOnce(t *testing.T) {
	for _, line := range []string{
		claudeTitle,
		`{"type":"agent-name","agentName":"tester","sessionId":"s1"}`,
		`{"type":"custom-title","customTitle":"Flaky test hunt","sessionId":"s1"}`,
		`{"type":"last-prompt","lastPrompt":"why is it flaky?","sessionId":"s1"}`,
		`{"type":"teleported-from","sessionId":"s1","timestamp":"2026-03-01T08:00:00.000Z"}`,
		`{"type":"pr-link","prNumber":42,"prUrl":"https://github.com/o/r/pull/42","prRepository":"o/r","timestamp":"2026-03-01T08:00:00.000Z","sessionId":"s1"}`,
		`{"type":"mode","mode":"plan","sessionId":"s1"}`,
		`{"type":"permission-mode","permissionMode":"acceptEdits","sessionId":"s1"}`,
		`{"type":"bridge-session","bridgeSessionId":"br-1","lastSequenceNum":7,"sessionId":"s1"}`,
		`{"type":"file-history-delta","sessionId":"s1","messageId":"m1"}`,
		`{"type":"fork-context-ref","sessionId":"s1"}`,
		`{"type":"queue-operation","operation":"enqueue","timestamp":"2026-02-10T22:57:58.381Z","sessionId":"s1","content":"/mcp"}`,
		`{"aiTitle":"no session id, but its own field","type":"ai-title"}`,
	} {
		d := mustDecoder(t, DecoderConfig{})
		var got fed
		require.NoError(t, d.Decode(lines(line)[0], got.fn), line)
		require.Equal(t, schema.FormatClaudeCode, d.Format(), line)
		require.Len(t, got.results, 1, line)
	}
}

func TestDecoder_BookkeepingTypeNameAloneIsNotClaude(t *testing.T) {
	for _, line := range []string{
		`{"type":"mode","mode":"fast"}`,
		`{"type":"queue-operation","operation":"push","queue":"q1"}`,
		`{"type":"ai-title","title":"another tool's title"}`,
		`{"type":"permission-mode","permissionMode":"default"}`,
		`{"type":"teleported-from","from":"elsewhere"}`,
	} {
		d := mustDecoder(t, DecoderConfig{})
		var got fed
		require.NoError(t, d.Decode(lines(line)[0], got.fn), line)
		require.Equal(t, schema.Format(""), d.Format(), line)
		require.ErrorIs(t, d.End(true, got.fn), ErrUnknownFormat, line)
	}
}

func TestDecoder_TooLongInPlace(t *testing.T) {
	d := mustDecoder(t, DecoderConfig{Config: parse.Config{Path: "big.jsonl"}, MaxLineBytes: 1 << 20})
	var got fed
	tl := &jsonl.LineTooLongError{Offset: 0, Line: 1, Length: 3 << 20, Head: []byte(`{"type":"user"`)}
	require.NoError(t, d.TooLong(tl, 3<<20+1, got.fn))
	require.Empty(t, got.results, "held in its place while undecided")
	l := lines(claudeUser)[0]
	l.Number, l.Offset, l.End = 2, 3<<20+1, 3<<20+1+int64(len(claudeUser))+1
	require.NoError(t, d.Decode(l, got.fn))
	require.Equal(t, []string{
		"1@0-3145729:0: big.jsonl:1: offset 0: line of 3145728 bytes exceeds -max-line-bytes 1048576",
		"2@3145729-3145854:1:claude-code",
	}, got.results)

	// Decided: at once, and the reader's error is still there.
	tl2 := &jsonl.LineTooLongError{Offset: 3 << 21, Line: 3, Length: 2 << 20}
	var res *Result
	require.NoError(t, d.TooLong(tl2, 3<<21+2<<20+1, func(r *Result) error { res = r; return nil }))
	var de *schema.DecodeError
	require.ErrorAs(t, res.Err, &de)
	require.Equal(t, int64(3), de.Line)
	var jl *jsonl.LineTooLongError
	require.ErrorAs(t, res.Err, &jl)
	require.Same(t, tl2, jl)
	require.Nil(t, res.Line.Bytes)
	require.Equal(t, int64(3<<21+2<<20+1), res.Line.End)
}

func TestDecoder_ResetForARewrittenFile(t *testing.T) {
	d := mustDecoder(t, DecoderConfig{})
	var got fed
	require.NoError(t, d.Decode(lines(claudeUser)[0], got.fn))
	require.Equal(t, schema.FormatClaudeCode, d.Format())
	d.Reset()
	require.Equal(t, schema.Format(""), d.Format())
	require.NoError(t, d.Decode(lines(codexMeta)[0], got.fn))
	require.Equal(t, schema.FormatCodex, d.Format())
	require.Equal(t, []string{"1@0-125:1:claude-code", "1@0-98:1:codex"}, got.results)
}

func TestDecoder_ForcedFormat(t *testing.T) {
	d := mustDecoder(t, DecoderConfig{Format: schema.FormatPi})
	var got fed
	require.NoError(t, d.Decode(lines(piUser)[0], got.fn))
	require.Equal(t, []string{"1@0-153:1:pi"}, got.results, "no waiting for a strong line")
	require.NoError(t, d.End(false, got.fn))

	_, err := NewDecoder(DecoderConfig{Format: "nope"})
	require.ErrorIs(t, err, ErrUnknownFormat)
}

func TestDecoder_CallbackErrorStops(t *testing.T) {
	d := mustDecoder(t, DecoderConfig{})
	stop := errors.New("publish failed")
	n := 0
	fn := func(*Result) error { n++; return stop }
	in := lines(piUser, piUser, claudeUser)
	in[2] = jsonl.Line{Bytes: []byte(codexMeta), Offset: in[2].Offset, End: in[2].End, Number: 3}
	require.NoError(t, d.Decode(in[0], fn))
	require.NoError(t, d.Decode(in[1], fn))
	require.ErrorIs(t, d.Decode(in[2], fn), stop)
	require.Equal(t, 1, n, "the first error stops handing out")
}

func TestDecoder_SubagentSidecar(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agent-a881341.jsonl")
	line := `{"type":"user","uuid":"u1","sessionId":"s1","agentId":"a881341","isSidechain":true,"timestamp":"2026-03-01T08:00:00.000Z","message":{"role":"user","content":"go"}}`

	t.Run("Read", func(t *testing.T) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "agent-a881341.meta.json"), []byte(`{"agentType":"Explore","description":"d"}`), 0o644))
		d := mustDecoder(t, DecoderConfig{Config: parse.Config{Path: path}})
		var agentType string
		require.NoError(t, d.Decode(lines(line)[0], func(r *Result) error { agentType = r.Entries[0].AgentType; return nil }))
		require.Equal(t, "Explore", agentType)
	})
	t.Run("Broken", func(t *testing.T) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "agent-a881341.meta.json"), []byte(`[`), 0o644))
		var fileErr error
		d := mustDecoder(t, DecoderConfig{Config: parse.Config{Path: path}, OnFileError: func(err error) { fileErr = err }})
		var n int
		require.NoError(t, d.Decode(lines(line)[0], func(r *Result) error { n += len(r.Entries); return nil }))
		require.ErrorIs(t, fileErr, claude.ErrBadAgentMeta)
		require.Equal(t, 1, n, "the file is read without its agent type")
	})
}

// The steady path allocates nothing beyond what the parser does.
func TestDecoder_NoAllocationPerLine(t *testing.T) {
	line := lines(`{"type":"progress","uuid":"p1","parentUuid":"u1","sessionId":"s1","timestamp":"2026-03-01T08:00:00.000Z","data":{"type":"hook_progress","hookEvent":"SessionStart"}}`)[0]
	d := mustDecoder(t, DecoderConfig{})
	fn := func(*Result) error { return nil }
	require.NoError(t, d.Decode(line, fn))
	p := claude.New(parse.Config{})
	var dst []schema.Entry
	parser := testing.AllocsPerRun(200, func() { dst, _ = p.Parse(dst[:0], line) })
	decoder := testing.AllocsPerRun(200, func() { _ = d.Decode(line, fn) })
	require.LessOrEqual(t, decoder, parser)
}

func TestConfig_ValidateNamesTheField(t *testing.T) {
	var ce *ConfigError
	err := DecoderConfig{MaxHeldBytes: -1}.Validate()
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "max_held_bytes", ce.Field)
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.EqualError(t, err, "formats: invalid configuration: max_held_bytes=-1")
	err = DecoderConfig{Format: "word"}.Validate()
	require.ErrorIs(t, err, ErrUnknownFormat)
	err = FileReaderConfig{Workers: -2}.Validate()
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "workers", ce.Field)
}
