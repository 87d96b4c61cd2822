package tail

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
)

// This file tests that a restart resumes only where the file still holds
// what was checkpointed: a file rewritten while the tailer was stopped,
// overwritten in place while it runs, or a checkpoint edited by hand is
// read again from its start, and the stream's duplicate window drops
// what it already holds.

// piLineAs is a pi line like piLine(n) with another entry id prefix and
// text: the same length when text is "line".
func piLineAs(prefix string, n int, text string) string {
	return fmt.Sprintf(`{"type":"message","id":"%s%06d","parentId":null,"timestamp":"2026-01-01T00:00:%02d.000Z","message":{"role":"user","content":"%s %d","timestamp":1767225600000}}`+"\n", prefix, n, n%60, text, n)
}

func piLinesAs(prefix string, from, to int, text string) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		b.WriteString(piLineAs(prefix, i, text))
	}
	return b.String()
}

// idsAs is the ids prefix%06d for from..to.
func idsAs(prefix string, from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("%s%06d", prefix, i))
	}
	return out
}

// loadStates returns the saved checkpoint states of h's tailer.
func (h *harness) loadStates() []FileState {
	h.t.Helper()
	cp, err := OpenCheckpoints(h.state)
	require.NoError(h.t, err)
	states, err := cp.Load()
	require.NoError(h.t, err)
	return states
}

// editCheckpoint rewrites the checkpoint file's JSON document with edit.
func (h *harness) editCheckpoint(edit func(doc map[string]any)) {
	h.t.Helper()
	path := filepath.Join(h.state, checkpointFile)
	data, err := os.ReadFile(path)
	require.NoError(h.t, err)
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // a fingerprint does not fit a float64
	require.NoError(h.t, dec.Decode(&doc))
	edit(doc)
	data, err = json.Marshal(doc)
	require.NoError(h.t, err)
	require.NoError(h.t, os.WriteFile(path, data, 0o644))
}

// file0 returns the first file of a checkpoint document.
func file0(doc map[string]any) map[string]any {
	return doc["files"].([]any)[0].(map[string]any)
}

func TestTailer_RewrittenWhileStopped(t *testing.T) {
	t.Run("shorter, then appended", func(t *testing.T) {
		// Lines 21–30 replaced by shorter ones: the file is shorter than
		// its checkpoint; five lines appended after the restart.
		h, path := stoppedAfter(t, 30)
		require.NoError(t, os.WriteFile(path, []byte(piFile("s", 0, 20)+piLinesAs("r", 21, 30, "x")), 0o644))
		h.start()
		h.waitMsgs(41)
		h.appendTo(path, piLinesAs("a", 31, 35, "line"))
		msgs := h.stays(46)
		got := ids(t, msgs, "s")
		want := append(append(wantIDs("s", 0, 30), idsAs("r", 21, 30)...), idsAs("a", 31, 35)...)
		require.ElementsMatch(t, want, got)
	})
	t.Run("longer", func(t *testing.T) {
		// Lines 21–80 replace 21–30: longer than the checkpoint, the
		// first kilobyte unchanged.
		h, path := stoppedAfter(t, 30)
		require.NoError(t, os.WriteFile(path, []byte(piFile("s", 0, 20)+piLinesAs("r", 21, 80, "rewritten")), 0o644))
		h.start()
		msgs := h.stays(31 + 60)
		require.ElementsMatch(t, append(wantIDs("s", 0, 30), idsAs("r", 21, 80)...), ids(t, msgs, "s"))
		require.Equal(t, int64(1), h.tl.Metrics().Snapshot().Rewrites)
	})
	t.Run("unchanged", func(t *testing.T) {
		// The check costs nothing when the file is what was read: only
		// the new lines are sent.
		h, path := stoppedAfter(t, 30)
		h.appendTo(path, piFile("s", 31, 35))
		h.start()
		h.stays(36)
		require.Equal(t, int64(5), h.tl.Metrics().Snapshot().Entries)
		require.Zero(t, h.tl.Metrics().Snapshot().Rewrites)
	})
}

// dd conv=notrunc: the last 60 lines overwritten in place, same size,
// while the tailer runs. The modification time moved; the bytes before
// the last line read differ.
func TestTailer_OverwrittenInPlace(t *testing.T) {
	h := newHarness(t)
	path := h.write("s.jsonl", piFile("s", 0, 100))
	h.start()
	h.waitMsgs(101)
	old, err := os.ReadFile(path)
	require.NoError(t, err)
	at := strings.Index(string(old), piLine(41))
	require.Positive(t, at)
	repl := piLinesAs("r", 41, 100, "line")
	require.Len(t, repl, len(old)-at, "same size")
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte(repl), int64(at))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	msgs := h.stays(161)
	require.ElementsMatch(t, append(wantIDs("s", 0, 100), idsAs("r", 41, 100)...), ids(t, msgs, "s"))
}

