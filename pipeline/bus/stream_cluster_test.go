package bus_test

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/logtest"
	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
)

// A cluster that cannot answer yet (here: two of three servers still
// down, as when the daemons start with the cluster) is asked again until
// it can, and EnsureStream returns once the stream has a leader, instead
// of failing with the first request's timeout (the stream being created
// anyway, so that a second start worked).
func TestEnsureStream_WaitsForTheCluster(t *testing.T) {
	c := natstest.RunCluster(t, 3)
	nc := natstest.Connect(t, c.Servers[0].URL())
	js, err := jetstream.New(nc, jetstream.WithDefaultTimeout(500*time.Millisecond))
	require.NoError(t, err)
	c.Servers[1].Stop()
	c.Servers[2].Stop()

	var logs logtest.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := bus.EnsureStream(t.Context(), js, bus.StreamConfig{Replicas: 3, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		done <- err
	}()
	// Wait until it was not answered at least once (or it returned).
	natstest.CheckFor(t, 60*time.Second, 10*time.Millisecond, func() error {
		if len(done) > 0 || strings.Contains(logs.String(), "JetStream cannot serve the stream yet") {
			return nil
		}
		return errors.New("not asked again yet")
	})
	c.Servers[1].Start(t)
	c.Servers[2].Start(t)
	select {
	case err := <-done:
		require.NoError(t, err, "logs:\n%s", logs.String())
	case <-time.After(5 * time.Minute):
		t.Fatalf("EnsureStream did not return; logs:\n%s", logs.String())
	}
	require.NotNil(t, c.StreamLeader(bus.DefaultStream), "returned before the stream had a leader")
	require.Contains(t, logs.String(), "JetStream answers again")
}
