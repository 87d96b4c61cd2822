package tail

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/redact"
	"github.com/sessionpipe/sessionpipe/schema"
)

// rawOf returns the raw chunks of the messages, in stream order, and the
// number of entries.
func rawOf(msgs []got) (chunks []*bus.RawChunk, entries int) {
	for _, g := range msgs {
		switch {
		case g.raw != nil:
			chunks = append(chunks, g.raw)
		case g.dead == nil:
			entries++
		}
	}
	return chunks, entries
}

// joinRaw checks that chunks cover one file without gap or overlap and
// returns their data joined.
func joinRaw(t *testing.T, chunks []*bus.RawChunk) []byte {
	t.Helper()
	var out []byte
	var end, line int64 = 0, 1
	for i, c := range chunks {
		require.Equal(t, end, c.Offset, "chunk %d starts where the previous ended", i)
		require.Equal(t, line, c.Line, "chunk %d first line", i)
		require.Equal(t, "testhost", c.Host)
		require.NotEmpty(t, c.File)
		out = append(out, c.Data...)
		end, line = c.End, c.Line+c.Lines
	}
	return out
}

// The original lines are published, byte for byte, after the entries of
// the same lines: a byte order mark, CRLF terminators and blank lines
// included, and a line too long to keep left out as a hole.
func TestTailer_ArchivesOriginalLines(t *testing.T) {
	h := newHarness(t)
	long := `{"type":"message","id":"long","message":{"role":"user","content":"` + strings.Repeat("x", 5000) + `"}}` + "\n"
	first := "\ufeff" + strings.TrimSuffix(piHeader("s1"), "\n") + "\r\n" + "\n\n" + piLine(1) + "  \n" + long + piLine(2)
	path := h.write("s1.jsonl", first)
	h.start(func(c *Config) { c.Archive = true; c.MaxLineBytes = 4096 })
	msgs := h.stays(1 + 3 + 1) // a chunk, three entries, the long line's dead letter
	chunks, entries := rawOf(msgs)
	require.Len(t, chunks, 1)
	require.Equal(t, 3, entries)
	require.NotNil(t, msgs[0].dead, "the dead letters of a batch's lines come before its message")
	require.Equal(t, msgs[len(msgs)-1].raw, chunks[0], "the chunk comes after the entries of its lines")
	c := chunks[0]
	require.Equal(t, []string{"s1"}, c.Sessions)
	require.Equal(t, "pi", c.Format)
	require.Equal(t, int64(7), c.Lines)
	longAt := int64(strings.Index(first, long))
	require.Equal(t, []bus.Hole{{Line: 6, Offset: longAt, End: longAt + int64(len(long))}}, c.Holes)
	require.Equal(t, strings.Replace(first, long, "", 1), string(joinRaw(t, chunks)))

	// Appends, a half-written line completed later, a restart in between.
	h.appendTo(path, piLine(3)+piLine(4)[:40])
	h.stays(5 + 2)
	h.stop()
	h.appendTo(path, piLine(4)[40:]+piLine(5))
	h.start(func(c *Config) { c.Archive = true; c.MaxLineBytes = 4096 })
	msgs = h.stays(7 + 3)
	chunks, entries = rawOf(msgs)
	require.Equal(t, 6, entries)
	require.Len(t, chunks, 3)
	all, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, strings.Replace(string(all), long, "", 1), string(joinRaw(t, chunks)))
	snap := h.tl.Metrics().Snapshot()
	require.Equal(t, int64(1), snap.RawChunks, "this process sent the last chunk")
	require.Equal(t, int64(len(piLine(4))+len(piLine(5))), snap.RawBytes)
}

// Redaction applies to the original lines as to the entries; metadata
// mode archives nothing.
func TestTailer_ArchiveRedacted(t *testing.T) {
	const key = "AKIAQX7ZP3LM2RTY6WEB"
	secret := `{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"deploy with ` + key + ` please","timestamp":1767225600000}}` + "\n"
	for _, mode := range []redact.Mode{redact.Redacted, redact.Metadata, redact.Full} {
		t.Run(mode.String(), func(t *testing.T) {
			h := newHarness(t)
			h.write("s.jsonl", piHeader("s")+secret+piLine(2))
			r, err := redact.New(redact.Config{Mode: mode})
			require.NoError(t, err)
			h.start(func(c *Config) { c.Redactor = r; c.Archive = true })
			if mode == redact.Metadata {
				msgs := h.stays(3)
				chunks, _ := rawOf(msgs)
				require.Empty(t, chunks)
				return
			}
			msgs := h.stays(4)
			chunks, _ := rawOf(msgs)
			require.Len(t, chunks, 1)
			data := joinRaw(t, chunks)
			orig := piHeader("s") + secret + piLine(2)
			if mode == redact.Full {
				require.Equal(t, orig, string(data))
				require.Zero(t, chunks[0].Redacted)
				return
			}
			require.NotContains(t, string(data), key)
			require.Equal(t, strings.Replace(orig, key, "[REDACTED:aws-access-key]", 1), string(data))
			require.Equal(t, int64(1), chunks[0].Redacted)
			require.Equal(t, int64(2), h.tl.Metrics().Redacted().Count(redact.AWSAccessKey), "entry and original line")
		})
	}
}

