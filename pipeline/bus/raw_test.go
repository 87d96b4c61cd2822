package bus_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
	"github.com/zeebo/xxh3"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
)

func rawChunk(data []byte) *bus.RawChunk {
	return &bus.RawChunk{
		Host: "host-1", Path: "/p/s.jsonl", Format: "claude-code", File: "2049:77",
		Offset: 100, End: 100 + int64(len(data)), Line: 3, Lines: int64(bytes.Count(data, []byte("\n"))),
		Sessions: []string{"s1"}, TS: time.Date(2026, 11, 24, 9, 0, 0, 123000, time.UTC), Data: data,
	}
}

func TestRawMsgs_RoundTrip(t *testing.T) {
	data := []byte(strings.Repeat(`{"type":"user","message":"hello"}`+"\n", 50) + "\r\n" + "\ufeffx\n")
	c := rawChunk(data)
	msgs, err := bus.RawMsgs("sp", c, 0)
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	m := msgs[0]
	require.Equal(t, "sp.raw.host-1", m.Subject)
	require.Equal(t, "raw:host-1:2049:77:100-"+itoa(c.End)+":"+strconv.FormatUint(xxh3.Hash(data), 16), m.Header.Get(nats.MsgIdHdr))
	require.Equal(t, strconv.FormatUint(xxh3.Hash(data), 16), m.Header.Get(bus.HeaderRawSum))
	require.Less(t, len(m.Data), len(data), "compressed on the wire")

	got, err := bus.DecodeRaw(m.Header, m.Data, nil)
	require.NoError(t, err)
	require.Equal(t, data, got.Data)
	got.Data = c.Data
	require.True(t, got.TS.Equal(c.TS))
	got.TS = c.TS
	require.Equal(t, *c, got)
}

func TestRawMsgs_Parts(t *testing.T) {
	// Incompressible data larger than the limit is split into parts
	// whose data, joined, is the chunk's.
	data := make([]byte, 300<<10)
	var x uint32 = 1
	for i := range data {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		data[i] = byte(x)
	}
	c := rawChunk(data)
	msgs, err := bus.RawMsgs("sp", c, 64<<10)
	require.NoError(t, err)
	require.Greater(t, len(msgs), 4)
	var joined []byte
	ids := map[string]bool{}
	for i, m := range msgs {
		require.LessOrEqual(t, len(m.Data), 64<<10, "part %d", i)
		got, err := bus.DecodeRaw(m.Header, m.Data, nil)
		require.NoError(t, err)
		require.Equal(t, i+1, got.Part)
		require.Equal(t, len(msgs), got.Parts)
		require.Equal(t, c.Offset, got.Offset)
		joined = append(joined, got.Data...)
		ids[m.Header.Get(nats.MsgIdHdr)] = true
	}
	require.Equal(t, data, joined)
	require.Len(t, ids, len(msgs), "every part has its own id")

	_, err = bus.RawMsgs("sp", c, 1024)
	require.Error(t, err, "a limit with no room for data")
}

func TestDecodeRaw_Invalid(t *testing.T) {
	msgs, err := bus.RawMsgs("sp", rawChunk([]byte("a\n")), 0)
	require.NoError(t, err)
	good := msgs[0]
	badSum := nats.Header{}
	for k, v := range good.Header {
		badSum[k] = v
	}
	badSum.Set(bus.HeaderRawSum, strconv.FormatUint(xxh3.Hash([]byte("b\n")), 16))
	for name, tc := range map[string]struct {
		h    nats.Header
		data []byte
	}{
		"no schema":      {nats.Header{bus.HeaderEncoding: {"s2"}}, good.Data},
		"other encoding": {nats.Header{bus.HeaderSchema: good.Header[bus.HeaderSchema], bus.HeaderEncoding: {"gzip"}}, good.Data},
		"no header line": {good.Header, []byte("{}")},
		"bad json":       {good.Header, []byte("{\n")},
		"bad s2":         {good.Header, append(bytes.Clone(good.Data[:bytes.IndexByte(good.Data, '\n')+1]), 0xff, 0xff, 0xff)},
		"bad span":       {good.Header, append([]byte(`{"host":"h","file":"f","offset":10,"end":5,"line":1}`+"\n"), 0)},
		"other checksum": {badSum, good.Data},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := bus.DecodeRaw(tc.h, tc.data, nil)
			require.Error(t, err)
		})
	}
}

