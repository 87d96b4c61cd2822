package tail

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/schema"
)

// codebuffChat returns a Codebuff chat-messages.json holding msgs: one
// message a line, or pretty-printed as a whole.
func codebuffChat(t *testing.T, pretty bool, msgs ...string) string {
	t.Helper()
	if !pretty {
		return "[" + strings.Join(msgs, ",\n") + "]"
	}
	var v []any
	require.NoError(t, json.Unmarshal([]byte("["+strings.Join(msgs, ",")+"]"), &v))
	out, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	return string(out) + "\n"
}

func codebuffUser(id, text string) string {
	return fmt.Sprintf(`{"id":%q,"variant":"user","content":%q,"timestamp":"2026-01-02T03:04:05Z"}`, id, text)
}

func codebuffReply(id string, out int) string {
	return fmt.Sprintf(`{"id":%q,"variant":"ai","content":"done","timestamp":"2026-01-02T03:04:09Z","metadata":{"model":"claude-sonnet-4-5","usage":{"inputTokens":100,"outputTokens":%d,"cacheReadInputTokens":1000}}}`, id, out)
}

// A Codebuff chat-messages.json rewritten whole, in place and by rename,
// while the tailer follows it: an empty chat is nothing (and read again
// when it grows), every message reaches the stream once, a chat written
// again pretty-printed (every message at another offset and line)
// publishes nothing, and a new message is published alone.
func TestTailer_DocumentCodebuff(t *testing.T) {
	h := newHarness(t)
	path := h.write("manicode/projects/proj/chats/2026-01-02T03-04-05.000Z/chat-messages.json", "[]")
	h.start()
	h.waitEntries(0)
	require.Positive(t, h.tl.Metrics().Snapshot().Skipped, "an empty chat is of no known shape")

	u1, a1, u2 := codebuffUser("u1", "hello"), codebuffReply("a1", 50), codebuffUser("u2", "thanks")
	rewrite(t, path, codebuffChat(t, false, u1), false)
	got := h.waitEntries(1)
	require.Equal(t, schema.FormatCodebuff, got[0].Format)
	require.Equal(t, "manicode/proj/2026-01-02T03-04-05.000Z", got[0].SessionID)

	rewrite(t, path, codebuffChat(t, false, u1, a1), true)
	got = h.waitEntries(2)
	require.Equal(t, "a1", got[1].EntryID)
	require.Equal(t, "codebuff:manicode/proj/2026-01-02T03-04-05.000Z:a1", got[1].UsageKey)
	require.Equal(t, int64(50), got[1].Usage.Output)

	// The same messages written again, pretty-printed, in place and by
	// rename: nothing new.
	rewrite(t, path, codebuffChat(t, true, u1, a1), false)
	rewrite(t, path, codebuffChat(t, true, u1, a1), true)
	h.waitEntries(2)
	require.Positive(t, h.tl.Metrics().Snapshot().DocUnchanged)

	rewrite(t, path, codebuffChat(t, true, u1, a1, u2), false)
	got = h.waitEntries(3)
	require.Equal(t, "u2", got[2].EntryID)
	require.Greater(t, got[2].Line, int64(1), "located at its line of the file")
	for _, e := range got {
		require.Equal(t, path, e.Path)
		require.Equal(t, schema.FormatCodebuff, e.Format)
	}
}
