package deploy_test

import (
	"context"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/tail"
	"github.com/sessionpipe/sessionpipe/schema"
)

// TestHub_Permissions starts deploy/nats/nats-{1,2,3}.conf as a 3-node
// JetStream cluster with TLS and checks the identity model: the services
// user creates the R3 stream and consumes; a tailer publishes its own
// host's entries, dead letters and original lines and nothing else, and
// reads nothing.
func TestHub_Permissions(t *testing.T) {
	h := startHub(t, "host-a", "host-b")
	ctx := t.Context()
	prefix := bus.DefaultPrefix
	svc := h.servicesJS(t)

	// The services identity creates the stream, replicated on all three
	// nodes (retried while the cluster settles its peers).
	var stream jetstream.Stream
	natstest.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		var err error
		stream, err = bus.EnsureStream(ctx, svc, bus.StreamConfig{Replicas: 3})
		return err
	})
	info, err := stream.Info(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, info.Config.Replicas)
	require.NotNil(t, info.Cluster)
	require.Len(t, info.Cluster.Replicas, 2, "two followers beside the leader")

	t.Run("TailerPublishesItsOwnHost", func(t *testing.T) {
		nc, _ := h.tailer(t, "host-a")
		pub, err := bus.NewPublisher(natstest.JetStream(t, nc), bus.PublisherConfig{})
		require.NoError(t, err)
		t.Cleanup(func() { pub.Close(t.Context()) })
		done := make(chan error, 2)
		e := &schema.Entry{Format: "claude", Host: "host-a", SessionID: "s1", EntryID: "e1", Kind: "message", Role: "user", Text: "hello"}
		require.NoError(t, pub.Publish(ctx, bus.EntryMsg(prefix, e, nil), func(err error) { done <- err }))
		dead := &bus.DeadLetter{Host: "host-a", Path: "/x.jsonl", Line: 3, Offset: 10, Error: "invalid JSON"}
		require.NoError(t, pub.Publish(ctx, bus.DeadMsg(prefix, dead), func(err error) { done <- err }))
		raw, err := bus.RawMsgs(prefix, &bus.RawChunk{Host: "host-a", Path: "/x.jsonl", File: "1:2", Offset: 0, End: 3, Line: 1, Lines: 1, Data: []byte("{}\n")}, 0)
		require.NoError(t, err)
		require.NoError(t, pub.Publish(ctx, raw[0], func(err error) { done <- err }))
		for range 3 {
			select {
			case err := <-done:
				require.NoError(t, err, "acknowledged by JetStream")
			case <-time.After(time.Minute):
				require.FailNow(t, "no acknowledgement")
			}
		}
		// The stream's info is all a tailer may ask JetStream.
		_, err = natstest.JetStream(t, nc).Stream(ctx, bus.DefaultStream)
		require.NoError(t, err, "stream info")
	})

	t.Run("TailerCannotPublishAsAnotherHost", func(t *testing.T) {
		for _, subject := range []string{
			bus.EntrySubject(prefix, "host-b", "claude"),
			bus.DeadSubject(prefix, "host-b"),
			bus.RawSubject(prefix, "host-b"),
			prefix + ".alerts.big",
		} {
			nc, errs := h.tailer(t, "host-a")
			_, err := natstest.JetStream(t, nc).Publish(shortCtx(t), subject, []byte(`{}`))
			require.Error(t, err, "publish to %s acknowledged", subject)
			requireViolation(t, errs, "publish to "+subject)
		}
		_, err := stream.GetLastMsgForSubject(ctx, bus.EntrySubject(prefix, "host-b", ">"))
		require.ErrorIs(t, err, jetstream.ErrMsgNotFound, "nothing stored under host-b")
		_, err = stream.GetLastMsgForSubject(ctx, bus.DeadSubject(prefix, "host-b"))
		require.ErrorIs(t, err, jetstream.ErrMsgNotFound, "no dead letter stored under host-b")
	})

	t.Run("TailerCannotRead", func(t *testing.T) {
		nc, errs := h.tailer(t, "host-a")
		// Core subscriptions to entries, its own included.
		for _, subject := range []string{bus.EntriesFilter(prefix), bus.EntrySubject(prefix, "host-a", "claude"), ">"} {
			sub, err := nc.SubscribeSync(subject)
			if err == nil {
				_, err = sub.NextMsg(5 * time.Second)
			}
			require.ErrorIs(t, err, nats.ErrPermissionViolation, "subscribe to %s", subject)
		}
		for len(errs) > 0 {
			<-errs
		}
		js := natstest.JetStream(t, nc)
		// A consumer, a direct get, a stored message by sequence.
		_, err := js.CreateOrUpdateConsumer(shortCtx(t), bus.DefaultStream, jetstream.ConsumerConfig{Durable: "spy"})
		require.Error(t, err, "consumer created")
		requireViolation(t, errs, "consumer create")
		s, err := js.Stream(ctx, bus.DefaultStream)
		require.NoError(t, err)
		_, err = s.GetMsg(shortCtx(t), 1)
		require.Error(t, err, "message read by sequence")
		requireViolation(t, errs, "message get")
		// Another client's replies: the default inbox.
		_, err = nc.SubscribeSync("_INBOX.>")
		if err == nil {
			_, err = nc.Request("nobody", nil, time.Second)
		}
		require.Error(t, err)
	})

	t.Run("TailerCannotChangeTheStream", func(t *testing.T) {
		nc, errs := h.tailer(t, "host-a")
		js := natstest.JetStream(t, nc)
		// Another replica count and max age than the stream's.
		cfg := stream.CachedInfo().Config
		cfg.Replicas, cfg.MaxAge = 1, time.Second
		_, err := js.UpdateStream(shortCtx(t), cfg)
		require.Error(t, err, "stream changed by a tailer")
		requireViolation(t, errs, "stream update")
		require.NoError(t, js.Conn().Flush())
		err = js.DeleteStream(shortCtx(t), bus.DefaultStream)
		require.Error(t, err, "stream deleted by a tailer")
		info, err := stream.Info(ctx)
		require.NoError(t, err)
		require.Equal(t, 3, info.Config.Replicas, "stream untouched")
		require.Zero(t, info.Config.MaxAge, "stream untouched")
	})

	t.Run("TailerNeedsItsOwnInbox", func(t *testing.T) {
		// The default inbox (_INBOX.<random>) is refused, so the publish
		// acknowledgement cannot arrive (the entry is stored, but the
		// tailer never learns it); host-b's inbox is refused too.
		for _, inbox := range []string{nats.InboxPrefix[:len(nats.InboxPrefix)-1], h.tailers["host-b"]["NATS_INBOX_PREFIX"]} {
			nc, errs := h.connect(t, h.tailers["host-a"]["NATS_URL"], nats.CustomInboxPrefix(inbox))
			_, err := natstest.JetStream(t, nc).Publish(shortCtx(t), bus.EntrySubject(prefix, "host-a", "pi"), []byte(`{}`))
			require.Error(t, err, "publish acknowledged through inbox %s", inbox)
			requireViolation(t, errs, "subscribe to inbox "+inbox)
		}
	})

	t.Run("ServicesConsume", func(t *testing.T) {
		// host-b publishes its own entry too.
		nc, _ := h.tailer(t, "host-b")
		_, err := natstest.JetStream(t, nc).Publish(ctx, bus.EntrySubject(prefix, "host-b", "codex"), []byte(`{}`), jetstream.WithMsgID("b1"))
		require.NoError(t, err)

		cons, err := svc.CreateOrUpdateConsumer(ctx, bus.DefaultStream, jetstream.ConsumerConfig{Durable: "test-reader", AckPolicy: jetstream.AckExplicitPolicy})
		require.NoError(t, err)
		var got []string
		natstest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
			batch, err := cons.FetchNoWait(10)
			if err != nil {
				return err
			}
			for m := range batch.Messages() {
				got = append(got, m.Subject())
				if err := m.Ack(); err != nil {
					return err
				}
			}
			if len(got) < 6 {
				return fmt.Errorf("consumed %q", got)
			}
			return nil
		})
		require.Equal(t, []string{
			bus.EntrySubject(prefix, "host-a", "claude"),
			bus.DeadSubject(prefix, "host-a"),
			bus.RawSubject(prefix, "host-a"),
			bus.EntrySubject(prefix, "host-a", "pi"), // TailerNeedsItsOwnInbox
			bus.EntrySubject(prefix, "host-a", "pi"),
			bus.EntrySubject(prefix, "host-b", "codex"),
		}, got)
	})

	t.Run("RouteNeedsTheClusterCA", func(t *testing.T) {
		// A node configured like the others but with certificates of
		// another CA: the nodes refuse its routes, and it theirs.
		other := t.TempDir()
		goRun(t, "./tlsgen", "-dir", other)
		t.Setenv("NATS_TLS_CERT", filepath.Join(other, "server.pem"))
		t.Setenv("NATS_TLS_KEY", filepath.Join(other, "server-key.pem"))
		t.Setenv("NATS_TLS_CA", filepath.Join(other, "ca.pem"))
		opts, err := server.ProcessConfigFile(filepath.Join(h.confDir, "nats-1.conf"))
		require.NoError(t, err)
		opts.ServerName = "intruder"
		opts.Host, opts.Port = "127.0.0.1", -1
		opts.Cluster.Host, opts.Cluster.Port = "127.0.0.1", -1
		opts.Routes = server.RoutesFromStr(h.routes)
		opts.HTTPPort, opts.LeafNode.Port = 0, 0
		opts.StoreDir = t.TempDir()
		opts.NoLog, opts.NoSigs = false, true
		routesBefore := h.servers[0].Server().NumRoutes()
		intruder := natstest.RunServer(t, func(o *server.Options) { *o = *opts })
		logs := &errorLog{}
		intruder.Server().SetLogger(logs, false, false)
		// Route attempts repeat every second: wait for a refused one.
		natstest.CheckFor(t, 20*time.Second, 20*time.Millisecond, func() error {
			if logs.count() == 0 {
				return errors.New("no route attempt failed yet")
			}
			return nil
		})
		require.Zero(t, intruder.Server().NumRoutes(), "intruder routed")
		require.Equal(t, routesBefore, h.servers[0].Server().NumRoutes(), "nats-1 routed the intruder")
	})

	t.Run("Authentication", func(t *testing.T) {
		// A wrong password is refused.
		_, err := nats.Connect(h.urls, nats.UserInfo("tailer-host-a", "wrong"), nats.RootCAs(h.ca))
		require.ErrorIs(t, err, nats.ErrAuthorization)
		// A client that cannot verify the server does not connect.
		_, err = nats.Connect(h.tailers["host-a"]["NATS_URL"])
		var unknownCA x509.UnknownAuthorityError
		require.ErrorAs(t, err, &unknownCA, "connected without the CA")
	})
}

