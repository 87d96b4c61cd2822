package bus_test

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
)

// Fleet mode: a replicated stream and consumer on a 3-node cluster; the
// node leading the durable consumer dies mid-stream. Every entry still
// reaches the handler once, in order.
func TestConsumer_ClusterLeaderFailover(t *testing.T) {
	c := natstest.RunCluster(t, 3)
	nc := natstest.Connect(t, c.URLs())
	js := natstest.JetStream(t, nc)
	_, err := bus.EnsureStream(t.Context(), js, bus.StreamConfig{Replicas: 3})
	require.NoError(t, err)
	c.WaitStreamLeader(t, bus.DefaultStream)
	const n = 1000
	want := publishEntries(t, js, 0, n)

	s := newSink()
	cons := mustConsumer(t, js, bus.ConsumerConfig{MaxBatch: 20, FetchWait: 200 * time.Millisecond})
	runConsumer(t, cons, s.handle)
	waitCount(t, s, n/4)

	var leader *natstest.Server
	natstest.CheckFor(t, waitLong, waitPoll, func() error {
		for _, srv := range c.Servers {
			if ns := srv.Server(); ns != nil && ns.JetStreamIsConsumerLeader(server.DEFAULT_GLOBAL_ACCOUNT, bus.DefaultStream, "test") {
				leader = srv
				return nil
			}
		}
		return errors.New("no consumer leader")
	})
	leader.Stop()
	c.WaitStreamLeader(t, bus.DefaultStream)
	want = append(want, publishEntries(t, js, n, n+100)...)
	natstest.CheckFor(t, 60*time.Second, waitPoll, func() error {
		if got := s.count(); got < n+100 {
			return errors.New("waiting")
		}
		return nil
	})
	leader.Start(t)
	got, _ := s.snapshot()
	require.Equal(t, want, got, "every entry once, in order, across the failover")
}
