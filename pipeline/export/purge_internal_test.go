package export

import (
	"context"
	"errors"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
)

// TestMsgGone holds msgGone to what the server and nats.go answer: a
// message deleted twice is gone; a delete that fails for another reason
// is not. A purge of the original lines stopped at the
// second delete of a message whose first delete had been interrupted by a
// stop (its reply lost): "original lines not purged from the stream", and
// the rest stayed there until the next start.
func TestMsgGone(t *testing.T) {
	srv := natstest.RunServer(t)
	nc, err := nats.Connect(srv.URL())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	ctx := t.Context()
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}})
	require.NoError(t, err)
	for range 3 {
		_, err := js.Publish(ctx, "t.raw", []byte("line"))
		require.NoError(t, err)
	}

	require.NoError(t, s.DeleteMsg(ctx, 2))
	err = s.DeleteMsg(ctx, 2)
	require.Error(t, err, "a second delete")
	require.True(t, msgGone(err), "%v", err)

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	err = s.DeleteMsg(canceled, 3)
	require.Error(t, err)
	require.False(t, msgGone(err), "%v", err)
	require.False(t, msgGone(errors.New("nats: message deletion unsuccessful")))
	require.False(t, msgGone(nil))

	info, err := s.Info(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(2), info.State.Msgs, "messages 1 and 3 are still there")
}
