package tail

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/schema"
)

// ampThread returns an Amp thread document (pretty-printed, as Amp
// writes it) holding the given messages.
func ampThread(title string, msgs ...string) string {
	return "{\n  \"v\": 1,\n  \"id\": \"T-doc-1\",\n  \"created\": 1790154000000,\n  \"title\": " + fmt.Sprintf("%q", title) +
		",\n  \"messages\": [\n    " + strings.Join(msgs, ",\n    ") + "\n  ]\n}\n"
}

func ampUser(id int, text string) string {
	return fmt.Sprintf(`{"role":"user","messageId":%d,"content":[{"type":"text","text":%q}],"meta":{"sentAt":%d}}`, id, text, 1790154000000+int64(id)*1000)
}

func ampReply(id int, state string, out int) string {
	usage := ""
	if out > 0 {
		usage = fmt.Sprintf(`,"usage":{"model":"claude-sonnet-4-5-20250929","inputTokens":10,"outputTokens":%d,"cacheReadInputTokens":100,"timestamp":"2026-09-23T09:00:%02d.000Z"}`, out, id)
	}
	return fmt.Sprintf(`{"role":"assistant","messageId":%d,"content":[{"type":"text","text":"reply %d"}],"state":{"type":%q}%s}`, id, id, state, usage)
}

// streamEntries returns the entries of msgs, every copy (not distinct).
func streamEntries(msgs []got) []schema.Entry {
	var out []schema.Entry
	for _, g := range msgs {
		if g.dead == nil && g.raw == nil {
			out = append(out, g.entry)
		}
	}
	return out
}

// waitEntries waits until the stream holds n entries, copies included,
// and, once the tailer looked at every file again, still n.
func (h *harness) waitEntries(n int) []schema.Entry {
	h.t.Helper()
	natstest.CheckFor(h.t, 2*time.Minute, 20*time.Millisecond, func() error {
		if got := len(streamEntries(h.stream())); got != n {
			return fmt.Errorf("stream holds %d entries, want %d", got, n)
		}
		return nil
	})
	h.settle(true)
	got := streamEntries(h.stream())
	require.Len(h.t, got, n, "entries in the stream once the tailer caught up")
	return got
}

// rewrite replaces the file at path by data the way an agent saving a
// document does: in place (truncated and written) or by renaming a new
// file over it (another inode).
func rewrite(t *testing.T, path, data string, rename bool) {
	t.Helper()
	if !rename {
		require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
		return
	}
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+filepath.Base(path)+".partial")
	require.NoError(t, os.WriteFile(tmp, []byte(data), 0o644))
	require.NoError(t, os.Rename(tmp, path))
}

// An Amp thread rewritten whole, in place and by rename, while the
// tailer follows it: every message reaches the stream once per content
// (counted on the stream, copies included), a message still streaming
// not at all, a reply that got its usage again under its key, and a
// rewrite that changes nothing publishes nothing.
func TestTailer_DocumentRewritten(t *testing.T) {
	h := newHarness(t)
	u0, u2 := ampUser(0, "hello"), ampUser(2, "again")
	path := h.write("threads/T-doc-1.json", ampThread("t", u0))
	h.start()
	got := h.waitEntries(2) // header, u0
	require.Equal(t, schema.FormatAmp, got[0].Format)

	rewrite(t, path, ampThread("t", u0, ampReply(1, "streaming", 0)), false)
	h.waitEntries(2) // a streaming reply is not published
	rewrite(t, path, ampThread("t", u0, ampReply(1, "complete", 0)), true)
	got = h.waitEntries(3) // the reply, done, without usage yet
	require.Nil(t, got[2].Usage)
	rewrite(t, path, ampThread("t", u0, ampReply(1, "complete", 50)), false)
	got = h.waitEntries(4) // the same reply with its usage, under its key and first time
	require.Equal(t, got[2].Key(), got[3].Key())
	require.Equal(t, got[2].TS, got[3].TS, "a message keeps the time it was first published with")
	require.NotEqual(t, time.Date(2026, 9, 23, 9, 0, 1, 0, time.UTC), got[3].TS, "not its usage's time")
	require.Equal(t, "amp:T-doc-1:1", got[3].UsageKey)
	require.Equal(t, int64(50), got[3].Usage.Output)

	// The same content written again, in place and by rename: nothing.
	same := ampThread("t", u0, ampReply(1, "complete", 50))
	rewrite(t, path, same, false)
	rewrite(t, path, same, true)
	h.waitEntries(4)
	require.Positive(t, h.tl.Metrics().Snapshot().DocUnchanged)

	// A new message and a new title: those two only.
	rewrite(t, path, ampThread("t2", u0, ampReply(1, "complete", 50), u2), true)
	got = h.waitEntries(6)
	require.Equal(t, "t2", got[4].Title)
	require.Equal(t, "2", got[5].EntryID)
	for _, e := range got {
		require.Equal(t, path, e.Path)
	}
}

