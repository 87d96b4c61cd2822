package bus_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
	"github.com/zeebo/xxh3"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/schema"
)

// batchOf returns the batch message of entries [from, to) of testEntry,
// with their original lines when withRaw is set.
func batchOf(tb testing.TB, from, to int, withRaw bool) (*nats.Msg, []schema.Entry, []byte) {
	tb.Helper()
	var jsonl, lines []byte
	var entries []schema.Entry
	for i := from; i < to; i++ {
		e := testEntry(i)
		entries = append(entries, *e)
		jsonl = append(e.AppendJSON(jsonl), '\n')
		lines = fmt.Appendf(lines, "{\"n\":%d}\n", i)
	}
	span := bus.BatchSpan{Host: "host-1", Format: string(schema.FormatClaudeCode), File: "1:2",
		Offset: int64(from) * 100, End: int64(to) * 100, Line: int64(from) + 1, Lines: int64(to - from)}
	var raw *bus.RawChunk
	if withRaw {
		raw = &bus.RawChunk{Host: "host-1", Path: "/p/s1.jsonl", Format: string(schema.FormatClaudeCode), File: "1:2",
			Offset: span.Offset, End: span.End, Line: span.Line, Lines: span.Lines, Sessions: []string{"s1"},
			TS: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Data: lines}
	}
	m, err := bus.BatchMsg(bus.DefaultPrefix, span, jsonl, to-from)
	if raw != nil {
		m, err = bus.BatchMsgWithRaw(bus.DefaultPrefix, span, jsonl, to-from, raw)
	}
	require.NoError(tb, err)
	return m, entries, lines
}

func TestBatchMsg_RoundTrip(t *testing.T) {
	m, want, lines := batchOf(t, 0, 40, true)
	require.True(t, bus.IsBatch(m.Header))
	require.Equal(t, bus.EntrySubject(bus.DefaultPrefix, "host-1", "claude-code"), m.Subject)
	require.Equal(t, "40", m.Header.Get(bus.HeaderEntries))
	require.Equal(t, "1:2 0-4000 1+40", m.Header.Get(bus.HeaderSpan))
	jsonlBytes := 0
	for i := range want {
		jsonlBytes += len(want[i].AppendJSON(nil)) + 1
	}
	require.Less(t, len(m.Data), (len(lines)+jsonlBytes)/2, "compressed")

	var got []schema.Entry
	require.NoError(t, bus.DecodeEntries(m.Header, m.Data, func(e *schema.Entry) error {
		got = append(got, *e)
		return nil
	}))
	require.Equal(t, want, got)

	c, ok, err := bus.DecodeBatchRaw(m.Header, m.Data)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, lines, c.Data, "original lines byte for byte")
	require.Equal(t, int64(0), c.Offset)
	require.Equal(t, int64(4000), c.End)
	require.Equal(t, []string{"s1"}, c.Sessions)

	// Without the original lines: no raw chunk, the same entries.
	m2, _, _ := batchOf(t, 0, 40, false)
	_, ok, err = bus.DecodeBatchRaw(m2.Header, m2.Data)
	require.NoError(t, err)
	require.False(t, ok)
	n := 0
	require.NoError(t, bus.DecodeEntries(m2.Header, m2.Data, func(*schema.Entry) error { n++; return nil }))
	require.Equal(t, 40, n)
}

// A released batch message's body is reused by the next message of its
// size class, and the next message is whole: a backfill does not
// allocate a body per message.
func TestBatchMsg_ReleasedBodyIsReused(t *testing.T) {
	var jsonl, lines []byte
	var want []schema.Entry
	for i := range 4000 {
		e := testEntry(i)
		want = append(want, *e)
		jsonl = append(e.AppendJSON(jsonl), '\n')
		lines = fmt.Appendf(lines, "{\"n\":%d}\n", i)
	}
	span := bus.BatchSpan{Host: "host-1", Format: string(schema.FormatClaudeCode), File: "1:2", End: 400000, Line: 1, Lines: 4000}
	raw := &bus.RawChunk{Host: "host-1", Path: "/p/s1.jsonl", Format: string(schema.FormatClaudeCode), File: "1:2",
		End: 400000, Line: 1, Lines: 4000, Data: lines}
	build := func() *nats.Msg {
		m, err := bus.BatchMsgWithRaw(bus.DefaultPrefix, span, jsonl, len(want), raw)
		require.NoError(t, err)
		return m
	}
	m1 := build()
	require.Greater(t, len(m1.Data), 16<<10, "a body of a pooled size")
	// The bodies are in a sync.Pool, which may drop what it is given (a
	// collection, the race detector on purpose, the goroutine moved to
	// another P): reused at least once in 50 rounds.
	var m2 *nats.Msg
	reused := 0
	for range 50 {
		body := &m1.Data[:1][0]
		bus.ReleaseBatchMsg(m1)
		require.Nil(t, m1.Data, "a released message keeps no body")
		m2 = build()
		if &m2.Data[:1][0] == body {
			reused++
		}
		m1 = m2
	}
	require.Positive(t, reused, "the released body, reused")
	var got []schema.Entry
	require.NoError(t, bus.DecodeEntries(m2.Header, m2.Data, func(e *schema.Entry) error {
		got = append(got, *e)
		return nil
	}))
	require.Equal(t, want, got)
	c, ok, err := bus.DecodeBatchRaw(m2.Header, m2.Data)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, lines, c.Data)

	// Not a batch message: left alone.
	other := &nats.Msg{Subject: "x", Data: make([]byte, 32<<10), Header: nats.Header{}}
	bus.ReleaseBatchMsg(other)
	require.Len(t, other.Data, 32<<10)
}

