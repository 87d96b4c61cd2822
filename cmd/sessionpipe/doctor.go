package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sessionpipe/sessionpipe/cmd/internal/doctor"
	"github.com/sessionpipe/sessionpipe/internal/cli"
)

const doctorUsage = `Usage: sessionpipe doctor [COMMAND] [flags] [PATH...]

Checks this machine for COMMAND (run, the default; tailer; indexer;
exporter; compact) with the flags, environment and config file that
command would use, and says for each problem what to fix. Nothing is
started and nothing is stored in the stream. PATHs are run's watches.

Each check prints one line: ok, warn or FAIL, what was checked, and for a
warning or failure "fix:" and the command or flag that fixes it:

  config   the config file read (or none) parsed (a failure here ends the
           checks), and the values the command refuses at start
  watch    (tailer, run) what each watch (-watch, PATH, or the well-known
           locations) matches now, whether it has a directory to wait on,
           and transcripts that cannot be opened for reading
  dir      the data directory and each state directory (-state-dir,
           -index-dir, -out, -archive-dir) exist or can be created and
           are writable, and which process holds them
  state    (indexer, run) the indexer's state reads back, every table and
           record: a corrupt or missing table is named (not while an
           indexer holds it)
  inotify  (tailer, run; Linux, not with -poll) the directories the tailer
           would watch against fs.inotify.max_user_watches, and the
           inotify instances left
  nats     with -nats: the connection (as the daemons make it, within
           -timeout), JetStream, the stream's subjects, replicas and
           cluster; for a tailer, that it may publish to its host's
           subjects (a publish the stream refuses, so nothing is stored);
           for the services, their durable consumers and leases.
           Without -nats: the embedded server's store and port
  clock    with -nats, the local clock against the server's (warn above
           2s, FAIL above a minute); else transcripts modified in the
           future
  disk     free space where the data, Parquet and archive go (warn below
           1 GiB or 5%, FAIL below 100 MiB)

The exit code is 1 when a check failed, else 0 (warnings included).

Flags (COMMAND's, and -json and -timeout):
`

// runDoctor runs `sessionpipe doctor`.
func runDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	name := "run"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	c, ok := cli.LookupCommand(name)
	if !ok {
		return usageError{fmt.Sprintf("doctor: unknown command %q (want run, tailer, indexer, exporter or compact)", name)}
	}
	d := doctor.Doctor{Command: c, Env: os.Getenv}
	fs := flag.NewFlagSet("doctor "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, doctorUsage)
		fs.PrintDefaults()
	}
	if err := d.Parse(fs, args); err != nil {
		var ue cli.UsageError
		if errors.As(err, &ue) {
			return usageError{"doctor: " + ue.Msg}
		}
		return err
	}
	checks := d.Check(ctx)
	write := doctor.WriteChecks
	if d.JSON {
		write = doctor.WriteChecksJSON
	}
	if err := write(stdout, checks); err != nil {
		return err
	}
	if n := doctor.Failures(checks); n > 0 {
		return fmt.Errorf("doctor: %d of %d checks failed", n, len(checks))
	}
	return nil
}
