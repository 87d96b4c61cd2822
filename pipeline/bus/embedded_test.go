package bus_test

import (
	"context"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/dirlock"
)

// mustEmbedded starts an embedded server, shut down at test end.
func mustEmbedded(tb testing.TB, cfg bus.EmbeddedConfig) *bus.Embedded {
	tb.Helper()
	e, err := bus.StartEmbedded(tb.Context(), cfg)
	require.NoError(tb, err)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(tb.Context()), 10*time.Second)
		defer cancel()
		_ = e.Shutdown(ctx)
	})
	return e
}

func TestEmbedded_SurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	var logs logBuffer
	e := mustEmbedded(t, bus.EmbeddedConfig{StoreDir: dir, Logger: newLogger(&logs)})
	js := natstest.JetStream(t, e.Conn())
	_, err := bus.EnsureStream(t.Context(), js, bus.StreamConfig{})
	require.NoError(t, err)
	p, err := bus.NewPublisher(js, bus.PublisherConfig{})
	require.NoError(t, err)
	r := newRecorder()
	require.NoError(t, publishN(t.Context(), p, r, 0, 300))
	require.NoError(t, p.Close(t.Context()))
	r.requireAllOnceInOrder(t, 300)
	assert.Contains(t, logs.String(), "embedded nats started")

	// Another client reaches it over TCP on the loopback address.
	url := e.ClientURL()
	assert.Contains(t, url, "nats://127.0.0.1:")
	other := natstest.Connect(t, url)
	requireStreamHolds(t, natstest.JetStream(t, other), 300)
	other.Close()

	require.NoError(t, e.Shutdown(t.Context()))
	assert.True(t, e.Conn().IsClosed())

	// Same store directory: the stream and its messages are back, and
	// re-sends are still recognised as duplicates.
	e2 := mustEmbedded(t, bus.EmbeddedConfig{StoreDir: dir})
	js2 := natstest.JetStream(t, e2.Conn())
	requireStreamHolds(t, js2, 300)
	p2 := mustPublisher(t, js2, bus.PublisherConfig{})
	r2 := newRecorder()
	require.NoError(t, publishN(t.Context(), p2, r2, 250, 310))
	require.NoError(t, p2.Flush(t.Context()))
	assert.Equal(t, uint64(50), p2.Stats().Duplicates)
	requireStreamHolds(t, js2, 310)
}

func TestEmbedded_FixedPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())

	e := mustEmbedded(t, bus.EmbeddedConfig{StoreDir: t.TempDir(), Port: port})
	assert.Equal(t, "nats://127.0.0.1:"+strconv.Itoa(port), e.ClientURL())

	// The port is now taken: a second server cannot start on it.
	_, err = bus.StartEmbedded(t.Context(), bus.EmbeddedConfig{StoreDir: t.TempDir(), Port: port})
	require.ErrorIs(t, err, bus.ErrServerStart)
}

// The server runs with the sync asked for, as its own JetStream
// configuration reports it, and its acknowledged writes come back after a
// restart with every write synced.
func TestEmbedded_Sync(t *testing.T) {
	tests := []struct {
		name         string
		interval     time.Duration
		always       bool
		wantInterval time.Duration
	}{
		{"Default", 0, false, bus.DefaultEmbeddedSyncInterval},
		{"Interval", 10 * time.Second, false, 10 * time.Second},
		{"Always", 0, true, bus.DefaultEmbeddedSyncInterval},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs logBuffer
			e := mustEmbedded(t, bus.EmbeddedConfig{StoreDir: t.TempDir(), SyncInterval: tt.interval, SyncAlways: tt.always, Logger: newLogger(&logs)})
			interval, always := e.Sync()
			assert.Equal(t, tt.always, always, "sync always")
			assert.Equal(t, tt.wantInterval, interval, "sync interval")
			want := "sync=" + tt.wantInterval.String()
			if tt.always {
				want = "sync=always"
			}
			assert.Contains(t, logs.String(), want)
		})
	}

	dir := t.TempDir()
	e := mustEmbedded(t, bus.EmbeddedConfig{StoreDir: dir, SyncAlways: true})
	js := natstest.JetStream(t, e.Conn())
	_, err := bus.EnsureStream(t.Context(), js, bus.StreamConfig{})
	require.NoError(t, err)
	p := mustPublisher(t, js, bus.PublisherConfig{})
	r := newRecorder()
	require.NoError(t, publishN(t.Context(), p, r, 0, 100))
	require.NoError(t, p.Flush(t.Context()))
	r.requireAllOnceInOrder(t, 100)
	require.NoError(t, e.Shutdown(t.Context()))
	again := mustEmbedded(t, bus.EmbeddedConfig{StoreDir: dir, SyncAlways: true})
	requireStreamHolds(t, natstest.JetStream(t, again.Conn()), 100)
}