func TestBatchMsg_IDNamesSpanAndContent(t *testing.T) {
	a, _, _ := batchOf(t, 0, 10, true)
	b, _, _ := batchOf(t, 0, 10, true)
	require.Equal(t, a.Header.Get(bus.HeaderMsgID), b.Header.Get(bus.HeaderMsgID), "the same lines again: the same id")
	require.Regexp(t, `^batch:host-1:1:2:0-1000:[0-9a-f]{16}$`, a.Header.Get(bus.HeaderMsgID))
	// The id of a batch without the original lines is what earlier
	// versions gave the same message: the XXH3 of the body, big-endian hex
	// (a message sent again across an upgrade is still a duplicate).
	plain, _, _ := batchOf(t, 0, 10, false)
	sum := xxh3.New()
	sum.Write(plain.Data)
	require.Equal(t, "batch:host-1:1:2:0-1000:"+hex.EncodeToString(sum.Sum(nil)), plain.Header.Get(bus.HeaderMsgID))

	// The same span with other content (a file rewritten in place) must
	// not be dropped as a duplicate of what it held before.
	e := testEntry(0)
	e.Text = "rewritten"
	jsonl := append(e.AppendJSON(nil), '\n')
	c, err := bus.BatchMsg(bus.DefaultPrefix, bus.BatchSpan{Host: "host-1", Format: "claude-code", File: "1:2", Offset: 0, End: 1000, Line: 1, Lines: 10}, jsonl, 1)
	require.NoError(t, err)
	require.NotEqual(t, a.Header.Get(bus.HeaderMsgID), c.Header.Get(bus.HeaderMsgID))
}

func TestBatchDecoder_RefusesMalformed(t *testing.T) {
	m, _, _ := batchOf(t, 0, 5, true)
	var d bus.BatchDecoder
	noop := func([]byte) error { return nil }

	count := cloneHeader(m.Header)
	count.Set(bus.HeaderEntries, "6")
	require.ErrorIs(t, d.Entries(count, m.Data, noop), bus.ErrBatch, "entry count differs from the header's")

	at := cloneHeader(m.Header)
	at.Set(bus.HeaderRawAt, strconv.Itoa(len(m.Data)+1))
	require.ErrorIs(t, d.Entries(at, m.Data, noop), bus.ErrBatch, "raw offset outside the body")

	flipped := bytes.Clone(m.Data)
	flipped[len(flipped)/4] ^= 0xff
	err := d.Entries(m.Header, flipped, noop)
	if err == nil {
		// A flip in the raw frame leaves the entries intact; the raw
		// frame's checksum catches it.
		_, _, err = bus.DecodeBatchRaw(m.Header, flipped)
	}
	require.Error(t, err, "a corrupted body")

	require.ErrorIs(t, d.Entries(nats.Header{bus.HeaderSchema: []string{"1"}}, m.Data, noop), bus.ErrBatch, "not a batch")
}

func TestConsumer_TakesBatchMessages(t *testing.T) {
	e := mustEnv(t)
	ctx := t.Context()
	// A stream written before batch messages (one entry per message),
	// then batches, then single entries again: all read, in order.
	want := publishEntries(t, e.js, 0, 3)
	var batchSeqs []uint64
	for _, r := range [][2]int{{3, 40}, {40, 41}, {41, 100}} {
		m, _, _ := batchOf(t, r[0], r[1], true)
		ack, err := e.js.PublishMsg(ctx, m)
		require.NoError(t, err)
		batchSeqs = append(batchSeqs, ack.Sequence)
		for range r[1] - r[0] {
			want = append(want, ack.Sequence)
		}
	}
	want = append(want, publishEntries(t, e.js, 100, 103)...)

	s := newSink()
	var raws []bus.DeliveredRaw
	var mu sync.Mutex
	var indexes []int
	var ids []string
	c := mustConsumer(t, e.js, bus.ConsumerConfig{Raw: true, MaxBatch: 16})
	runConsumer(t, c, func(ctx context.Context, b *bus.Batch) error {
		mu.Lock()
		defer mu.Unlock()
		for _, r := range b.Raw {
			raws = append(raws, r)
		}
		for _, u := range b.Undecodable {
			ids = append(ids, u.Error())
		}
		for _, d := range b.Entries {
			indexes = append(indexes, d.Index)
			ids = append(ids, d.Entry.EntryID)
		}
		return s.handle(ctx, b)
	})
	natstest.CheckFor(t, waitLong, waitPoll, func() error {
		if got := s.count(); got < 103 {
			return fmt.Errorf("%d of 103 entries handed over", got)
		}
		return nil
	})
	mu.Lock()
	defer mu.Unlock()
	natstest.CheckFor(t, waitLong, waitPoll, func() error {
		if got := c.Stats().AckedSeq; got != want[len(want)-1] {
			return fmt.Errorf("acked %d", got)
		}
		return nil
	})
	got, _ := s.snapshot()
	require.Equal(t, want, got, "every entry once, with its message's sequence")
	for i, id := range ids {
		require.Equal(t, fmt.Sprintf("e%06d", i), id, "entries in order")
	}
	require.Equal(t, 0, indexes[2])
	require.Equal(t, 0, indexes[3], "first entry of the first batch")
	require.Equal(t, 36, indexes[39], "last entry of the first batch")
	require.Equal(t, 0, indexes[40], "the one-entry batch")
	require.Len(t, raws, 3, "one raw chunk per batch message")
	for i, r := range raws {
		require.Equal(t, batchSeqs[i], r.Seq)
	}
	require.Equal(t, "{\"n\":40}\n", string(raws[1].Chunk.Data))
	require.Equal(t, uint64(0), c.Stats().Undecodable)
}