// A restart reads the document again and publishes only what changed
// while the tailer was stopped: the checkpoint holds the digests of
// what was acknowledged.
func TestTailer_DocumentRestart(t *testing.T) {
	h := newHarness(t)
	u0 := ampUser(0, "hello")
	path := h.write("threads/T-doc-1.json", ampThread("t", u0, ampReply(1, "complete", 5)))
	h.start()
	h.waitEntries(3)
	h.stop()

	// Written again with the same content (a new mtime, a new inode),
	// then a restart: nothing.
	rewrite(t, path, ampThread("t", u0, ampReply(1, "complete", 5)), true)
	h.start()
	h.waitEntries(3)
	h.stop()

	// The reply grew and a message came while stopped: those two.
	rewrite(t, path, ampThread("t", u0, ampReply(1, "complete", 9), ampUser(2, "more")), false)
	h.start()
	got := h.waitEntries(5)
	require.Equal(t, int64(9), got[3].Usage.Output)
	require.Equal(t, "2", got[4].EntryID)
}

// A document read half-written (a rewrite in place caught in the middle)
// is counted, not published nor skipped, and read whole at its next
// change; a thread-named file of no known shape is skipped as not a
// transcript.
func TestTailer_DocumentHalfWritten(t *testing.T) {
	h := newHarness(t)
	full := ampThread("t", ampUser(0, "hello"))
	path := h.write("threads/T-doc-1.json", full[:len(full)/2])
	h.write("threads/T-other.json", `{"some":"config"}`)
	h.start()
	natstest.CheckFor(t, time.Minute, 10*time.Millisecond, func() error {
		s := h.tl.Metrics().Snapshot()
		if s.DocInvalid < 1 || s.Skipped < 1 {
			return fmt.Errorf("%d invalid documents, %d skipped files", s.DocInvalid, s.Skipped)
		}
		return nil
	})
	rewrite(t, path, full, false)
	got := h.waitEntries(2)
	require.Equal(t, "hello", got[1].Text)

	// The skipped file becomes a thread: read again.
	rewrite(t, filepath.Join(h.dir, "threads", "T-other.json"), strings.ReplaceAll(ampThread("o", ampUser(0, "hi")), "T-doc-1", "T-other"), false)
	got = h.waitEntries(4)
	require.Equal(t, "T-other", got[3].SessionID)
}

// A document over the size limit is not read: counted and logged.
func TestTailer_DocumentTooLarge(t *testing.T) {
	h := newHarness(t)
	h.write("threads/T-doc-1.json", ampThread("t", ampUser(0, strings.Repeat("x", 4096))))
	h.start(func(c *Config) { c.MaxDocumentBytes = 1024 })
	natstest.CheckFor(t, time.Minute, 10*time.Millisecond, func() error {
		if n := h.tl.Metrics().Snapshot().DocTooLarge; n < 1 {
			return fmt.Errorf("%d documents too large", n)
		}
		return nil
	})
	h.waitEntries(0)
}
