package tail

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/dirlock"
)

// Two tailers on one state directory would both write its checkpoints,
// each moving offsets the other's publishes do not cover: the second one
// refuses to start and names the process that holds the directory. Once
// the first stops, the directory is free again.
func TestTailer_OneOwnerPerStateDir(t *testing.T) {
	h := newHarness(t)
	h.write("s1.jsonl", piFile("s1", 0, 2))
	h.start()
	h.waitMsgs(3)

	second, err := New(Config{Watch: []string{h.dir + "/**"}, StateDir: h.state, Host: "testhost", Publisher: h.pub})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	err = second.Run(ctx)
	require.ErrorIs(t, err, dirlock.ErrHeld)
	var held *dirlock.HeldError
	require.True(t, errors.As(err, &held))
	require.Equal(t, os.Getpid(), held.PID, "the error names the holder")
	require.Equal(t, h.state, held.Dir)
	require.Contains(t, err.Error(), "tailer checkpoints")

	h.stop()
	h.start() // released on stop
	h.appendTo(h.dir+"/s1.jsonl", piLine(3))
	h.waitMsgs(4)
}
