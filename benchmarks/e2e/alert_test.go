package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/pipeline/tail"
)

// BenchmarkAlertLatency measures the time from a transcript line written
// on disk to the alert it causes published on <prefix>.alerts.<rule>:
// tailer (file notifications), JetStream (in-process server, file store),
// indexer (durable consumer, evaluator) on one machine. Each iteration
// writes a new session whose one API call passes a session-scope rule,
// and waits for its alert. It reports p50 and p99.
func BenchmarkAlertLatency(b *testing.B) {
	srv := natstest.RunServer(b)
	nc := natstest.Connect(b, srv.URL())
	js := natstest.JetStream(b, nc)
	_, err := bus.EnsureStream(b.Context(), js, bus.StreamConfig{})
	require.NoError(b, err)
	pub, err := bus.NewPublisher(js, bus.PublisherConfig{})
	require.NoError(b, err)
	dir := b.TempDir()
	tl, err := tail.New(tail.Config{Watch: []string{dir}, StateDir: b.TempDir(), Host: "laptop", Publisher: pub, Text: true})
	require.NoError(b, err)
	rules, err := alert.Parse("rules.yaml", []byte("rules:\n  - name: first-call\n    scope: session\n    metric: output_tokens\n    above: 0\n"))
	require.NoError(b, err)
	ix, err := index.NewIndexer(index.IndexerConfig{JS: js, Dir: b.TempDir(), Pricer: price.Default(), Rules: rules})
	require.NoError(b, err)

	type arrival struct {
		data string
		at   time.Time
	}
	arrived := make(chan arrival, 16)
	sub, err := nc.Subscribe(alert.AlertsFilter(bus.DefaultPrefix), func(m *nats.Msg) {
		arrived <- arrival{string(m.Data), time.Now()}
	})
	require.NoError(b, err)
	defer sub.Unsubscribe()

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { tl.Run(ctx) })
	wg.Go(func() { ix.Run(ctx) })
	defer func() { cancel(); wg.Wait(); pub.Close(context.Background()) }()
	<-ix.Ready()

	var lat []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		sid := fmt.Sprintf("a1b2c3d4-0000-4000-8000-%012d", i)
		now := time.Now().UTC().Format(time.RFC3339Nano)
		line := fmt.Sprintf(`{"type":"assistant","uuid":"u-%d","sessionId":%q,"timestamp":%q,"cwd":"/w","message":{"id":"msg_%d","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"done"}],"usage":{"input_tokens":10,"output_tokens":5}},"requestId":"req_%d"}`+"\n", i, sid, now, i, i)
		start := time.Now()
		require.NoError(b, os.WriteFile(filepath.Join(dir, sid+".jsonl"), []byte(line), 0o644))
		timeout := time.After(30 * time.Second)
	wait:
		for {
			select {
			case a := <-arrived:
				if strings.Contains(a.data, sid) {
					lat = append(lat, a.at.Sub(start))
					break wait
				}
			case <-timeout:
				b.Fatalf("no alert for session %s", sid)
			}
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds())/1000, "p99-ms")
}
