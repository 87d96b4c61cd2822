package deploy_test

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/schema"
)

// link is a TCP forwarder standing for the network between an agent host
// and the hub: cut drops it, restore brings it back on the same address.
type link struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        []net.Conn
}

func newLink(t *testing.T, target string) *link {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := &link{addr: ln.Addr().String(), target: target, ln: ln}
	go l.serve(ln)
	t.Cleanup(l.cut)
	return l
}

func (l *link) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", l.target)
		if err != nil {
			c.Close()
			continue
		}
		l.mu.Lock()
		l.conns = append(l.conns, c, up)
		l.mu.Unlock()
		go func() { io.Copy(up, c); up.Close() }()
		go func() { io.Copy(c, up); c.Close() }()
	}
}

// cut closes the listener and every connection through it.
func (l *link) cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ln != nil {
		l.ln.Close()
		l.ln = nil
	}
	for _, c := range l.conns {
		c.Close()
	}
	l.conns = nil
}

// restore listens again on the link's address.
func (l *link) restore(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", l.addr)
	require.NoError(t, err)
	l.mu.Lock()
	l.ln = ln
	l.mu.Unlock()
	go l.serve(ln)
}

// TestLeaf_BuffersWhileLinkDown starts deploy/leaf/leaf.conf as an agent
// host's leaf node of the hub, with a leaf identity from genuser -leaf:
// the tailer publishes to the leaf's local stream, the hub's stream
// sources it, and what was published while the link was cut arrives once
// it is back, each entry once.
func TestLeaf_BuffersWhileLinkDown(t *testing.T) {
	h := startHubWithLeaves(t, nil, []string{"edge-1"})
	ctx := t.Context()
	svc := h.servicesJS(t)
	var hubStream jetstream.Stream
	natstest.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		var err error
		hubStream, err = bus.EnsureStream(ctx, svc, bus.StreamConfig{Replicas: 3})
		return err
	})

	id := h.leaves["edge-1"]
	remote, err := url.Parse(id["SESSIONPIPE_HUB_LEAF_URL"])
	require.NoError(t, err)
	lk := newLink(t, remote.Host)
	remote.Host = lk.addr
	t.Setenv("SESSIONPIPE_LEAF_DOMAIN", id["SESSIONPIPE_LEAF_DOMAIN"])
	t.Setenv("SESSIONPIPE_HUB_LEAF_URL", remote.String())
	opts, err := server.ProcessConfigFile("leaf/leaf.conf")
	require.NoError(t, err)
	require.Equal(t, "edge-1", opts.JetStreamDomain)
	require.Len(t, opts.LeafNode.Remotes, 1)
	require.NotNil(t, opts.LeafNode.Remotes[0].TLSConfig, "leaf link over TLS")
	opts.Port = -1
	opts.StoreDir = t.TempDir()
	opts.LeafNode.ReconnectInterval = 100 * time.Millisecond
	opts.NoLog, opts.NoSigs = true, true
	leaf := natstest.RunServer(t, func(o *server.Options) { *o = *opts })
	linked := func(want int) func() error {
		return func() error {
			if n := leaf.Server().NumLeafNodes(); n != want {
				return fmt.Errorf("%d leaf connections, want %d", n, want)
			}
			return nil
		}
	}
	natstest.CheckFor(t, 10*time.Second, 20*time.Millisecond, linked(1))

	// The tailer on the host, as cmd/tailer runs: a local connection, the
	// stream ensured in the leaf's domain, the bus publisher.
	nc := natstest.Connect(t, leaf.URL())
	js := natstest.JetStream(t, nc)
	_, err = bus.EnsureStream(ctx, js, bus.StreamConfig{})
	require.NoError(t, err)
	pub, err := bus.NewPublisher(js, bus.PublisherConfig{})
	require.NoError(t, err)
	t.Cleanup(func() { pub.Close(t.Context()) })
	publish := func(from, to int) {
		done := make(chan error, to-from)
		for i := from; i < to; i++ {
			e := &schema.Entry{Format: schema.FormatClaudeCode, Host: "edge-1", SessionID: "s1", EntryID: fmt.Sprint(i), Kind: "message", Role: "user", Text: "hi"}
			require.NoError(t, pub.Publish(ctx, bus.EntryMsg(bus.DefaultPrefix, e, nil), func(err error) { done <- err }))
		}
		for range to - from {
			select {
			case err := <-done:
				require.NoError(t, err, "acknowledged by the leaf's stream")
			case <-time.After(time.Minute):
				require.FailNow(t, "no acknowledgement from the leaf")
			}
		}
	}
	subject := bus.EntrySubject(bus.DefaultPrefix, "edge-1", string(schema.FormatClaudeCode))
	onHub := func(want uint64) func() error {
		return func() error {
			si, err := hubStream.Info(ctx, jetstream.WithSubjectFilter(subject))
			if err != nil {
				return err
			}
			if got := si.State.Subjects[subject]; got != want {
				return fmt.Errorf("hub holds %d entries of edge-1, want %d", got, want)
			}
			return nil
		}
	}
	publish(0, 5)

	// The central side sources the leaf's stream (what the operator does
	// once per leaf host, e.g. with nats stream edit).
	info, err := hubStream.Info(ctx)
	require.NoError(t, err)
	cfg := info.Config
	cfg.Sources = append(cfg.Sources, &jetstream.StreamSource{
		Name:     bus.DefaultStream,
		External: &jetstream.ExternalStream{APIPrefix: "$JS." + id["SESSIONPIPE_LEAF_DOMAIN"] + ".API"},
	})
	_, err = svc.UpdateStream(ctx, cfg)
	require.NoError(t, err)
	natstest.CheckFor(t, 20*time.Second, 50*time.Millisecond, onHub(5))

	// Link down: the tailer goes on, acknowledged locally.
	lk.cut()
	natstest.CheckFor(t, 10*time.Second, 20*time.Millisecond, linked(0))
	publish(5, 12)
	require.NoError(t, onHub(5)())

	// Link back: the backlog arrives, nothing twice.
	lk.restore(t)
	natstest.CheckFor(t, 10*time.Second, 20*time.Millisecond, linked(1))
	natstest.CheckFor(t, 30*time.Second, 50*time.Millisecond, onHub(12))
	si, err := hubStream.Info(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(12), si.State.Msgs, "every entry once on the hub")
	for i := range 12 {
		m, err := hubStream.GetMsg(ctx, uint64(i+1))
		require.NoError(t, err)
		require.Equal(t, subject, m.Subject)
		var e schema.Entry
		require.NoError(t, bus.DecodeEntry(m.Header, m.Data, &e))
		require.Equal(t, fmt.Sprint(i), e.EntryID, "in publishing order")
	}
}
