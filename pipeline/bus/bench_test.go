package bus_test

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
)

// BenchmarkPublish compares the Publisher with raw asynchronous JetStream
// publishing (PublishMsgAsync, the library's own pending limit, no
// ordering or retry logic) on the same in-process server, message sizes
// and in-flight limits. The tailer needs bus ≥ 70% of raw msgs/s.
func BenchmarkPublish(b *testing.B) {
	for _, size := range []int{256, 1024, 4096} {
		for _, inflight := range []int{256, 4096} {
			name := fmt.Sprintf("size=%d/inflight=%d", size, inflight)
			b.Run(name+"/impl=bus", func(b *testing.B) { benchBus(b, size, inflight) })
			b.Run(name+"/impl=raw", func(b *testing.B) { benchRaw(b, size, inflight) })
		}
	}
}

// benchEnv starts a server with the default stream and returns a
// connection, a payload of size bytes and a message factory.
func benchEnv(b *testing.B, size int) (*nats.Conn, func(i int) *nats.Msg) {
	b.Helper()
	srv := natstest.RunServer(b)
	nc := natstest.Connect(b, srv.URL())
	_, err := bus.EnsureStream(b.Context(), natstest.JetStream(b, nc), bus.StreamConfig{})
	require.NoError(b, err)
	payload := bytes.Repeat([]byte("x"), size)
	subject := bus.EntrySubject(bus.DefaultPrefix, "bench-host", "claude-code")
	return nc, func(i int) *nats.Msg {
		return &nats.Msg{Subject: subject, Data: payload, Header: nats.Header{bus.HeaderMsgID: {strconv.Itoa(i)}}}
	}
}

func benchBus(b *testing.B, size, inflight int) {
	nc, msg := benchEnv(b, size)
	js := natstest.JetStream(b, nc)
	p, err := bus.NewPublisher(js, bus.PublisherConfig{MaxInFlight: inflight})
	require.NoError(b, err)
	var failed atomic.Int64
	done := func(err error) {
		if err != nil {
			failed.Add(1)
		}
	}
	ctx := b.Context()
	b.ReportAllocs()
	b.SetBytes(int64(size))
	i := 0
	for b.Loop() {
		if err := p.Publish(ctx, msg(i), done); err != nil {
			b.Fatal(err)
		}
		i++
	}
	reportRate(b)
	require.NoError(b, p.Close(ctx))
	require.Zero(b, failed.Load(), "failed publishes")
	require.Equal(b, uint64(i), p.Stats().Acked)
}

func benchRaw(b *testing.B, size, inflight int) {
	nc, msg := benchEnv(b, size)
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(inflight))
	require.NoError(b, err)
	b.ReportAllocs()
	b.SetBytes(int64(size))
	i := 0
	for b.Loop() {
		m := msg(i)
		for {
			_, err := js.PublishMsgAsync(m)
			if err == nil {
				break
			}
			// The library's pending limit stalled longer than its 200ms
			// stall wait: the message was not sent, send it again.
			if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
				b.Fatal(err)
			}
		}
		i++
	}
	reportRate(b)
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(30 * time.Second):
		b.Fatal("raw publishes not acknowledged")
	}
}

// reportRate adds msgs/s to the benchmark's metrics.
func reportRate(b *testing.B) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, "msgs/s")
	}
}
