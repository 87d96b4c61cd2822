package bus_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
)

// auxMsg is message i on a subject outside the sessionpipe stream.
func auxMsg(i int) *nats.Msg {
	return &nats.Msg{Subject: "aux.x", Data: fmt.Appendf(nil, "%d", i), Header: nats.Header{bus.HeaderMsgID: {fmt.Sprint("aux-", i)}}}
}

// TestPublisher_HoldsNewMessagesAfterReconnect checks the reconnect guard:
// messages sent before a reconnect and not yet settled must be re-sent
// before anything new goes out on the new connection, even when the
// publisher's goroutine lags behind (here: a slow done callback).
func TestPublisher_HoldsNewMessagesAfterReconnect(t *testing.T) {
	e := mustEnv(t)
	p := mustPublisher(t, e.js, bus.PublisherConfig{RetryMin: 10 * time.Millisecond, RetryMax: 20 * time.Millisecond})
	r := newRecorder()
	ctx := t.Context()

	entered, release := make(chan struct{}), make(chan struct{})
	require.NoError(t, p.Publish(ctx, bus.EntryMsg(bus.DefaultPrefix, testEntry(0), nil), func(err error) {
		close(entered)
		<-release
		r.done(0)(err)
	}))
	<-entered // the publisher's goroutine is now stuck in done

	// Sent, then failed (no stream yet): the stuck goroutine has not seen it.
	for i := 1; i <= 5; i++ {
		require.NoError(t, p.Publish(ctx, auxMsg(i), r.done(i)))
	}
	reconnected := make(chan struct{}, 1)
	e.nc.SetReconnectHandler(func(*nats.Conn) { reconnected <- struct{}{} })
	e.srv.Restart(t)
	select {
	case <-reconnected:
	case <-time.After(10 * time.Second):
		require.FailNow(t, "no reconnect")
	}
	_, err := e.js.CreateStream(ctx, jetstream.StreamConfig{Name: "AUX", Subjects: []string{"aux.>"}})
	require.NoError(t, err)

	// New message on the new connection: must wait for 1..5.
	require.NoError(t, p.Publish(ctx, auxMsg(6), r.done(6)))
	close(release)
	flushCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	require.NoError(t, p.Flush(flushCtx))
	r.requireAllOnceInOrder(t, 7)

	st, err := e.js.Stream(ctx, "AUX")
	require.NoError(t, err)
	for seq := uint64(1); seq <= 6; seq++ {
		m, err := st.GetMsg(ctx, seq)
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprint(seq), string(m.Data), "AUX message at seq %d", seq)
	}
	assert.Zero(t, p.Stats().Reordered)
}

// TestPublisher_ReorderIsCounted shows the one case the publisher cannot
// prevent, and that it is counted: a message that failed without a
// reconnect while a later one, already sent, was stored.
func TestPublisher_ReorderIsCounted(t *testing.T) {
	e := mustEnv(t)
	p := mustPublisher(t, e.js, bus.PublisherConfig{RetryMin: 10 * time.Millisecond, RetryMax: 20 * time.Millisecond})
	r := newRecorder()
	ctx := t.Context()

	entered, release := make(chan struct{}), make(chan struct{})
	require.NoError(t, p.Publish(ctx, bus.EntryMsg(bus.DefaultPrefix, testEntry(0), nil), func(err error) {
		close(entered)
		<-release
		r.done(0)(err)
	}))
	<-entered
	require.NoError(t, p.Publish(ctx, auxMsg(1), r.done(1))) // fails: no stream
	natstest.CheckFor(t, 5*time.Second, time.Millisecond, func() error {
		if _, err := e.js.Stream(ctx, "AUX"); err == nil {
			return nil
		}
		_, err := e.js.CreateStream(ctx, jetstream.StreamConfig{Name: "AUX", Subjects: []string{"aux.>"}})
		return err
	})
	require.NoError(t, p.Publish(ctx, auxMsg(2), r.done(2))) // stored first
	close(release)
	require.NoError(t, p.Flush(ctx))
	r.requireAllOnceInOrder(t, 3)
	assert.Equal(t, uint64(1), p.Stats().Reordered)
}

// TestPublisher_AckTimeoutRetried covers a server that takes messages and
// never acknowledges them: each attempt times out and is retried, Flush
// waits, and once a stream takes the subject everything is stored once.
func TestPublisher_AckTimeoutRetried(t *testing.T) {
	e := mustEnv(t)
	p := mustPublisher(t, e.js, bus.PublisherConfig{AckTimeout: 50 * time.Millisecond, RetryMin: 10 * time.Millisecond, RetryMax: 20 * time.Millisecond})
	r := newRecorder()
	ctx := t.Context()

	// A plain subscriber is a responder that never answers.
	sink, err := e.nc.Subscribe("aux.>", func(*nats.Msg) {})
	require.NoError(t, err)
	for i := 1; i <= 3; i++ {
		require.NoError(t, p.Publish(ctx, auxMsg(i), r.done(i-1)))
	}
	natstest.CheckFor(t, 5*time.Second, time.Millisecond, func() error {
		if p.Stats().Errors < 6 {
			return fmt.Errorf("%d failed attempts", p.Stats().Errors)
		}
		return nil
	})
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	require.ErrorIs(t, p.Flush(short), context.DeadlineExceeded)
	cancel()
	assert.Zero(t, r.count())

	require.NoError(t, sink.Unsubscribe())
	_, err = e.js.CreateStream(ctx, jetstream.StreamConfig{Name: "AUX", Subjects: []string{"aux.>"}})
	require.NoError(t, err)
	require.NoError(t, p.Flush(ctx))
	r.requireAllOnceInOrder(t, 3)
	st, err := e.js.Stream(ctx, "AUX")
	require.NoError(t, err)
	info, err := st.Info(ctx)
	require.NoError(t, err)
	assert.Equal(t, uint64(3), info.State.Msgs)
	assert.Positive(t, p.Stats().Retries)
}
