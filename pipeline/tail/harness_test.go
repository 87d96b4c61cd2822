package tail

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/natstest"
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
	var out []got
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
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
		} else if err := bus.DecodeEntry(m.Header, m.Data, &g.entry); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

// waitMsgs waits until the stream holds n messages.
func (h *harness) waitMsgs(n int) []got {
	h.t.Helper()
	var last []got
	natstest.CheckFor(h.t, 60*time.Second, 20*time.Millisecond, func() error {
		s, err := h.js.Stream(h.t.Context(), bus.DefaultStream)
		if err != nil {
			return err
		}
		info, err := s.Info(h.t.Context())
		if err != nil {
			return err
		}
		if info.State.Msgs != uint64(n) {
			return fmt.Errorf("stream holds %d messages, want %d", info.State.Msgs, n)
		}
		last, err = h.tryStream()
		return err
	})
	return last
}

// stays asserts that the stream holds n messages, and still n once the
// tailer looked at every file again and caught up: nothing more was
// going to arrive.
func (h *harness) stays(n int) []got {
	h.t.Helper()
	h.waitMsgs(n)
	h.settle(true)
	got := h.stream()
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

// ids returns the entry ids of a session's messages, in stream order,
// failing on any id seen twice.
func ids(t *testing.T, msgs []got, session string) []string {
	t.Helper()
	var out []string
	seen := map[string]bool{}
	for _, g := range msgs {
		if g.dead != nil || g.entry.SessionID != session {
			continue
		}
		require.False(t, seen[g.entry.EntryID], "entry %s published twice", g.entry.EntryID)
		seen[g.entry.EntryID] = true
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
