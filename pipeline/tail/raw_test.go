package tail

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/redact"
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

// The original lines are published, byte for byte, before the entries of
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
	require.Equal(t, msgs[1].raw, chunks[0], "the chunk comes with the entries of its lines, first")
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
	var b bytes.Buffer
	b.WriteString(piHeader("big"))
	for i := 1; i <= 40; i++ {
		// Incompressible-ish content so that S2 cannot fold it away.
		b.WriteString(`{"type":"message","id":"b` + strconv.Itoa(i) + `","parentId":null,"timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"` + noise(i, 3000) + `","timestamp":1767225600000}}` + "\n")
	}
	h.write("big.jsonl", b.String())
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
	require.Equal(t, b.String(), string(joined))
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
