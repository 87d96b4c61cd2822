package bus_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
)

func TestIdentity_ChangesWhenStreamRecreated(t *testing.T) {
	e := mustEnv(t)
	ctx := t.Context()
	first, err := bus.Identity(ctx, e.js, "")
	require.NoError(t, err)
	require.Equal(t, bus.DefaultStream, first.Name)
	require.False(t, first.Created.IsZero())
	require.False(t, first.IsZero())

	again, err := bus.CheckIdentity(ctx, e.js, first)
	require.NoError(t, err, "same stream")
	require.True(t, again.Equal(first))

	// Saved as JSON with the state, read back: still equal.
	data, err := json.Marshal(first)
	require.NoError(t, err)
	var saved bus.StreamIdentity
	require.NoError(t, json.Unmarshal(data, &saved))
	_, err = bus.CheckIdentity(ctx, e.js, saved)
	require.NoError(t, err, "identity after a JSON round trip")

	// A server restart keeps the stream and its identity.
	e.srv.Restart(t)
	natstest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		_, err := bus.CheckIdentity(ctx, e.js, saved)
		return err
	})

	// Deleted and recreated with the same name and config: another stream.
	require.NoError(t, e.js.DeleteStream(ctx, bus.DefaultStream))
	_, err = bus.EnsureStream(ctx, e.js, bus.StreamConfig{})
	require.NoError(t, err)
	cur, err := bus.CheckIdentity(ctx, e.js, saved)
	var mismatch *bus.StreamMismatchError
	require.ErrorAs(t, err, &mismatch)
	require.ErrorIs(t, err, bus.ErrStreamMismatch)
	require.True(t, mismatch.Saved.Equal(saved))
	require.True(t, mismatch.Current.Equal(cur))
	require.False(t, cur.Equal(saved))
	require.Contains(t, err.Error(), bus.DefaultStream)

	// No state yet: nothing to compare.
	_, err = bus.CheckIdentity(ctx, e.js, bus.StreamIdentity{})
	require.NoError(t, err)
}

func TestIdentity_NoStream(t *testing.T) {
	srv := natstest.RunServer(t)
	js := natstest.JetStream(t, natstest.Connect(t, srv.URL()))
	_, err := bus.Identity(t.Context(), js, "NOPE")
	require.ErrorIs(t, err, jetstream.ErrStreamNotFound)
}

func TestIdentity_Cluster(t *testing.T) {
	c := natstest.RunCluster(t, 3)
	js := natstest.JetStream(t, natstest.Connect(t, c.URLs()))
	ctx := t.Context()
	natstest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		_, err := bus.EnsureStream(ctx, js, bus.StreamConfig{Replicas: 3})
		return err
	})
	id, err := bus.Identity(ctx, js, "")
	require.NoError(t, err)
	require.Equal(t, "natstest", id.Cluster, "cluster name in the identity")
}