// Lines larger than a message are archived in parts that join to them.
func TestTailer_ArchiveParts(t *testing.T) {
	h := newHarness(t)
	big := noisyPiFile("big", 40, 3000)
	h.write("big.jsonl", big)
	h.start(func(c *Config) { c.Archive = true; c.MaxPayload = 32 << 10 })
	h.settle(true)
	msgs := h.stream()
	chunks, entries := rawOf(msgs)
	require.Equal(t, 41, entries)
	var joined []byte
	for _, c := range chunks {
		if c.Parts > 1 {
			require.GreaterOrEqual(t, c.Part, 1)
		}
		joined = append(joined, c.Data...)
	}
	require.Greater(t, len(chunks), 2, "split into parts")
	require.Equal(t, big, string(joined))
}

// noisyPiFile returns a pi session file of lines user messages of size
// characters each, incompressible enough that S2 cannot fold them away.
func noisyPiFile(session string, lines, size int) string {
	var b strings.Builder
	b.WriteString(piHeader(session))
	for i := 1; i <= lines; i++ {
		b.WriteString(`{"type":"message","id":"b` + strconv.Itoa(i) + `","parentId":null,"timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"` + noise(i, size) + `","timestamp":1767225600000}}` + "\n")
	}
	return b.String()
}

// noise returns n base-32 characters from a seeded generator.
func noise(seed, n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz234567"
	x := uint32(seed)*2654435761 + 1
	out := make([]byte, n)
	for i := range out {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		out[i] = alphabet[x&31]
	}
	return string(out)
}

// A raw chunk is stored after a message for the same lines (their batch
// message, of no entry if need be, or a long line's own entry messages):
// the exporter purges raw chunks once archived, and a raw message at the
// head of the stream would move the stream's first sequence past a
// consumer that had not read it, which it would report as a gap.
func TestTailer_RawFollowsItsLines(t *testing.T) {
	h := newHarness(t)
	big := noisyPiFile("big", 3, 40000)
	h.write("big.jsonl", big)
	small := h.write("small.jsonl", piFile("small", 0, 5))
	h.start(func(c *Config) { c.Archive = true; c.MaxPayload = 32 << 10 })
	h.settle(true)
	// Lines of no entry (blank ones, a broken one): a batch message of
	// none, then their chunk.
	f, err := os.OpenFile(small, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("\n  \n{\"type\":\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	natstest.CheckFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		for _, g := range h.stream() {
			if g.raw != nil && string(g.raw.Data) == "\n  \n{\"type\":\n" {
				return nil
			}
		}
		return errors.New("the lines of no entry are not archived yet")
	})

	ctx := t.Context()
	s, err := h.js.Stream(ctx, bus.DefaultStream)
	require.NoError(t, err)
	info, err := s.Info(ctx)
	require.NoError(t, err)
	type span struct {
		file     string
		from, to int64
	}
	seen := map[span]bool{} // spans of the batch messages so far
	type at struct {
		path   string
		offset int64
	}
	lines := map[at]bool{} // lines of the messages of one entry so far
	var chunks, blank int
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := s.GetMsg(ctx, seq)
		require.NoError(t, err)
		switch {
		case strings.Contains(m.Subject, ".raw."):
			require.NotEqual(t, info.State.FirstSeq, seq, "a raw chunk heads the stream")
			c, err := bus.DecodeRaw(m.Header, m.Data, nil)
			require.NoError(t, err)
			require.True(t, seen[span{c.File, c.Offset, c.End}] || lines[at{c.Path, c.Offset}],
				"raw chunk %s %d-%d at %d: no message of its lines before it", c.File, c.Offset, c.End, seq)
			if string(c.Data) == "\n  \n{\"type\":\n" {
				blank++
			}
			chunks++
		case bus.IsBatch(m.Header):
			var file string
			var from, to int64
			_, err := fmt.Sscanf(m.Header.Get(bus.HeaderSpan), "%s %d-%d", &file, &from, &to)
			require.NoError(t, err)
			seen[span{file, from, to}] = true
		case strings.Contains(m.Subject, ".entries."):
			var e schema.Entry
			require.NoError(t, bus.DecodeEntry(m.Header, m.Data, &e))
			lines[at{e.Path, e.Offset}] = true
		}
	}
	require.Positive(t, chunks)
	require.Equal(t, 1, blank, "the lines of no entry were archived")
}