// TestHub_Tailer runs the real tailer (internal/cli, as cmd/tailer wires
// it) on a Claude Code transcript through a tailer identity, started as
// deploy/README.md tells a user to: the identity's settings as the
// environment, `-tls-ca ca.pem -replicas 3`. It connects with the
// identity's inbox prefix and only waits for the stream the services
// made (a tailer identity may not create or update it): every entry is
// acknowledged, and the services identity reads them under the host.
func TestHub_Tailer(t *testing.T) {
	h := startHub(t, "build.01")
	ctx := t.Context()
	svc := h.servicesJS(t)
	natstest.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		_, err := bus.EnsureStream(ctx, svc, bus.StreamConfig{Replicas: 3})
		return err
	})

	src, err := os.ReadFile("../testdata/corpus/claude-code/claude-code-log/minimal_showcase/55550000-0000-4000-8000-000000000001.jsonl")
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "s.jsonl"), src, 0o644))

	id := h.tailers["build.01"]
	fs := flag.NewFlagSet("tailer", flag.ContinueOnError)
	var (
		n  cli.NATS
		tl cli.Tailer
	)
	getenv := func(k string) string { return id[k] }
	n.Register(fs, getenv)
	tl.Register(fs, getenv)
	n.PublishOnly = true // as cmd/tailer sets it
	require.NoError(t, fs.Parse([]string{"-tls-ca", h.ca, "-replicas", "3", "-watch", dir, "-metrics", "", "-data-dir", t.TempDir()}))
	require.Equal(t, "build.01", tl.Host, "SESSIONPIPE_HOST from the identity")
	require.Equal(t, id["NATS_INBOX_PREFIX"], n.InboxPrefix, "NATS_INBOX_PREFIX from the identity")

	b, err := n.Connect(ctx, "tailer", slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { b.Close(context.Background()) })
	rt, err := cli.StartTailer(ctx, &tl, &n, b, getenv, slog.New(slog.DiscardHandler), nil)
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(ctx)
	runErr := make(chan error, 1)
	go func() { runErr <- rt.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		require.NoError(t, <-runErr)
	})

	var snap tail.Snapshot
	natstest.CheckFor(t, 20*time.Second, 20*time.Millisecond, func() error {
		snap = rt.Tailer.Metrics().Snapshot()
		if snap.Lines == 0 || snap.Acked < snap.Sent || snap.Sent == 0 {
			return fmt.Errorf("tailer: %+v", snap)
		}
		return nil
	})
	require.Zero(t, snap.BadLines)
	require.Zero(t, rt.Publisher.Stats().Errors, "no publish refused")

	stream, err := svc.Stream(ctx, bus.DefaultStream)
	require.NoError(t, err)
	si, err := stream.Info(ctx, jetstream.WithSubjectFilter(bus.EntriesFilter(bus.DefaultPrefix)))
	require.NoError(t, err)
	require.Positive(t, snap.RawChunks, "the original lines go too, for the archive")
	require.Positive(t, snap.AckedEntries)
	// The entries travel in batch messages on the host's entry subject,
	// their original lines as raw chunks on the host's raw subject, which
	// the tailer's identity may publish to.
	require.Equal(t, map[string]uint64{bus.EntrySubject(bus.DefaultPrefix, "build.01", string(schema.FormatClaudeCode)): uint64(snap.Batches)}, si.State.Subjects)
	ri, err := stream.Info(ctx, jetstream.WithSubjectFilter(bus.RawFilter(bus.DefaultPrefix)))
	require.NoError(t, err)
	require.Equal(t, map[string]uint64{bus.RawSubject(bus.DefaultPrefix, "build.01"): uint64(snap.RawChunks)}, ri.State.Subjects)
	require.Equal(t, snap.Acked, snap.Batches+snap.RawChunks, "every message a batch or a raw chunk")
}

// errorLog is a nats-server logger that counts the errors it is given
// (failed route handshakes among them) and drops everything else.
type errorLog struct {
	mu     sync.Mutex
	errors int
}

func (l *errorLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.errors
}

func (l *errorLog) Errorf(string, ...any) {
	l.mu.Lock()
	l.errors++
	l.mu.Unlock()
}
func (l *errorLog) Noticef(string, ...any) {}
func (l *errorLog) Warnf(string, ...any)   {}
func (l *errorLog) Fatalf(string, ...any)  {}
func (l *errorLog) Debugf(string, ...any)  {}
func (l *errorLog) Tracef(string, ...any)  {}