func TestTailer_CheckpointEdited(t *testing.T) {
	t.Run("offset past the end", func(t *testing.T) {
		h, path := stoppedAfter(t, 10)
		h.editCheckpoint(func(doc map[string]any) {
			off, err := file0(doc)["offset"].(json.Number).Int64()
			require.NoError(t, err)
			file0(doc)["offset"] = off + 5000
		})
		h.start()
		h.appendTo(path, piFile("s", 11, 15))
		msgs := h.stays(16)
		require.Equal(t, wantIDs("s", 0, 15), ids(t, msgs, "s"))
	})
	t.Run("offset into a line", func(t *testing.T) {
		// Lines 11–20 written while stopped; the offset moved forward
		// into line 15 would skip 11–14.
		h, path := stoppedAfter(t, 10)
		h.appendTo(path, piFile("s", 11, 20))
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		mid := strings.Index(string(data), piLine(15)) + 30
		h.editCheckpoint(func(doc map[string]any) { file0(doc)["offset"] = mid })
		h.start()
		msgs := h.stays(21)
		require.Equal(t, wantIDs("s", 0, 20), ids(t, msgs, "s"))
	})
	t.Run("version 1", func(t *testing.T) {
		// A checkpoint written before checks existed is read as is and
		// saved as version 2.
		h, path := stoppedAfter(t, 10)
		h.editCheckpoint(func(doc map[string]any) {
			doc["version"] = 1
			delete(file0(doc), "check_len")
			delete(file0(doc), "check_sum")
			delete(file0(doc), "mtime")
		})
		h.appendTo(path, piFile("s", 11, 15))
		h.start()
		msgs := h.stays(16)
		require.Equal(t, wantIDs("s", 0, 15), ids(t, msgs, "s"))
		require.Equal(t, int64(5), h.tl.Metrics().Snapshot().Entries)
		h.stop()
		data, err := os.ReadFile(filepath.Join(h.state, checkpointFile))
		require.NoError(t, err)
		require.Contains(t, string(data), `"version":2`)
		states := h.loadStates()
		require.Len(t, states, 1)
		require.Equal(t, checkBytes, states[0].CheckLen)
	})
	t.Run("corrupt", func(t *testing.T) {
		h, path := stoppedAfter(t, 10)
		cp := filepath.Join(h.state, checkpointFile)
		require.NoError(t, os.WriteFile(cp, []byte(`{"version":2,"files":[{"dev":1,`), 0o644))
		tl, err := New(Config{Watch: []string{h.dir + "/**"}, StateDir: h.state, Host: "testhost", Publisher: h.pub})
		require.NoError(t, err)
		err = tl.Run(t.Context())
		require.ErrorIs(t, err, ErrCheckpoint)
		require.ErrorContains(t, err, cp)
		require.ErrorContains(t, err, "move it away to read every followed file again")

		// Done as it says: everything is read again, the stream keeps
		// each entry once.
		require.NoError(t, os.Rename(cp, cp+".bad"))
		h.start()
		h.appendTo(path, piFile("s", 11, 12))
		msgs := h.stays(13)
		require.Equal(t, wantIDs("s", 0, 12), ids(t, msgs, "s"))
	})
}

// A failing save (here: the state directory removed under the tailer)
// is retried with a doubling wait, not every interval.
func TestBackoff(t *testing.T) {
	var b backoff
	now := time.Unix(1000, 0)
	require.True(t, b.due(now))
	var waits []time.Duration
	for range 10 {
		next := b.failed(now, time.Second)
		waits = append(waits, next.Sub(now))
		require.False(t, b.due(now))
		require.False(t, b.due(next.Add(-time.Millisecond)))
		require.True(t, b.due(next))
		now = next
	}
	require.Equal(t, []time.Duration{
		time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second,
		time.Minute, time.Minute, time.Minute, time.Minute,
	}, waits)
	require.Equal(t, 10, b.failures)
}

