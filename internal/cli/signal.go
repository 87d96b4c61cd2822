package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// SignalContext returns a context that the first SIGINT or SIGTERM ends,
// with the signal as its cause: a daemon then stops gracefully (reading
// stops, what is in flight drains, state is saved). A second signal, at
// any time after the first, stops the process at once: the signal's
// default action is restored and the signal raised again, so the exit
// status says which signal it was. stop releases the signals.
func SignalContext() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	// Room for both signals: the second must not be lost while the
	// first is being handled.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		var s os.Signal
		select {
		case s = <-sigs:
		case <-done:
			return
		}
		cancel(fmt.Errorf("%v received; stopping (send it again to stop at once)", s))
		select {
		case s = <-sigs:
		case <-done:
			return
		}
		signal.Reset(os.Interrupt, syscall.SIGTERM)
		if sig, ok := s.(syscall.Signal); ok {
			syscall.Kill(os.Getpid(), sig)
			time.Sleep(time.Second) // the signal is delivered asynchronously
		}
		os.Exit(130) // the signal did not kill: the shell's code for it
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(context.Canceled)
	}
}
