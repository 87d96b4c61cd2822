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
// message deleted twice is gone, whether its block is still there
// ("sequence not found") or was removed ("no message found"); a delete
// that fails for another reason is not. A purge of the original lines stopped at the
// second delete of a message whose first delete had been interrupted by a
// stop (its reply lost): "original lines not purged from the stream", and
// the rest stayed there until the next start (TestExporter_PurgeArchived
// failed so 2 times in 10 under -race).
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
	require.ErrorContains(t, err, "sequence 2 not found", "a second delete")
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

	// A message whose whole block was removed: small blocks (the server
	// sizes them from MaxBytes), the first one emptied.
	small, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}, MaxBytes: 128 << 10})
	require.NoError(t, err)
	for range 8 {
		_, err := js.Publish(ctx, "s.raw", make([]byte, 8<<10))
		require.NoError(t, err)
	}
	for seq := uint64(1); seq <= 4; seq++ {
		require.NoError(t, small.DeleteMsg(ctx, seq))
	}
	for seq := uint64(1); seq <= 4; seq++ {
		err = small.DeleteMsg(ctx, seq)
		require.ErrorContains(t, err, "no message found")
		require.True(t, msgGone(err), "%v", err)
	}
}
