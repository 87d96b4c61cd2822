package tail

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
)

// TestTailer_RewriteWhilePublishing rewrites a file in place while the
// entries of its old content wait for JetStream (down): their late
// acknowledgements cover offsets of the old content and must not move
// the checkpoint of the new one, or a restart would skip new lines.
func TestTailer_RewriteWhilePublishing(t *testing.T) {
	h := newHarness(t)
	path := h.write("r1.jsonl", piFile("r1", 0, 5))
	h.start()
	h.waitMsgs(6)

	h.srv.Stop()
	h.appendTo(path, piFile("r1", 6, 40))
	require.Eventually(t, func() bool { return h.tl.Metrics().Snapshot().Lines >= 41 }, 10*time.Second, 10*time.Millisecond)
	// The new content is shorter than what is being published.
	require.NoError(t, os.WriteFile(path, []byte(piFile("r2", 0, 2)), 0o644))
	require.Eventually(t, func() bool { return h.tl.Metrics().Snapshot().Lines >= 44 }, 10*time.Second, 10*time.Millisecond)
	h.srv.Start(t)
	h.waitMsgs(44)
	h.stop()

	cp, err := OpenCheckpoints(h.state)
	require.NoError(t, err)
	states, err := cp.Load()
	require.NoError(t, err)
	require.Len(t, states, 1)
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, info.Size(), states[0].Offset, "checkpoint of the rewritten file")

	// Lines written past the new content after a restart are read.
	h.appendTo(path, piFile("r2", 3, 60))
	h.start()
	msgs := h.stays(44 + 58)
	require.Equal(t, wantIDs("r1", 0, 40), ids(t, msgs, "r1"))
	require.Equal(t, wantIDs("r2", 0, 60), ids(t, msgs, "r2"))
}

// TestTailer_RewriteWhileReading rewrites a file in place, with longer
// content, while the tailer is in the middle of it: the new bytes at the
// old offsets must not be parsed as more of the old session; the new
// content is read from its start.
func TestTailer_RewriteWhileReading(t *testing.T) {
	h := newHarness(t)
	// Long enough that the rewrite lands while it is read: batches of
	// 1,024 lines read a few thousand lines a millisecond.
	const oldLines = 50000
	path := h.write("w.jsonl", piFile("w1", 0, oldLines))
	h.start()
	require.Eventually(t, func() bool { return h.tl.Metrics().Snapshot().Lines >= 1 }, 10*time.Second, time.Millisecond)
	// Its entry ids (e100001…) differ from the old ones (e000001…).
	var b strings.Builder
	b.WriteString(piHeader("w2"))
	want := []string{"w2"}
	for i := 100001; i <= 104000; i++ {
		b.WriteString(piLine(i))
		want = append(want, fmt.Sprintf("e%06d", i))
	}
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	obs := newObserver(h.js)
	natstest.CheckFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		if err := obs.refresh(t.Context()); err != nil {
			return err
		}
		if n := len(ids(t, obs.msgs, "w2")); n < 4001 {
			return fmt.Errorf("%d entries of the new content stored", n)
		}
		return nil
	})
	h.stop()
	require.NoError(t, obs.refresh(t.Context()))
	msgs := obs.msgs
	// The old content is read in order up to the rewrite, nothing after.
	old, wantOld := ids(t, msgs, "w1"), wantIDs("w1", 0, oldLines)
	require.LessOrEqual(t, len(old), len(wantOld))
	for i, id := range old {
		require.Equal(t, wantOld[i], id, "entry %d of the old session", i)
	}
	require.Less(t, len(old), len(wantOld), "the test must rewrite the file before the tailer read all of it")
	require.Equal(t, want, ids(t, msgs, "w2"))
	require.Len(t, distinct(msgs), len(old)+4001, "no dead letters, no other entries")
}
