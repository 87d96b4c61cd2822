package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sessionpipe/sessionpipe/internal/cli"
)

const configUsage = `Usage: sessionpipe config [COMMAND] [flags]
       sessionpipe config -reference

Prints the effective configuration of COMMAND (run, the default; tailer;
indexer; exporter; compact) given these flags, the environment and the
config file, and where each value came from: flag, env NAME, file
PATH:LINE or default. Secrets (the API token, passwords in URLs, webhook
paths) are masked. Nothing is started.

-reference prints the reference of every flag, variable and default
(docs/CONFIG.md).
`

func runConfig(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && (args[0] == "-reference" || args[0] == "--reference") {
		if len(args) > 1 {
			return usageError{fmt.Sprintf("config -reference: unexpected arguments %q", args[1:])}
		}
		return cli.WriteReference(stdout)
	}
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprint(stderr, configUsage)
		return flag.ErrHelp
	}
	name := "run"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	c, ok := cli.LookupCommand(name)
	if !ok {
		return usageError{fmt.Sprintf("config: unknown command %q (want run, tailer, indexer, exporter or compact)", name)}
	}
	fs := c.FlagSet(os.Getenv)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, configUsage)
		fmt.Fprintf(stderr, "\nFlags of %s:\n", c.Title())
		fs.PrintDefaults()
	}
	cfg, err := cli.ParseFlags(fs, c.Name, args, os.Getenv)
	if err != nil {
		return err
	}
	if fs.NArg() > 0 && c.Name != "run" {
		return usageError{fmt.Sprintf("config: unexpected arguments %q", fs.Args())}
	}
	cfg.Command = c.Title()
	return cfg.Write(stdout)
}
