package tail

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"
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
		// Inputs that do not compress: the line's batch message would not
		// fit the server's limit even compressed.
		fmt.Fprintf(&b, `{"type":"tool_use","id":"toolu_%020d","name":"Bash","input":{"command":"echo %016x%016x"}}`, i, rand.Uint64(), rand.Uint64())
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

// randomText returns n letters that do not compress.
func randomText(n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[rand.IntN(len(letters))]
	}
	return string(b)
}
