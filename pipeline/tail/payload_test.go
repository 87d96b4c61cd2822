package tail

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
)

// claudeToolCalls is a Claude Code assistant line with n tool_use blocks
// and the usage of its API call.
func claudeToolCalls(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"assistant","uuid":"tc-a1","parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/w","sessionId":"tc","version":"2.1.173","timestamp":"2026-06-15T10:00:02.000Z","requestId":"req_tc","message":{"id":"msg_tc","type":"message","role":"assistant","model":"claude-opus-4-6","stop_reason":"tool_use","content":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"type":"tool_use","id":"toolu_%020d","name":"Bash","input":{"command":"echo %d"}}`, i, i)
	}
	b.WriteString(`],"usage":{"input_tokens":3,"output_tokens":654321,"cache_read_input_tokens":1000,"cache_creation_input_tokens":2000}}}` + "\n")
	return b.String()
}

// An assistant line with 60,000 tool_use blocks (5 MB) against a server
// with the standard 1 MiB max_payload, the tailer configured for more:
// the entry is shortened to the server's limit and stored, its usage
// whole and its tool calls counted; nothing goes to the dead letters.
func TestTailer_EntryLargerThanServerPayload(t *testing.T) {
	h := newHarnessWith(t, func(o *server.Options) { o.MaxPayload = 1 << 20 })
	line := claudeToolCalls(60_000)
	require.Greater(t, len(line), 5<<20)
	user := `{"type":"user","uuid":"tc-u1","parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/w","sessionId":"tc","version":"2.1.173","timestamp":"2026-06-15T10:00:01.000Z","message":{"role":"user","content":"go"}}` + "\n"
	h.write("tc.jsonl", user+line)
	h.start(func(c *Config) { c.MaxPayload = 8 << 20 })
	msgs := h.stays(2)
	var found bool
	for _, g := range msgs {
		if g.dead != nil {
			require.Failf(t, "dead letter", "%s line %d offset %d: %.200s", g.dead.Path, g.dead.Line, g.dead.Offset, g.dead.Error)
		}
		if g.entry.EntryID != "tc-a1" {
			continue
		}
		found = true
		e := g.entry
		require.NotNil(t, e.Usage)
		require.Equal(t, int64(654321), e.Usage.Output)
		require.Equal(t, int64(3), e.Usage.Input)
		require.Equal(t, int64(1000), e.Usage.CacheRead)
		require.Equal(t, int64(2000), e.Usage.CacheWrite)
		require.Equal(t, "claude-opus-4-6", e.Model)
		require.True(t, e.Truncated)
		require.Equal(t, 60_000, len(e.ToolCalls)+e.ToolCallsOmitted)
		require.Equal(t, int64(2), e.Line)
	}
	require.True(t, found)
	require.Equal(t, int64(1), h.tl.Metrics().Snapshot().Truncated)
	require.Zero(t, h.tl.Metrics().Snapshot().PublishErrors)
}

// A message the server refuses for good becomes a dead letter that says
// where its line is: path, line number and offset.
func TestTailer_RejectedMessageLocated(t *testing.T) {
	h := newHarness(t)
	ctx := t.Context()
	s, err := h.js.Stream(ctx, bus.DefaultStream)
	require.NoError(t, err)
	cfg := s.CachedInfo().Config
	cfg.MaxMsgSize = 8000
	_, err = h.js.UpdateStream(ctx, cfg)
	require.NoError(t, err)
	big := `{"type":"message","id":"big","parentId":null,"timestamp":"2026-01-01T00:00:30.000Z","message":{"role":"user","content":"` +
		strings.Repeat("y", 12000) + `","timestamp":1767225600000}}` + "\n"
	head := piHeader("s13") + piLine(1)
	path := h.write("s13.jsonl", head+big+piLine(2))
	h.start()
	msgs := h.stays(4)
	var dead []*bus.DeadLetter
	for _, g := range msgs {
		if g.dead != nil {
			dead = append(dead, g.dead)
		}
	}
	require.Len(t, dead, 1)
	require.Equal(t, path, dead[0].Path)
	require.Equal(t, int64(3), dead[0].Line)
	require.Equal(t, int64(len(head)), dead[0].Offset)
}