func TestEmbeddedConfig_Validate(t *testing.T) {
	tests := []struct {
		name  string
		cfg   bus.EmbeddedConfig
		field string
	}{
		{"Minimal", bus.EmbeddedConfig{StoreDir: "/x"}, ""},
		{"RandomPort", bus.EmbeddedConfig{StoreDir: "/x", Port: -1}, ""},
		{"NoStoreDir", bus.EmbeddedConfig{}, "store_dir"},
		{"PortTooLow", bus.EmbeddedConfig{StoreDir: "/x", Port: -2}, "port"},
		{"PortTooHigh", bus.EmbeddedConfig{StoreDir: "/x", Port: 70000}, "port"},
		{"NegativeSync", bus.EmbeddedConfig{StoreDir: "/x", SyncInterval: -time.Second}, "sync_interval"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireConfigError(t, tt.cfg.Validate(), tt.field)
		})
	}
	_, err := bus.StartEmbedded(t.Context(), bus.EmbeddedConfig{})
	require.ErrorIs(t, err, bus.ErrInvalidConfig)
}

// TestEmbedded_OneServerPerStore: a second server on a store directory in
// use refuses to start, naming the holder, and touches nothing; once the
// first is shut down the directory is free again. (Two servers on one
// store corrupted it: `indexCacheBuf corrupt record state`.)
func TestEmbedded_OneServerPerStore(t *testing.T) {
	dir := t.TempDir()
	first, err := bus.StartEmbedded(t.Context(), bus.EmbeddedConfig{StoreDir: dir})
	require.NoError(t, err)
	js := natstest.JetStream(t, first.Conn())
	_, err = bus.EnsureStream(t.Context(), js, bus.StreamConfig{})
	require.NoError(t, err)

	_, err = bus.StartEmbedded(t.Context(), bus.EmbeddedConfig{StoreDir: dir})
	require.ErrorIs(t, err, bus.ErrServerStart)
	require.ErrorIs(t, err, dirlock.ErrHeld)
	require.Contains(t, err.Error(), "embedded JetStream store")
	require.Contains(t, err.Error(), "by process "+strconv.Itoa(os.Getpid()))

	require.NoError(t, first.Shutdown(t.Context()))
	again := mustEmbedded(t, bus.EmbeddedConfig{StoreDir: dir})
	info, err := natstest.JetStream(t, again.Conn()).Stream(t.Context(), bus.DefaultStream)
	require.NoError(t, err, "the store survived the refused second server")
	require.Equal(t, bus.DefaultStream, info.CachedInfo().Config.Name)
}

// A consumer stopped with its pull request still pending on the server
// (what every consumer of `run` leaves) loses nothing at Shutdown, which
// stops JetStream first: the stream's messages and the consumer's
// acknowledgements are there after a restart.
func TestEmbedded_ShutdownWithPendingPull(t *testing.T) {
	dir := t.TempDir()
	e := mustEmbedded(t, bus.EmbeddedConfig{StoreDir: dir})
	js := natstest.JetStream(t, e.Conn())
	_, err := bus.EnsureStream(t.Context(), js, bus.StreamConfig{})
	require.NoError(t, err)
	p := mustPublisher(t, js, bus.PublisherConfig{})
	require.NoError(t, publishN(t.Context(), p, newRecorder(), 0, 300))
	require.NoError(t, p.Close(t.Context()))

	cons, err := js.CreateOrUpdateConsumer(t.Context(), bus.DefaultStream,
		jetstream.ConsumerConfig{Durable: "c", AckPolicy: jetstream.AckExplicitPolicy})
	require.NoError(t, err)
	batch, err := cons.Fetch(100, jetstream.FetchMaxWait(10*time.Second))
	require.NoError(t, err)
	n := 0
	for m := range batch.Messages() {
		require.NoError(t, m.DoubleAck(t.Context()))
		n++
	}
	require.NoError(t, batch.Error())
	require.Equal(t, 100, n)
	// A pull request left waiting for more: the stream holds 200 more, so
	// ask past the end of them.
	pending, err := cons.Fetch(1000, jetstream.FetchMaxWait(time.Minute))
	require.NoError(t, err)
	got := 0
	for range pending.Messages() {
		if got++; got == 200 {
			break
		}
	}
	require.Equal(t, 200, got, "the rest delivered, the request still open")

	require.NoError(t, e.Shutdown(t.Context()))

	e2 := mustEmbedded(t, bus.EmbeddedConfig{StoreDir: dir})
	js2 := natstest.JetStream(t, e2.Conn())
	requireStreamHolds(t, js2, 300)
	c2, err := js2.Consumer(t.Context(), bus.DefaultStream, "c")
	require.NoError(t, err)
	info, err := c2.Info(t.Context())
	require.NoError(t, err)
	assert.Equal(t, uint64(100), info.AckFloor.Stream, "the acknowledgements kept")
}
