package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
)

// UsageError is a command line mistake: the daemon commands exit with
// code 2 and print it after their name.
type UsageError struct{ Msg string }

func (e UsageError) Error() string { return e.Msg }

// Main runs a daemon command: run with the process's arguments and
// environment under [SignalContext] (the first SIGINT or SIGTERM stops
// gracefully, a second at once), then exits 0, 2 after a [UsageError], or
// 1 after any other error, printed after the command's name. -h is not an
// error. As sessionpipe's commands, it profiles itself when the
// environment asks ([Profile]).
func Main(name string, run func(ctx context.Context, args []string, env Env) error) {
	ctx, stop := SignalContext()
	stopProfile := Profile(os.Getenv, os.Stderr)
	err := run(ctx, os.Args[1:], os.Getenv)
	stopProfile()
	stop()
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.As(err, new(UsageError)):
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}