func TestConsumer_MalformedBatchIsUndecodable(t *testing.T) {
	e := mustEnv(t)
	ctx := t.Context()
	m, _, _ := batchOf(t, 0, 10, false)
	m.Header.Set(bus.HeaderEntries, "11")
	ack, err := e.js.PublishMsg(ctx, m)
	require.NoError(t, err)
	want := publishEntries(t, e.js, 10, 12)

	s := newSink()
	c := mustConsumer(t, e.js, bus.ConsumerConfig{})
	runConsumer(t, c, s.handle)
	waitCount(t, s, 2)
	natstest.CheckFor(t, waitLong, waitPoll, func() error {
		if got := c.Stats().Undecodable; got != 1 {
			return fmt.Errorf("undecodable %d", got)
		}
		return nil
	})
	got, batches := s.snapshot()
	require.Equal(t, want, got, "none of the malformed batch's entries is handed over")
	var bad []*bus.MessageError
	for _, b := range batches {
		bad = append(bad, b.undecodable...)
	}
	require.Len(t, bad, 1)
	require.Equal(t, ack.Sequence, bad[0].Seq)
	require.ErrorIs(t, bad[0], bus.ErrBatch)
}

func cloneHeader(h nats.Header) nats.Header {
	c := nats.Header{}
	for k, v := range h {
		c[k] = append([]string(nil), v...)
	}
	return c
}

func TestConsumer_BatchEntryThatDoesNotDecode(t *testing.T) {
	e := mustEnv(t)
	var jsonl []byte
	for i := range 5 {
		if i == 2 {
			jsonl = append(jsonl, `{"format":"claude-code","host":"host-1","ts":12345}`+"\n"...)
			continue
		}
		jsonl = append(testEntry(i).AppendJSON(jsonl), '\n')
	}
	m, err := bus.BatchMsg(bus.DefaultPrefix, bus.BatchSpan{Host: "host-1", Format: "claude-code", File: "1:2", End: 500, Line: 1, Lines: 5}, jsonl, 5)
	require.NoError(t, err)
	ack, err := e.js.PublishMsg(t.Context(), m)
	require.NoError(t, err)

	var ids []string
	var bad []*bus.MessageError
	done := make(chan struct{}, 1)
	c := mustConsumer(t, e.js, bus.ConsumerConfig{})
	runConsumer(t, c, func(ctx context.Context, b *bus.Batch) error {
		for _, d := range b.Entries {
			ids = append(ids, fmt.Sprintf("%s@%d", d.Entry.EntryID, d.Index))
		}
		bad = append(bad, b.Undecodable...)
		done <- struct{}{}
		return nil
	})
	select {
	case <-done:
	case <-time.After(waitLong):
		t.Fatal("no batch handed over")
	}
	require.Equal(t, []string{"e000000@0", "e000001@1", "e000003@3", "e000004@4"}, ids, "the batch's other entries, with their places")
	require.Len(t, bad, 1)
	require.Equal(t, ack.Sequence, bad[0].Seq)
	require.Contains(t, bad[0].Error(), "entry 2 of the batch")
}

// A forged block of a few bytes that claims to decompress to a gigabyte
// is refused before anything is allocated for it.
func TestBatchDecoder_RefusesForgedSize(t *testing.T) {
	m, _, _ := batchOf(t, 0, 2, false)
	// An S2 block starts with its decoded length as a uvarint: claim 1 GiB.
	forged := []byte{0x80, 0x80, 0x80, 0x80, 0x04, 0x00}
	var d bus.BatchDecoder
	err := d.Entries(m.Header, forged, func([]byte) error { return nil })
	require.ErrorIs(t, err, bus.ErrBatch)
	require.Contains(t, err.Error(), "1073741824 bytes")
}
