package tail

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
	"github.com/zeebo/xxh3"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/schema"
)

// harness runs a tailer against a real in-process JetStream server.
type harness struct {
	t     *testing.T
	srv   *natstest.Server
	nc    *nats.Conn
	js    jetstream.JetStream
	pub   *bus.Publisher
	dir   string // where the transcripts are written
	state string // the tailer's state directory

	tl     *Tailer
	cancel context.CancelFunc
	done   chan error

	// read holds the items of each stream message read so far, for the
	// stream created at readOf: a message does not change, so a poll
	// reads only those stored since the last one (on 10,000 files,
	// reading them all again every 20 ms took the CPU the tailer needs).
	read   map[uint64][]got
	readOf time.Time
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessWith(t)
}

// newHarnessWith is newHarness with server options.
func newHarnessWith(t *testing.T, opts ...natstest.Option) *harness {
	t.Helper()
	h := &harness{t: t, srv: natstest.RunServer(t, opts...), dir: t.TempDir(), state: t.TempDir()}
	h.nc = natstest.Connect(t, h.srv.URL())
	h.js = natstest.JetStream(t, h.nc)
	_, err := bus.EnsureStream(t.Context(), h.js, bus.StreamConfig{})
	require.NoError(t, err)
	h.pub, err = bus.NewPublisher(h.js, bus.PublisherConfig{MaxInFlight: 256, AckTimeout: time.Second, RetryMin: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() {
		h.stop()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h.pub.Close(ctx)
	})
	return h
}

// start runs a tailer over h.dir; mod adjusts its config.
func (h *harness) start(mod ...func(*Config)) {
	h.t.Helper()
	cfg := Config{
		Watch:          []string{filepath.Join(h.dir, "**", "*")},
		StateDir:       h.state,
		Host:           "testhost",
		Publisher:      h.pub,
		Text:           true,
		RescanInterval: 200 * time.Millisecond,
		DetectWait:     300 * time.Millisecond,
		Drain:          5 * time.Second,
	}
	for _, m := range mod {
		m(&cfg)
	}
	tl, err := New(cfg)
	require.NoError(h.t, err)
	ctx, cancel := context.WithCancel(context.Background())
	h.tl, h.cancel, h.done = tl, cancel, make(chan error, 1)
	go func() { h.done <- tl.Run(ctx) }()
}

// stop stops the tailer gracefully and waits for it.
func (h *harness) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	select {
	case err := <-h.done:
		require.NoError(h.t, err)
	case <-time.After(20 * time.Second):
		h.t.Fatal("tailer did not stop")
	}
	h.cancel = nil
}

// got is one message of the stream.
type got struct {
	seq   uint64
	entry schema.Entry
	dead  *bus.DeadLetter
	raw   *bus.RawChunk
}

// stream returns every message stored in the stream, in order.
func (h *harness) stream() []got {
	h.t.Helper()
	out, err := h.tryStream()
	require.NoError(h.t, err)
	return out
}

func (h *harness) tryStream() ([]got, error) {
	ctx := h.t.Context()
	s, err := h.js.Stream(ctx, bus.DefaultStream)
	if err != nil {
		return nil, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return nil, err
	}
	if !info.Created.Equal(h.readOf) || info.State.Msgs != info.State.LastSeq-info.State.FirstSeq+1 {
		// Another stream, or messages removed: read everything again.
		h.read, h.readOf = map[uint64][]got{}, info.Created
	}
	var out []got
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		if items, ok := h.read[seq]; ok {
			out = append(out, items...)
			continue
		}
		from := len(out)
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		g := got{seq: seq}
		if strings.Contains(m.Subject, ".dead.") {
			d, err := bus.DecodeDeadLetter(m.Data)
			if err != nil {
				return nil, err
			}
			g.dead = &d
		} else if strings.Contains(m.Subject, ".raw.") {
			c, err := bus.DecodeRaw(m.Header, m.Data, nil)
			if err != nil {
				return nil, err
			}
			g.raw = &c
		} else if bus.IsBatch(m.Header) {
			// A batch message: its original lines, then its entries,
			// each an item as they were messages before batches.
			c, ok, err := bus.DecodeBatchRaw(m.Header, m.Data)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, got{seq: seq, raw: &c})
			}
			if err := bus.DecodeEntries(m.Header, m.Data, func(e *schema.Entry) error {
				out = append(out, got{seq: seq, entry: *e})
				return nil
			}); err != nil {
				return nil, err
			}
			h.read[seq] = slices.Clone(out[from:])
			continue
		} else if err := bus.DecodeEntry(m.Header, m.Data, &g.entry); err != nil {
			return nil, err
		}
		out = append(out, g)
		h.read[seq] = slices.Clone(out[from:])
	}
	return out, nil
}

