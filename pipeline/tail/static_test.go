package tail

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
)

// stub is a file whose lines tell no format: waited for while it may
// grow, skipped at once when it is static.
const stub = `{"key":"k","content":"a fact","ts":"2026-01-01T00:00:00Z"}` + "\n"

func waitIdle(t *testing.T, tl *Tailer) {
	t.Helper()
	natstest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if !tl.Idle() {
			return fmt.Errorf("not idle")
		}
		return nil
	})
}

// With Static (run -once), a file present at the first scan whose lines
// tell no format is decided at once, not after DetectWait: the tailer is
// idle as soon as the real session is published.
func TestTailer_Static(t *testing.T) {
	t.Run("static", func(t *testing.T) {
		h := newHarness(t)
		h.write("stub.jsonl", stub)
		h.write("s1.jsonl", piFile("s1", 0, 2))
		h.start(func(c *Config) { c.Static, c.DetectWait = true, time.Hour })
		h.waitMsgs(3)
		waitIdle(t, h.tl)
		require.Equal(t, int64(1), h.tl.Metrics().Snapshot().Skipped)

		// A file that appears later may still grow: it is waited for.
		h.write("later.jsonl", stub)
		natstest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
			h.tl.mu.Lock()
			defer h.tl.mu.Unlock()
			for _, f := range h.tl.files {
				if f.waiting {
					return nil
				}
			}
			return fmt.Errorf("the later file is not waited for")
		})
		require.False(t, h.tl.Idle())
		natstest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
			if h.tl.Reading() {
				return fmt.Errorf("a file waited for counts as being read: run's exporter would wait on it for ever")
			}
			return nil
		})
		require.Equal(t, int64(1), h.tl.Metrics().Snapshot().Skipped)
	})
	t.Run("growing", func(t *testing.T) {
		// Without Static the same stub is waited for: it may still
		// become a transcript.
		h := newHarness(t)
		path := h.write("stub.jsonl", stub)
		h.write("s1.jsonl", piFile("s1", 0, 2))
		h.start(func(c *Config) { c.DetectWait = time.Hour })
		h.waitMsgs(3)
		require.False(t, h.tl.Idle())
		require.Zero(t, h.tl.Metrics().Snapshot().Skipped)
		// It becomes a pi transcript after all: the held line is
		// handed out with the others, in file order.
		h.appendTo(path, piFile("s2", 0, 1))
		msgs := h.waitMsgs(3 + 3)
		require.Equal(t, wantIDs("s2", 0, 1), ids(t, msgs, "s2"))
		waitIdle(t, h.tl)
	})
}