// Two long lines may end with the same kilobyte (padding, a repeated tool
// output): the last line replaced by another of the same length that
// ends alike is told apart by its start.
func TestTailer_RewrittenLongLineEndingAlike(t *testing.T) {
	long := func(id string) string {
		return fmt.Sprintf(`{"type":"message","id":"%s","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"%s","timestamp":1767225600000}}`+"\n",
			id, strings.Repeat("p", 3000))
	}
	h := newHarness(t)
	path := h.write("s.jsonl", piFile("s", 0, 10)+long("old-long")) // the long line starts past the first kilobyte
	h.start()
	h.waitMsgs(12)
	h.stop()
	require.NoError(t, os.WriteFile(path, []byte(piFile("s", 0, 10)+long("new-long")), 0o644))
	h.start()
	msgs := h.stays(13)
	require.ElementsMatch(t, append(wantIDs("s", 0, 10), "old-long", "new-long"), ids(t, msgs, "s"))
}

// A file rewritten while it is read, its first kilobyte kept and the rest
// replaced (truncated and written again): the reader must not go on with
// the new bytes at its old position, which would tear a line and skip
// the new lines before it.
func TestTailer_RewriteWhileReadingKeepsHead(t *testing.T) {
	// Long enough that the rewrite lands while it is read: batches of
	// 1,024 lines read a few thousand lines a millisecond.
	const rewriteLines = 30000
	h := newHarness(t)
	head := piFile("w", 0, 20) // well over a kilobyte
	path := h.write("w.jsonl", head+piLinesAs("o", 21, rewriteLines, "line"))
	h.start()
	natstest.CheckFor(t, 10*time.Second, time.Millisecond, func() error {
		if h.tl.Metrics().Snapshot().Lines < 100 {
			return fmt.Errorf("not reading yet")
		}
		return nil
	})
	require.NoError(t, os.WriteFile(path, []byte(head+piLinesAs("n", 21, rewriteLines, "line")), 0o644))
	obs := newObserver(h.js)
	natstest.CheckFor(t, 60*time.Second, 20*time.Millisecond, func() error {
		if err := obs.refresh(t.Context()); err != nil {
			return err
		}
		n := 0
		for _, id := range ids(t, obs.msgs, "w") {
			if strings.HasPrefix(id, "n") {
				n++
			}
		}
		if n < rewriteLines-20 {
			return fmt.Errorf("%d entries of the new content stored", n)
		}
		return nil
	})
	h.settle(true)
	require.NoError(t, obs.refresh(t.Context()))
	for _, g := range obs.msgs {
		if g.dead != nil {
			require.Failf(t, "dead letter", "line %d offset %d: %s", g.dead.Line, g.dead.Offset, g.dead.Error)
		}
	}
	got := ids(t, obs.msgs, "w")
	have := make(map[string]bool, len(got))
	for _, id := range got {
		have[id] = true
	}
	for _, id := range append(wantIDs("w", 0, 20), idsAs("n", 21, rewriteLines)...) {
		require.True(t, have[id], "entry %s of the new content is missing", id)
	}
	old := 0
	for _, id := range got {
		if strings.HasPrefix(id, "o") {
			old++
		}
	}
	require.Less(t, old, rewriteLines-20, "the test must rewrite the file before the tailer read all of it")
}

// The parser state of a file not written to for IdleTimeout is let go
// (20,000 idle transcripts would hold hundreds of MB of it) and rebuilt,
// if the file changes, by reading it again from its start: the new lines
// are published with what the start of the file said (the session id of
// its header), and nothing is sent twice.
func TestTailer_IdleDecoderRebuilt(t *testing.T) {
	for _, c := range []struct {
		name string
		old  bool // written long ago: let go right after it is read
	}{{"archived", true}, {"became idle", false}} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			path := h.write("s.jsonl", piFile("s", 0, 5))
			if c.old {
				long := time.Now().Add(-2 * time.Hour)
				require.NoError(t, os.Chtimes(path, long, long))
			}
			h.start(func(c *Config) { c.IdleTimeout = 300 * time.Millisecond })
			h.waitMsgs(6)
			natstest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
				if h.tl.dropped.Load() == 0 {
					return errors.New("decoder kept")
				}
				return nil
			})
			h.appendTo(path, piFile("s", 6, 8))
			msgs := h.stays(9)
			require.Equal(t, wantIDs("s", 0, 8), ids(t, msgs, "s"), "appended lines in the header's session")
			require.Equal(t, int64(9), h.tl.Metrics().Snapshot().Entries, "nothing sent twice")
		})
	}
}

// stoppedAfter runs a tailer over a pi file of lines 0..last until every
// entry is published, and stops it: the state a restart resumes from.
func stoppedAfter(t *testing.T, last int) (*harness, string) {
	t.Helper()
	h := newHarness(t)
	path := h.write("s.jsonl", piFile("s", 0, last))
	h.start()
	h.waitMsgs(last + 1)
	h.stop()
	return h, path
}