// waitMsgs waits until the stream holds n distinct items: entries (by
// key), dead letters and raw chunks, whether they travel alone or in
// batch messages, and returns them in the order of their first copies.
// A batch of lines read again (a rewrite, a lost checkpoint) may be cut
// otherwise than before and stored again; the consumers count each entry
// key once, so a copy is not another item.
func (h *harness) waitMsgs(n int) []got {
	h.t.Helper()
	var last []got
	// A generous ceiling: 10,000 files on a loaded 2-core machine take
	// more than a minute (the condition ends the wait, not the ceiling).
	natstest.CheckFor(h.t, 5*time.Minute, 20*time.Millisecond, func() error {
		all, err := h.tryStream()
		if err != nil {
			return err
		}
		if last = distinct(all); len(last) != n {
			return fmt.Errorf("stream holds %d distinct items (%d in all), want %d", len(last), len(all), n)
		}
		return nil
	})
	return last
}

// distinct returns the first copy of each item of msgs, in order.
func distinct(msgs []got) []got {
	seen := make(map[string]bool, len(msgs))
	out := msgs[:0:0]
	for _, g := range msgs {
		var id string
		switch {
		case g.dead != nil:
			id = fmt.Sprintf("dead:%s:%d:%s", g.dead.Path, g.dead.Offset, g.dead.Error)
		case g.raw != nil:
			id = fmt.Sprintf("raw:%s:%d-%d:%x", g.raw.File, g.raw.Offset, g.raw.End, xxh3.Hash(g.raw.Data))
		default:
			id = g.entry.Key()
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, g)
		}
	}
	return out
}

// stays asserts that the stream holds n messages, and still n once the
// tailer looked at every file again and caught up: nothing more was
// going to arrive.
func (h *harness) stays(n int) []got {
	h.t.Helper()
	h.waitMsgs(n)
	h.settle(true)
	got := distinct(h.stream())
	require.Len(h.t, got, n)
	return got
}

// settle waits until the tailer is idle, after a rescan that started
// after the call when rescan is set (so that every change made before
// the call was seen, notified or not).
func (h *harness) settle(rescan bool) {
	h.t.Helper()
	target := h.tl.Metrics().Snapshot().Rescans + 2
	natstest.CheckFor(h.t, 30*time.Second, 10*time.Millisecond, func() error {
		if n := h.tl.Metrics().Snapshot().Rescans; rescan && n < target {
			h.tl.requestRescan()
			return fmt.Errorf("%d rescans of %d", n, target)
		}
		if !h.tl.Idle() {
			return errors.New("tailer not idle")
		}
		return nil
	})
}

// piHeader and piLine write pi v3 transcript lines: one entry each, with
// entry id e<n>.
func piHeader(session string) string {
	return `{"type":"session","version":3,"id":"` + session + `","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}` + "\n"
}

func piLine(n int) string {
	return fmt.Sprintf(`{"type":"message","id":"e%06d","parentId":null,"timestamp":"2026-01-01T00:00:%02d.000Z","message":{"role":"user","content":"line %d","timestamp":1767225600000}}`+"\n", n, n%60, n)
}

func piFile(session string, from, to int) string {
	var b strings.Builder
	if from == 0 {
		b.WriteString(piHeader(session))
		from = 1
	}
	for i := from; i <= to; i++ {
		b.WriteString(piLine(i))
	}
	return b.String()
}

func (h *harness) write(name, data string) string {
	h.t.Helper()
	path := filepath.Join(h.dir, name)
	require.NoError(h.t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(h.t, os.WriteFile(path, []byte(data), 0o644))
	return path
}

func (h *harness) appendTo(path, data string) {
	h.t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(h.t, err)
	_, err = f.WriteString(data)
	require.NoError(h.t, err)
	require.NoError(h.t, f.Close())
}

// ids returns the entry ids of a session's messages, in the order of
// their first copies in the stream. An entry may be stored more than
// once: a batch of lines read again (a rewrite, a lost checkpoint) and
// cut otherwise than before passes the duplicate window; the consumers
// count each entry key once. A copy must be the same entry.
func ids(t *testing.T, msgs []got, session string) []string {
	t.Helper()
	var out []string
	seen := map[string]schema.Entry{}
	for _, g := range msgs {
		if g.dead != nil || g.raw != nil || g.entry.SessionID != session {
			continue
		}
		if first, ok := seen[g.entry.EntryID]; ok {
			require.Equal(t, first.Key(), g.entry.Key(), "a copy of entry %s has another key", g.entry.EntryID)
			continue
		}
		seen[g.entry.EntryID] = g.entry
		out = append(out, g.entry.EntryID)
	}
	return out
}

// wantIDs is the ids of a pi file written by piFile(session, 0, n).
func wantIDs(session string, from, to int) []string {
	var out []string
	if from == 0 {
		out = append(out, session)
		from = 1
	}
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("e%06d", i))
	}
	return out
}
