package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/cli"
)

// TestMain_SecondSignalStopsAtOnce: the first SIGINT ends the
// context (a graceful stop begins: here one that would never end, as a
// drain against a JetStream that is down); the second kills the process.
func TestMain_SecondSignalStopsAtOnce(t *testing.T) {
	if os.Getenv("SESSIONPIPE_SIGNAL_CHILD") != "" {
		ctx, stop := cli.SignalContext()
		defer stop()
		os.Stdout.WriteString("ready\n")
		<-ctx.Done()
		os.Stdout.WriteString("stopping\n")
		select {} // a drain that never ends
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMain_SecondSignalStopsAtOnce$")
	cmd.Env = append(os.Environ(), "SESSIONPIPE_SIGNAL_CHILD=1")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	r := bufio.NewReader(out)
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\n", line)

	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	line, err = r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "stopping\n", line, "the first signal starts a graceful stop")

	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		require.True(t, errors.As(err, &exit), "exit: %v", err)
		ws, ok := exit.Sys().(syscall.WaitStatus)
		require.True(t, ok)
		require.True(t, ws.Signaled(), "killed by the second signal: %v", err)
		require.Equal(t, syscall.SIGINT, ws.Signal())
	case <-time.After(10 * time.Second):
		t.Fatal("the second SIGINT did not stop the process")
	}
}
