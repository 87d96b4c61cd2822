package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sessionpipe/sessionpipe/cmd/internal/top"
	"github.com/sessionpipe/sessionpipe/internal/cli"
)

const topUsage = `Usage: sessionpipe top [flags]

A live view of a running indexer (sessionpipe run, or indexer serve): the
sessions active now, spend today, the burn rate of this hour and the latest
alerts, refreshed every -interval. q quits, r refreshes. Without a terminal
(or with -once) it prints one view and exits.

Flags:
`

func runTop(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("top", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, topUsage)
		fs.PrintDefaults()
	}
	api := fs.String("api", envOr("SESSIONPIPE_API", "http://"+cli.DefaultHTTPAddr), "the indexer's API (env SESSIONPIPE_API)")
	token := fs.String("token", os.Getenv("SESSIONPIPE_TOKEN"), "bearer token (env SESSIONPIPE_TOKEN)")
	interval := fs.Duration("interval", 2*time.Second, "refresh period")
	active := fs.Duration("active", 15*time.Minute, "a session active within this is listed")
	once := fs.Bool("once", false, "print one view and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("top: unexpected arguments %q", fs.Args())}
	}
	cfg := top.Config{API: *api, Token: *token, Interval: *interval, Active: *active}
	out, isFile := stdout.(*os.File)
	if *once || !isFile || !cli.IsTerminal(out) {
		snap := top.Fetch(ctx, cfg)
		m, _ := top.New(cfg).Update(top.SnapshotMsg(snap))
		if _, err := io.WriteString(stdout, m.View()); err != nil {
			return err
		}
		return snap.Err
	}
	return top.Run(ctx, cfg, os.Stdin, out)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
