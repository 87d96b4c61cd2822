// Command exporter writes the entries that tailers publish to NATS
// JetStream as Hive-partitioned Parquet that DuckDB reads directly, and
// the original transcript lines as a byte-exact zstd archive, exactly
// once.
//
//	exporter serve [flags]     consume the stream, write Parquet and the archive
//	exporter compact [flags]   merge the small Parquet files of closed partitions
//	exporter health [-url URL] ask a running exporter's /healthz
//
// serve resumes after a restart where its committed files end; the first
// SIGINT or SIGTERM commits what is open and stops, a second stops at
// once (nothing committed is lost: the open entries come again).
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/sessionpipe/sessionpipe/cmd/internal/exportcmd"
	"github.com/sessionpipe/sessionpipe/internal/cli"
)

const usage = `exporter writes a sessionpipe stream as Parquet (for DuckDB) and keeps a
byte-exact archive of the original transcripts, exactly once.

Usage:
  exporter serve [flags]     consume the stream, write Parquet and the archive
  exporter compact [flags]   merge the small Parquet files of closed partitions
  exporter health [-url URL] ask a running exporter's /healthz (exit 0 when ok)

Run 'exporter COMMAND -h' for the flags of a command.
`

const serveUsage = `Usage: exporter serve [flags]

Consumes the stream into compressed Parquet partitions under -out
(Hive-partitioned by date, host and format; DuckDB reads them:
'sessionpipe duckdb DIR'), and the original lines into a zstd archive
under -archive-dir ('sessionpipe restore' gives them back), each entry
exactly once across crashes. A second exporter with the same -consumer
stands by.

Example:
  exporter serve -nats tls://nats.example.com:4222 -creds services.creds -replicas 3 -out /parquet -archive-dir /archive

Flags:
`

func main() {
	cli.Main("exporter", func(ctx context.Context, args []string, env cli.Env) error {
		return run(ctx, args, env, os.Stdout, os.Stderr)
	})
}

// usageError is a command line mistake (exit code 2).
type usageError = cli.UsageError

func run(ctx context.Context, args []string, env cli.Env, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usageError{Msg: "no command given"}
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return serve(ctx, rest, env, stderr)
	case "compact":
		return compact(ctx, rest, env, stdout, stderr)
	case "health":
		return health(ctx, rest, stdout, stderr)
	case "version", "-version", "--version":
		_, err := fmt.Fprintln(stdout, cli.VersionLine("exporter"))
		return err
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return usageError{Msg: fmt.Sprintf("unknown command %q", cmd)}
}

func serve(ctx context.Context, args []string, env cli.Env, stderr io.Writer) error {
	var (
		d  cli.Daemon
		ex cli.Exporter
	)
	d.Usage = serveUsage
	if err := d.Parse("exporter serve", args, env, stderr, ex.Register, "directories are given with -out and -archive-dir"); err != nil {
		return err
	}
	b, err := d.Connect(ctx, "sessionpipe-exporter")
	if err != nil {
		return err
	}
	defer b.Close(context.WithoutCancel(ctx))
	re, err := exportcmd.StartExporter(&ex, &d.NATS, b, d.Log)
	if err != nil {
		return err
	}
	d.Log.Info("exporting", "parquet", re.Out, "archive", re.Archive)
	return re.Run(ctx)
}
