package cli

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/dirlock"
)

// An empty address means no server at all, not every interface.
func TestListen_EmptyMeansOff(t *testing.T) {
	s, err := Listen("", http.NotFoundHandler())
	require.NoError(t, err)
	require.Nil(t, s)
	require.Empty(t, s.Addr())
	require.NoError(t, s.Run(t.Context()), "a nil server's Run returns at once")
}

// Run serves until its context ends and returns only once the listener
// is closed: it owns what it starts.
func TestServer_RunStopsWithContext(t *testing.T) {
	s, err := Listen("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	resp, err := http.Get("http://" + s.Addr() + "/")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, "ok", string(body))

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	_, err = net.DialTimeout("tcp", s.Addr(), time.Second)
	require.Error(t, err, "the listener is closed once Run returned")
}

// A second process on the same data directory is refused, naming the
// holder; it does not fall back to another port and open the same store.
func TestConnect_SecondOnSameDataDirRefused(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	n := NATS{DataDir: t.TempDir(), Port: -1}
	b, err := n.Connect(t.Context(), "first", log)
	require.NoError(t, err)
	defer b.Close(context.WithoutCancel(t.Context()))

	n2 := n
	n2.Port = bus.DefaultEmbeddedPort
	_, err = n2.Connect(t.Context(), "second", log)
	require.ErrorIs(t, err, dirlock.ErrHeld)
	require.ErrorIs(t, err, bus.ErrServerStart)
}

// A tailer on a fleet does not create the stream (its identity may not):
// it waits for the services to, with the inbox prefix its identity may
// subscribe to.
func TestConnect_PublishOnlyWaitsForTheStream(t *testing.T) {
	srv := natstest.RunServer(t)
	n := NATS{URL: srv.URL(), PublishOnly: true, InboxPrefix: "_INBOX.tailer.host-a"}
	done := make(chan error, 1)
	var b *Bus
	go func() {
		var err error
		b, err = n.Connect(t.Context(), "tailer", slog.New(slog.DiscardHandler))
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("returned before the stream existed: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	services := natstest.JetStream(t, natstest.Connect(t, srv.URL()))
	_, err := services.Stream(t.Context(), bus.DefaultStream)
	require.ErrorIs(t, err, jetstream.ErrStreamNotFound, "the tailer did not create it")
	_, err = bus.EnsureStream(t.Context(), services, bus.StreamConfig{})
	require.NoError(t, err)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("still waiting after the stream was made")
	}
	defer b.Close(context.WithoutCancel(t.Context()))
	require.True(t, strings.HasPrefix(b.Conn.NewRespInbox(), "_INBOX.tailer.host-a."))
}
