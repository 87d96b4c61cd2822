package bus_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/schema"
)

// env is a server with the sessionpipe stream and a client on it.
type env struct {
	srv *natstest.Server
	nc  *nats.Conn
	js  jetstream.JetStream
}

// mustEnv starts a server, connects and ensures the default stream.
func mustEnv(tb testing.TB, opts ...natstest.Option) *env {
	tb.Helper()
	srv := natstest.RunServer(tb, opts...)
	nc := natstest.Connect(tb, srv.URL())
	js := natstest.JetStream(tb, nc)
	_, err := bus.EnsureStream(tb.Context(), js, bus.StreamConfig{})
	require.NoError(tb, err)
	return &env{srv: srv, nc: nc, js: js}
}

// mustPublisher creates a publisher closed (hard, 5s) at test end.
func mustPublisher(tb testing.TB, js jetstream.JetStream, cfg bus.PublisherConfig) *bus.Publisher {
	tb.Helper()
	p, err := bus.NewPublisher(js, cfg)
	require.NoError(tb, err)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(tb.Context()), 5*time.Second)
		defer cancel()
		_ = p.Close(ctx)
	})
	return p
}

// testEntry returns entry number i of a Claude Code session on host-1.
func testEntry(i int) *schema.Entry {
	return &schema.Entry{
		Format:    schema.FormatClaudeCode,
		Host:      "host-1",
		Path:      "/home/u/.claude/projects/p/s1.jsonl",
		Offset:    int64(i) * 100,
		Line:      int64(i) + 1,
		SessionID: "s1",
		EntryID:   fmt.Sprintf("e%06d", i),
		TS:        time.Date(2026, 1, 2, 3, 4, 5, i, time.UTC),
		Kind:      schema.KindMessage,
		Role:      schema.RoleUser,
		Text:      fmt.Sprintf("message %d", i),
	}
}

// recorder collects done callbacks: which message, in which order, with
// which error.
type recorder struct {
	mu    sync.Mutex
	order []int
	errs  map[int]error
	calls map[int]int
}

func newRecorder() *recorder {
	return &recorder{errs: map[int]error{}, calls: map[int]int{}}
}

// done returns the callback for message i.
func (r *recorder) done(i int) func(error) {
	return func(err error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.order = append(r.order, i)
		r.calls[i]++
		if err != nil {
			r.errs[i] = err
		}
	}
}

// count returns how many callbacks ran.
func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.order)
}

// requireAllOnceInOrder checks that messages 0..n-1 each completed once,
// in order, with no error.
func (r *recorder) requireAllOnceInOrder(tb testing.TB, n int) {
	tb.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	require.Empty(tb, r.errs, "done errors")
	require.Len(tb, r.order, n, "done calls")
	for i, got := range r.order {
		require.Equal(tb, i, got, "done call %d is for message %d", i, got)
	}
	for i := range n {
		require.Equal(tb, 1, r.calls[i], "done calls for message %d", i)
	}
}

// streamIDs reads every message of the default stream, in stream order,
// and returns their Nats-Msg-Id headers.
func streamIDs(tb testing.TB, js jetstream.JetStream) []string {
	tb.Helper()
	ids, err := readIDs(tb.Context(), js)
	require.NoError(tb, err)
	return ids
}

// readIDs is streamIDs returning its error, for callers that retry.
func readIDs(ctx context.Context, js jetstream.JetStream) ([]string, error) {
	st, err := js.Stream(ctx, bus.DefaultStream)
	if err != nil {
		return nil, err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return nil, err
	}
	n := int(info.State.Msgs)
	ids := make([]string, 0, n)
	if n == 0 {
		return ids, nil
	}
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return nil, err
	}
	for len(ids) < n {
		batch, err := cons.Fetch(n-len(ids), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return nil, err
		}
		got := 0
		for m := range batch.Messages() {
			ids = append(ids, m.Headers().Get(bus.HeaderMsgID))
			got++
		}
		if err := batch.Error(); err != nil {
			return nil, err
		}
		if got == 0 {
			return nil, fmt.Errorf("fetch returned nothing with %d of %d read", len(ids), n)
		}
	}
	return ids, nil
}

// requireStreamHolds checks that the stream holds exactly entries 0..n-1,
// each once, in order.
func requireStreamHolds(tb testing.TB, js jetstream.JetStream, n int) {
	tb.Helper()
	ids := streamIDs(tb, js)
	require.Len(tb, ids, n, "stream messages")
	for i, id := range ids {
		if want := testEntry(i).Key(); id != want {
			require.Failf(tb, "stream out of order", "message %d has id %q, want %q", i, id, want)
		}
	}
}

// publishN publishes entries from..to-1 and returns the first error.
func publishN(ctx context.Context, p *bus.Publisher, r *recorder, from, to int) error {
	for i := from; i < to; i++ {
		if err := p.Publish(ctx, bus.EntryMsg(bus.DefaultPrefix, testEntry(i), nil), r.done(i)); err != nil {
			return fmt.Errorf("publish %d: %w", i, err)
		}
	}
	return nil
}
