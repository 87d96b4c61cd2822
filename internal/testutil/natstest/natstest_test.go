package natstest_test

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
)

func TestServer_RestartKeepsPortAndData(t *testing.T) {
	s := natstest.RunServer(t)
	url := s.URL()
	nc := natstest.Connect(t, url)
	js := natstest.JetStream(t, nc)
	ctx := t.Context()

	_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}})
	require.NoError(t, err)
	_, err = js.Publish(ctx, "t.a", []byte("one"))
	require.NoError(t, err)

	reconnected := make(chan struct{}, 1)
	nc.SetReconnectHandler(func(*nats.Conn) { reconnected <- struct{}{} })
	s.Restart(t)
	assert.Equal(t, url, s.URL(), "URL after restart")
	select {
	case <-reconnected:
	case <-time.After(time.Minute):
		require.FailNow(t, "client did not reconnect")
	}

	st, err := js.Stream(ctx, "T")
	require.NoError(t, err)
	info, err := st.Info(ctx)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), info.State.Msgs, "messages after restart")
}

func TestServer_StopStart(t *testing.T) {
	s := natstest.RunServer(t, natstest.WithServerName("solo"))
	nc := natstest.Connect(t, s.URL())
	require.True(t, s.Running())
	assert.Equal(t, "solo", s.Name())

	s.Stop()
	assert.False(t, s.Running())
	assert.Nil(t, s.Server())
	natstest.CheckFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if nc.IsConnected() {
			return nats.ErrConnectionClosed // any error: still connected
		}
		return nil
	})
	// No reconnect buffer: a publish while disconnected fails at once.
	require.Error(t, nc.Publish("x", []byte("y")))

	s.Start(t)
	natstest.CheckFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		if !nc.IsConnected() {
			return nats.ErrDisconnected
		}
		return nil
	})
	require.NoError(t, nc.Publish("x", []byte("y")))
}

func TestRunCluster_ElectsLeaders(t *testing.T) {
	c := natstest.RunCluster(t, 3)
	require.Len(t, c.Servers, 3)
	nc := natstest.Connect(t, c.URLs())
	js := natstest.JetStream(t, nc)
	_, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "R3", Subjects: []string{"r3.>"}, Replicas: 3})
	require.NoError(t, err)
	leader := c.WaitStreamLeader(t, "R3")
	require.NotNil(t, leader)

	leader.Stop()
	next := c.WaitStreamLeader(t, "R3")
	assert.NotEqual(t, leader.Name(), next.Name(), "a new leader is elected")
	leader.Start(t)
}
