//go:build unix

package indexcmd

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/logtest"
)

// A SIGHUP while the rules path is a FIFO logs that the rules were not
// reloaded (the ones in force stay), and the daemon still stops when
// asked.
func TestRunningIndexer_ReloadFromAFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	t.Cleanup(func() {
		// Lets a reload blocked in open (a regression) return.
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	var logs logtest.Buffer
	ri := &RunningIndexer{rules: fifo, log: slog.New(slog.NewTextHandler(&logs, nil))}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	hup := make(chan os.Signal, 1)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		ri.reloadOn(ctx, hup)
	}()
	hup <- syscall.SIGHUP
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "alert rules not reloaded") },
		10*time.Second, 10*time.Millisecond, "no reload logged:\n%s", logs.String())
	require.Contains(t, logs.String(), "not a regular file")
	cancel()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the reload loop does not stop once its context ended")
	}
}
