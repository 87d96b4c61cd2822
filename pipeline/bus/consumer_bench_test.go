package bus_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/schema"
)

// benchConsumeN is the number of entries in the pre-filled stream.
const benchConsumeN = 20000

// benchAssistant returns a realistic assistant entry: usage, model, a
// tool call and a few hundred bytes of text.
func benchAssistant(i int) *schema.Entry {
	e := testEntry(i)
	e.Role = schema.RoleAssistant
	e.Model = "claude-sonnet-4-5"
	e.MessageID = fmt.Sprintf("msg_%06d", i)
	e.RequestID = fmt.Sprintf("req_%06d", i)
	e.Usage = &schema.Usage{Input: 12, Output: 340, CacheRead: 48000, CacheWrite: 1200}
	e.UsageKey = e.MessageID + ":" + e.RequestID
	e.Text = strings.Repeat("Let me look at the failing test first. ", 10)
	e.ToolCalls = []schema.ToolCall{{ID: fmt.Sprintf("toolu_%06d", i), Name: "Bash", Input: []byte(`{"command":"go test ./..."}`)}}
	return e
}

// BenchmarkConsume measures entries consumed and decoded per second from
// a pre-filled stream of benchConsumeN entries: each iteration reads the
// whole stream with a durable consumer started at sequence 1 (impl=bus,
// by max batch, and with the indexer's Lite decoding; -count reuses
// the names, which resets them),
// or with an ordered consumer and DecodeEntry (impl=raw, the floor: no
// batching, no acks).
func BenchmarkConsume(b *testing.B) {
	srv := natstest.RunServer(b)
	nc := natstest.Connect(b, srv.URL())
	js := natstest.JetStream(b, nc)
	_, err := bus.EnsureStream(b.Context(), js, bus.StreamConfig{})
	require.NoError(b, err)
	var bytes int64
	for i := range benchConsumeN {
		m := bus.EntryMsg(bus.DefaultPrefix, benchAssistant(i), nil)
		bytes += int64(len(m.Data))
		_, err := js.PublishMsgAsync(m)
		require.NoError(b, err)
	}
	<-js.PublishAsyncComplete()
	b.Logf("stream: %d entries, %d body bytes (%d per entry)", benchConsumeN, bytes, bytes/benchConsumeN)

	for _, cs := range []struct {
		batch int
		lite  bool
	}{{100, false}, {1000, false}, {1000, true}} {
		batch := cs.batch
		b.Run(fmt.Sprintf("impl=bus/maxBatch=%d/lite=%v", batch, cs.lite), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(bytes)
			n := 0
			for b.Loop() {
				n++
				c, err := bus.NewConsumer(js, bus.ConsumerConfig{Name: fmt.Sprintf("bench%d_%v_%d", batch, cs.lite, n), MaxBatch: batch, StartSeq: 1, Lite: cs.lite})
				require.NoError(b, err)
				ctx, cancel := context.WithCancel(b.Context())
				var got atomic.Int64
				err = c.Run(ctx, func(ctx context.Context, bt *bus.Batch) error {
					if got.Add(int64(len(bt.Entries))) >= benchConsumeN {
						cancel()
					}
					return nil
				})
				cancel()
				require.ErrorIs(b, err, context.Canceled)
				require.Equal(b, int64(benchConsumeN), got.Load())
			}
			b.ReportMetric(float64(benchConsumeN*n)/b.Elapsed().Seconds(), "entries/s")
		})
	}
	b.Run("impl=raw", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(bytes)
		n := 0
		for b.Loop() {
			n++
			oc, err := js.OrderedConsumer(b.Context(), bus.DefaultStream, jetstream.OrderedConsumerConfig{})
			require.NoError(b, err)
			it, err := oc.Messages()
			require.NoError(b, err)
			var e schema.Entry
			for range benchConsumeN {
				m, err := it.Next()
				require.NoError(b, err)
				require.NoError(b, bus.DecodeEntry(m.Headers(), m.Data(), &e))
			}
			it.Stop()
		}
		b.ReportMetric(float64(benchConsumeN*n)/b.Elapsed().Seconds(), "entries/s")
	})
}