// An archive consumer gets raw chunks and entries in stream order; the
// entries consumer does not see the chunks.
func TestConsumer_Raw(t *testing.T) {
	e := mustEnv(t)
	publishEntries(t, e.js, 0, 2)
	msgs, err := bus.RawMsgs(bus.DefaultPrefix, rawChunk([]byte("l1\nl2\n")), 0)
	require.NoError(t, err)
	ack, err := e.js.PublishMsg(t.Context(), msgs[0])
	require.NoError(t, err)
	rawSeq := ack.Sequence
	publishEntries(t, e.js, 2, 4)

	var mu sync.Mutex
	var order []string
	s := newSink()
	runConsumer(t, mustConsumer(t, e.js, bus.ConsumerConfig{Name: "exporter", Raw: true}), func(ctx context.Context, b *bus.Batch) error {
		mu.Lock()
		for _, r := range b.Raw {
			require.Equal(t, rawSeq, r.Seq)
			order = append(order, "raw:"+string(r.Chunk.Data))
		}
		mu.Unlock()
		return s.handle(ctx, b)
	})
	waitCount(t, s, 4)
	mu.Lock()
	require.Equal(t, []string{"raw:l1\nl2\n"}, order)
	mu.Unlock()

	plain := newSink()
	runConsumer(t, mustConsumer(t, e.js, bus.ConsumerConfig{Name: "indexer"}), plain.handle)
	waitCount(t, plain, 4)
	seqs, _ := plain.snapshot()
	require.NotContains(t, seqs, rawSeq)

	_, err = bus.NewConsumer(e.js, bus.ConsumerConfig{Name: "x", Raw: true, DeadLetters: true})
	require.Error(t, err)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// A raw chunk whose header line is not JSON is an ErrRawChunk that keeps
// the JSON decoder's error as its cause.
func TestDecodeRaw_KeepsCause(t *testing.T) {
	msgs, err := bus.RawMsgs("sp", rawChunk([]byte("a\n")), 0)
	require.NoError(t, err)
	_, err = bus.DecodeRaw(msgs[0].Header, []byte("{\n"), nil)
	require.ErrorIs(t, err, bus.ErrRawChunk)
	var se *json.SyntaxError
	require.ErrorAs(t, err, &se, "the cause is kept: %v", err)
}

// A file rewritten in place with other bytes at the same offsets (while
// the tailer was stopped, say) sends a chunk of the same span: its id
// differs, so the stream's duplicate window keeps it, and the archive
// gets the new bytes; the same bytes sent again are a duplicate.
func TestRawMsgs_RewrittenSpanIsStored(t *testing.T) {
	e := mustEnv(t)
	before, err := bus.RawMsgs(bus.DefaultPrefix, rawChunk([]byte("old line\n")), 0)
	require.NoError(t, err)
	after, err := bus.RawMsgs(bus.DefaultPrefix, rawChunk([]byte("new line\n")), 0)
	require.NoError(t, err)
	again, err := bus.RawMsgs(bus.DefaultPrefix, rawChunk([]byte("new line\n")), 0)
	require.NoError(t, err)
	require.NotEqual(t, before[0].Header.Get(nats.MsgIdHdr), after[0].Header.Get(nats.MsgIdHdr))
	var dup []bool
	for _, m := range []*nats.Msg{before[0], after[0], again[0]} {
		ack, err := e.js.PublishMsg(t.Context(), m)
		require.NoError(t, err)
		dup = append(dup, ack.Duplicate)
	}
	require.Equal(t, []bool{false, false, true}, dup)
}
