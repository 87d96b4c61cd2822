// Command sessionpipe turns AI-agent session transcripts into normalised
// entries, per-session aggregates and Parquet.
//
// Usage:
//
//	sessionpipe run [flags] [PATH...]      embedded JetStream, tailer, indexer
//	sessionpipe sessions [flags] [PATH...] per-session turns, tokens and cost
//	sessionpipe daily|weekly|monthly [flags] [PATH...]  tokens and cost per period
//	sessionpipe blocks [flags] [PATH...]   five-hour usage blocks
//	sessionpipe statusline [flags]         Claude Code's status line (hook JSON on stdin)
//	sessionpipe alerts check -rules FILE [PATH...]  the alerts rules would fire on history
//	sessionpipe entries [flags] PATH...    normalised entries as JSONL
//	sessionpipe top [flags]                live view of a running indexer
//	sessionpipe export -out DIR PATH...    Parquet and archive, offline
//	sessionpipe restore -archive DIR -out DIR2  give back archived transcripts
//	sessionpipe config [COMMAND] [flags]   effective configuration and its sources
//	sessionpipe doctor [COMMAND] [flags]   check this machine and what it reaches
//	sessionpipe stream info|update [flags] show or change the stream's settings
//	sessionpipe version                    print the version and the price snapshots' dates
//
// PATH is a transcript file or a directory searched recursively. Run
// `sessionpipe COMMAND -h` for the flags of a command.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/report"
)

const usage = `sessionpipe turns AI-agent session transcripts (Claude Code, pi/OpenClaw,
Codex CLI, Fluux Agent, m4dtimes) into normalised entries and exact
per-session token and cost aggregates.

Usage:
  sessionpipe run [flags] [PATH...]      the pipeline on this machine: embedded JetStream,
                                         tailer, indexer and exporter (-once: print and stop)
  sessionpipe sessions [flags] [PATH...] per-session turns, tokens and cost (offline; no PATH:
                                         the well-known locations of every agent)
  sessionpipe daily|weekly|monthly [flags] [PATH...]
                                         tokens and cost per day, week or month (offline)
  sessionpipe blocks [flags] [PATH...]   five-hour usage blocks, as Claude Code's limits count
  sessionpipe statusline [flags]         a line for Claude Code's status line: session, today,
                                         block cost (from the indexer, else the files)
  sessionpipe alerts check -rules FILE [PATH...]
                                         the alerts the rules would have fired on the files
  sessionpipe entries [flags] PATH...    normalised entries as JSONL (offline)
  sessionpipe top [flags]                live view of a running indexer: active sessions,
                                         spend today, burn rate, alerts
  sessionpipe duckdb [flags] [DIR]       DuckDB views over exported Parquet (entries, api_calls,
                                         sessions): duckdb -init <(sessionpipe duckdb DIR)
  sessionpipe export -out DIR PATH...    Parquet and the archive of the original lines (offline)
  sessionpipe restore -archive DIR -out DIR2
                                         give back the archived transcripts
  sessionpipe config [COMMAND] [flags]   the effective configuration and where each value
                                         came from (flag, environment, config file, default)
  sessionpipe doctor [COMMAND] [flags]   check this machine for COMMAND: watched paths,
                                         permissions, inotify limits, NATS, clock, disk
  sessionpipe stream info|update [flags] the stream's settings, state and cluster; update
                                         changes retention, limits, duplicate window, replicas
  sessionpipe version                    the version, commit and build, the price snapshots' dates

Every flag of run (and of the tailer, indexer and exporter) has an
environment variable and a key in the config file (docs/CONFIG.md).

PATH is a transcript file or a directory searched recursively.
Run 'sessionpipe COMMAND -h' for the flags of a command.
`

// main stops gracefully on the first SIGINT or SIGTERM and at once on a
// second (cli.SignalContext), and profiles itself when the environment
// asks (cli.Profile: SESSIONPIPE_CPUPROFILE=FILE and the like).
func main() {
	ctx, stop := cli.SignalContext()
	stopProfile := cli.Profile(os.Getenv, os.Stderr)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stopProfile()
	stop()
	os.Exit(code)
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// run executes one command line and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	var err error
	switch cmd, rest := args[0], args[1:]; cmd {
	case "sessions":
		err = runSessions(ctx, rest, stdout, stderr)
	case "daily":
		err = runCalendar(ctx, report.Day, rest, stdout, stderr)
	case "weekly":
		err = runCalendar(ctx, report.Week, rest, stdout, stderr)
	case "monthly":
		err = runCalendar(ctx, report.Month, rest, stdout, stderr)
	case "blocks":
		err = runBlocks(ctx, rest, stdout, stderr)
	case "alerts":
		err = runAlerts(ctx, rest, stdout, stderr)
	case "statusline":
		err = runStatusline(ctx, rest, os.Stdin, stdout, stderr)
	case "entries":
		err = runEntries(ctx, rest, stdout, stderr)
	case "run":
		err = runRun(ctx, rest, stdout, stderr)
	case "top":
		err = runTop(ctx, rest, stdout, stderr)
	case "duckdb":
		err = runDuckDB(ctx, rest, stdout, stderr)
	case "export":
		err = runExport(ctx, rest, stdout, stderr)
	case "restore":
		err = runRestore(ctx, rest, stdout, stderr)
	case "config":
		err = runConfig(ctx, rest, stdout, stderr)
	case "doctor":
		err = runDoctor(ctx, rest, stdout, stderr)
	case "stream":
		err = runStream(ctx, rest, stdout, stderr)
	case "version", "--version", "-version":
		err = runVersion(rest, stdout, stderr)
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "sessionpipe: unknown command %q\n\n%s", cmd, usage)
		return exitUsage
	}
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, new(usageError)):
		fmt.Fprintln(stderr, "sessionpipe:", err)
		return exitUsage
	default:
		fmt.Fprintln(stderr, "sessionpipe:", err)
		return exitError
	}
}

// usageError is a command line mistake (exit code 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }
