package bus_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
)

func TestPublisher_TenThousandInOrder(t *testing.T) {
	e := mustEnv(t)
	p := mustPublisher(t, e.js, bus.PublisherConfig{})
	r := newRecorder()
	const n = 10_000

	require.NoError(t, publishN(t.Context(), p, r, 0, n))
	require.NoError(t, p.Flush(t.Context()))

	r.requireAllOnceInOrder(t, n)
	requireStreamHolds(t, e.js, n)
	st := p.Stats()
	assert.Equal(t, bus.Stats{Published: n, Acked: n}, st)
}

func TestPublisher_DuplicatesAddNothing(t *testing.T) {
	e := mustEnv(t)
	p := mustPublisher(t, e.js, bus.PublisherConfig{})
	const n = 2000

	first := newRecorder()
	require.NoError(t, publishN(t.Context(), p, first, 0, n))
	require.NoError(t, p.Flush(t.Context()))
	first.requireAllOnceInOrder(t, n)

	// The same entries again, as a tailer re-reading after a crash would.
	again := newRecorder()
	require.NoError(t, publishN(t.Context(), p, again, 0, n))
	require.NoError(t, p.Flush(t.Context()))
	again.requireAllOnceInOrder(t, n)

	requireStreamHolds(t, e.js, n)
	st := p.Stats()
	assert.Equal(t, uint64(2*n), st.Acked)
	assert.Equal(t, uint64(n), st.Duplicates)
	assert.Zero(t, st.Reordered)
}

func TestPublisher_BlocksWhenWindowFull(t *testing.T) {
	e := mustEnv(t)
	const window = 8
	p := mustPublisher(t, e.js, bus.PublisherConfig{MaxInFlight: window, RetryMin: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond})
	r := newRecorder()

	// With the server down nothing is acknowledged: the window fills.
	e.srv.Stop()
	require.NoError(t, publishN(t.Context(), p, r, 0, window))
	assert.Equal(t, window, p.Stats().InFlight)

	// A publish with a deadline gives up and is not taken.
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	err := p.Publish(ctx, bus.EntryMsg(bus.DefaultPrefix, testEntry(window), nil), r.done(-1))
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded)

	// A publish without one blocks until the server is back.
	returned := make(chan error, 1)
	go func() { returned <- publishN(t.Context(), p, r, window, window+1) }()
	select {
	case err := <-returned:
		require.FailNow(t, "Publish returned with the window full", "err=%v", err)
	case <-time.After(200 * time.Millisecond):
	}
	assert.Zero(t, r.count(), "nothing completes while the server is down")

	e.srv.Start(t)
	select {
	case err := <-returned:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		require.FailNow(t, "Publish still blocked after the server came back")
	}
	require.NoError(t, p.Flush(t.Context()))
	r.requireAllOnceInOrder(t, window+1)
	requireStreamHolds(t, e.js, window+1)
	assert.Positive(t, p.Stats().Errors)
}

func TestPublisher_ServerRestartMidStream(t *testing.T) {
	e := mustEnv(t)
	p := mustPublisher(t, e.js, bus.PublisherConfig{MaxInFlight: 512, RetryMin: 10 * time.Millisecond, RetryMax: 100 * time.Millisecond})
	r := newRecorder()
	const n = 10_000

	published := make(chan error, 1)
	go func() { published <- publishN(t.Context(), p, r, 0, n) }()

	for _, at := range []int{2500, 6000} {
		natstest.CheckFor(t, 20*time.Second, time.Millisecond, func() error {
			if got := r.count(); got < at {
				return errors.New("waiting for acks before the outage")
			}
			return nil
		})
		errs := p.Stats().Errors
		e.srv.Stop()
		natstest.CheckFor(t, 10*time.Second, time.Millisecond, func() error {
			if p.Stats().Errors == errs {
				return errors.New("publisher has not seen the outage")
			}
			return nil
		})
		e.srv.Start(t)
	}

	require.NoError(t, <-published)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	require.NoError(t, p.Flush(ctx))

	r.requireAllOnceInOrder(t, n)
	requireStreamHolds(t, e.js, n)
	st := p.Stats()
	assert.Equal(t, uint64(n), st.Acked)
	assert.Positive(t, st.Retries+st.Errors)
	assert.Zero(t, st.Reordered)
	assert.Zero(t, st.Failed)
	t.Logf("stats after two outages: %+v", st)
}

func TestPublisher_ContextCancelCompletesPromptly(t *testing.T) {
	e := mustEnv(t)
	p := mustPublisher(t, e.js, bus.PublisherConfig{MaxInFlight: 64, RetryMin: time.Second, RetryMax: 5 * time.Second})
	r := newRecorder()

	e.srv.Stop()
	ctx, cancel := context.WithCancel(t.Context())
	require.NoError(t, publishN(ctx, p, r, 0, 40))
	cancel()

	start := time.Now()
	natstest.CheckFor(t, 2*time.Second, time.Millisecond, func() error {
		if r.count() < 40 {
			return errors.New("done not called for every message")
		}
		return nil
	})
	assert.Less(t, time.Since(start), time.Second, "cancellation took too long")
	r.mu.Lock()
	for i := range 40 {
		require.ErrorIs(t, r.errs[i], context.Canceled, "message %d", i)
		require.Equal(t, i, r.order[i])
	}
	r.mu.Unlock()

	err := p.Publish(ctx, bus.EntryMsg(bus.DefaultPrefix, testEntry(99), nil), r.done(99))
	require.ErrorIs(t, err, context.Canceled)
	st := p.Stats()
	assert.Equal(t, uint64(40), st.Failed)
	assert.Zero(t, st.InFlight)

	// The publisher is still usable once the server is back.
	e.srv.Start(t)
	r2 := newRecorder()
	require.NoError(t, publishN(t.Context(), p, r2, 0, 10))
	require.NoError(t, p.Flush(t.Context()))
	r2.requireAllOnceInOrder(t, 10)
}

func TestPublisher_CloseDrains(t *testing.T) {
	e := mustEnv(t)
	p, err := bus.NewPublisher(e.js, bus.PublisherConfig{})
	require.NoError(t, err)
	r := newRecorder()
	require.NoError(t, publishN(t.Context(), p, r, 0, 500))

	require.NoError(t, p.Close(t.Context()))
	r.requireAllOnceInOrder(t, 500)
	requireStreamHolds(t, e.js, 500)

	err = p.Publish(t.Context(), bus.EntryMsg(bus.DefaultPrefix, testEntry(500), nil), r.done(500))
	require.ErrorIs(t, err, bus.ErrClosed)
	require.NoError(t, p.Close(t.Context()), "second Close")
}

func TestPublisher_CloseAbandonsAtDeadline(t *testing.T) {
	e := mustEnv(t)
	p, err := bus.NewPublisher(e.js, bus.PublisherConfig{RetryMin: 10 * time.Millisecond, RetryMax: 20 * time.Millisecond})
	require.NoError(t, err)
	r := newRecorder()
	require.NoError(t, publishN(t.Context(), p, r, 0, 20))
	require.NoError(t, p.Flush(t.Context()))

	e.srv.Stop()
	require.NoError(t, publishN(t.Context(), p, r, 20, 50))
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, p.Close(ctx), context.DeadlineExceeded)

	r.mu.Lock()
	defer r.mu.Unlock()
	require.Len(t, r.order, 50)
	for i := range 50 {
		require.Equal(t, i, r.order[i])
		if i < 20 {
			require.NoError(t, r.errs[i], "message %d", i)
		} else {
			require.ErrorIs(t, r.errs[i], bus.ErrAbandoned, "message %d", i)
		}
	}
}

func TestPublisher_RejectedMessageDoesNotBlockOthers(t *testing.T) {
	e := mustEnv(t, func(o *server.Options) { o.MaxPayload = 4096 })
	p := mustPublisher(t, e.js, bus.PublisherConfig{})
	r := newRecorder()

	require.NoError(t, publishN(t.Context(), p, r, 0, 3))
	big := testEntry(3)
	big.Text = strings.Repeat("x", 8000)
	require.NoError(t, p.Publish(t.Context(), bus.EntryMsg(bus.DefaultPrefix, big, nil), r.done(3)))
	require.NoError(t, publishN(t.Context(), p, r, 4, 6))
	require.NoError(t, p.Flush(t.Context()))

	r.mu.Lock()
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5}, r.order)
	require.Len(t, r.errs, 1)
	require.ErrorIs(t, r.errs[3], bus.ErrRejected)
	require.ErrorIs(t, r.errs[3], nats.ErrMaxPayload)
	r.mu.Unlock()
	assert.Equal(t, uint64(1), p.Stats().Failed)
	assert.Len(t, streamIDs(t, e.js), 5)
}

func TestPublisher_WaitsForStream(t *testing.T) {
	srv := natstest.RunServer(t)
	nc := natstest.Connect(t, srv.URL())
	js := natstest.JetStream(t, nc)
	p := mustPublisher(t, js, bus.PublisherConfig{RetryMin: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond})
	r := newRecorder()

	// No stream yet: "no responders" is retried, not reported.
	require.NoError(t, publishN(t.Context(), p, r, 0, 100))
	natstest.CheckFor(t, 5*time.Second, time.Millisecond, func() error {
		if p.Stats().Errors == 0 {
			return errors.New("no failed attempt yet")
		}
		return nil
	})
	assert.Zero(t, r.count())

	_, err := bus.EnsureStream(t.Context(), js, bus.StreamConfig{})
	require.NoError(t, err)
	require.NoError(t, p.Flush(t.Context()))
	r.requireAllOnceInOrder(t, 100)
	requireStreamHolds(t, js, 100)
}

func TestPublisher_InvalidMessage(t *testing.T) {
	e := mustEnv(t)
	p := mustPublisher(t, e.js, bus.PublisherConfig{})
	tests := []struct {
		name string
		msg  *nats.Msg
	}{
		{"Nil", nil},
		{"NoSubject", &nats.Msg{Header: nats.Header{bus.HeaderMsgID: {"a"}}}},
		{"NoMsgID", &nats.Msg{Subject: "sessionpipe.entries.h.f"}},
		{"Reply", &nats.Msg{Subject: "sessionpipe.entries.h.f", Reply: "r", Header: nats.Header{bus.HeaderMsgID: {"a"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			called := false
			err := p.Publish(t.Context(), tt.msg, func(error) { called = true })
			require.ErrorIs(t, err, bus.ErrInvalidMessage)
			assert.False(t, called)
		})
	}
	assert.Zero(t, p.Stats().Published)
}

func TestNewPublisher_RefusesReconnectBuffer(t *testing.T) {
	srv := natstest.RunServer(t)
	nc, err := nats.Connect(srv.URL()) // default 8 MiB reconnect buffer
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	_, err = bus.NewPublisher(natstest.JetStream(t, nc), bus.PublisherConfig{})
	require.ErrorIs(t, err, bus.ErrReconnectBuffer)
}

func TestPublisherConfig_Validate(t *testing.T) {
	tests := []struct {
		name  string
		cfg   bus.PublisherConfig
		field string // "" when valid
	}{
		{"Zero", bus.PublisherConfig{}, ""},
		{"Set", bus.PublisherConfig{MaxInFlight: 10, AckTimeout: time.Second, RetryMin: time.Millisecond, RetryMax: time.Second}, ""},
		{"NegativeWindow", bus.PublisherConfig{MaxInFlight: -1}, "max_in_flight"},
		{"NegativeAckTimeout", bus.PublisherConfig{AckTimeout: -1}, "ack_timeout"},
		{"NegativeRetryMin", bus.PublisherConfig{RetryMin: -1}, "retry_min"},
		{"NegativeRetryMax", bus.PublisherConfig{RetryMax: -1}, "retry_max"},
		{"MinOverMax", bus.PublisherConfig{RetryMin: time.Second, RetryMax: time.Millisecond}, "retry_min"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireConfigError(t, tt.cfg.Validate(), tt.field)
		})
	}
}

// requireConfigError checks that err is nil when field is "", else a
// *ConfigError for field wrapping ErrInvalidConfig.
func requireConfigError(tb testing.TB, err error, field string) {
	tb.Helper()
	if field == "" {
		require.NoError(tb, err)
		return
	}
	var ce *bus.ConfigError
	require.ErrorAs(tb, err, &ce)
	assert.Equal(tb, field, ce.Field)
	require.ErrorIs(tb, err, bus.ErrInvalidConfig)
}

// The bytes in flight are bounded as well as the messages: while the
// server is down, Publish blocks once the accepted messages reach
// MaxInFlightBytes, a message larger than the bound goes alone, and
// everything is delivered once, in order, when the server is back.
func TestPublisher_ByteBudget(t *testing.T) {
	e := mustEnv(t)
	const budget = 100 << 10
	p := mustPublisher(t, e.js, bus.PublisherConfig{MaxInFlight: 1000, MaxInFlightBytes: budget,
		RetryMin: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond})
	r := newRecorder()
	msg := func(i, size int) *nats.Msg {
		en := testEntry(i)
		en.Text = strings.Repeat("x", size)
		return bus.EntryMsg(bus.DefaultPrefix, en, nil)
	}

	e.srv.Stop()
	published := make(chan int, 100)
	go func() {
		defer close(published)
		for i := range 8 {
			size := 30 << 10
			if i == 5 {
				size = 3 * budget // larger than the whole budget
			}
			if err := p.Publish(t.Context(), msg(i, size), r.done(i)); err != nil {
				return
			}
			published <- i
		}
	}()
	natstest.CheckFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if len(published) < 3 {
			return fmt.Errorf("%d published", len(published))
		}
		return nil
	})
	time.Sleep(200 * time.Millisecond) // time enough for a fourth, were it let through
	require.Len(t, published, 3, "the fourth message would exceed the budget")
	st := p.Stats()
	require.Equal(t, 3, st.InFlight)
	require.LessOrEqual(t, st.InFlightBytes, int64(budget))
	require.Greater(t, st.InFlightBytes, int64(3*30<<10))

	// A blocked Publish gives up with its context.
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, p.Publish(ctx, msg(100, 30<<10), r.done(100)), context.DeadlineExceeded)

	e.srv.Start(t)
	natstest.CheckFor(t, 20*time.Second, 10*time.Millisecond, func() error {
		if n := r.count(); n < 8 {
			return fmt.Errorf("%d of 8 done", n)
		}
		return nil
	})
	require.NoError(t, p.Flush(t.Context()))
	r.requireAllOnceInOrder(t, 8)
	require.Zero(t, p.Stats().InFlightBytes)
	requireStreamHolds(t, e.js, 8)
}
