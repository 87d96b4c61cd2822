package bus_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
)

// BenchmarkEmbedded_Publish measures what -sync always costs: messages
// published through a Publisher (the tailer's defaults) to an embedded
// server whose store is on the test's temporary directory (a real disk,
// not tmpfs, or the fsyncs cost nothing), with nats-server's default
// 2-minute sync and with every write synced before its acknowledgement.
// Sizes are a batch message (300 KB) and an appended line's (2 KB);
// inflight=1 waits for each acknowledgement before the next publish, the
// latency of one live append, the default lets the publisher pipeline.
//
//	go test ./pipeline/bus -run '^$' -bench Embedded_Publish -count 6
func BenchmarkEmbedded_Publish(b *testing.B) {
	for _, always := range []bool{false, true} {
		sync := "default"
		if always {
			sync = "always"
		}
		for _, size := range []int{300 << 10, 2 << 10} {
			for _, inflight := range []int{bus.DefaultMaxInFlight, 1} {
				name := fmt.Sprintf("sync=%s/size=%dKB/inflight=%d", sync, size>>10, inflight)
				b.Run(name, func(b *testing.B) { benchEmbedded(b, always, size, inflight) })
			}
		}
	}
}

func benchEmbedded(b *testing.B, always bool, size, inflight int) {
	e := mustEmbedded(b, bus.EmbeddedConfig{StoreDir: b.TempDir(), SyncAlways: always})
	if _, got := e.Sync(); got != always {
		b.Fatalf("server sync always = %v, want %v", got, always)
	}
	js := natstest.JetStream(b, e.Conn())
	_, err := bus.EnsureStream(b.Context(), js, bus.StreamConfig{})
	require.NoError(b, err)
	p, err := bus.NewPublisher(js, bus.PublisherConfig{MaxInFlight: inflight})
	require.NoError(b, err)

	// Incompressible bytes: the store writes them as they are.
	payload := make([]byte, size)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range payload {
		payload[i] = byte(rng.Uint32())
	}
	subject := bus.EntrySubject(bus.DefaultPrefix, "bench-host", "claude-code")
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
		m := &nats.Msg{Subject: subject, Data: payload, Header: nats.Header{bus.HeaderMsgID: {strconv.Itoa(i)}}}
		if err := p.Publish(ctx, m, done); err != nil {
			b.Fatal(err)
		}
		i++
	}
	// Every message is acknowledged, so stored (and, with always, synced),
	// before the clock stops.
	require.NoError(b, p.Flush(ctx))
	b.StopTimer()
	reportRate(b)
	require.NoError(b, p.Close(ctx))
	require.Zero(b, failed.Load(), "failed publishes")
	require.Equal(b, uint64(i), p.Stats().Acked)
}
