// Command tailer follows the AI-agent transcripts of one host and
// publishes their normalised entries to NATS JetStream, losing and
// doubling none.
//
//	tailer [flags]
//
// Without -nats (or NATS_URL) it runs an embedded JetStream server under
// -data-dir. The first SIGINT or SIGTERM stops it gracefully (reading
// stops, acknowledgements are awaited for -drain, checkpoints are saved);
// a second one stops it at once.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/sessionpipe/sessionpipe/internal/cli"
)

const tailerUsage = `Usage: tailer [flags]

Follows the AI-agent transcripts of this host (-watch, by default the
well-known locations of every agent under $HOME) and publishes their
normalised entries, and the original lines for the archive, to NATS
JetStream, losing and doubling none across restarts, rotations and
outages. On a fleet it only publishes: the indexer and the exporter
create the stream.

Example:
  tailer -nats tls://nats.example.com:4222 -creds host.creds -tls-ca ca.pem -replicas 3
  tailer -watch '~/.claude/projects/**/*.jsonl'        (embedded JetStream under -data-dir)

Every flag has an environment variable and a config file key
('sessionpipe config tailer'). 'tailer version' prints the version.

Flags:
`

func main() {
	cli.Main("tailer", func(ctx context.Context, args []string, env cli.Env) error {
		return run(ctx, args, env, os.Stderr)
	})
}

func run(ctx context.Context, args []string, env cli.Env, stderr io.Writer) error {
	if len(args) == 1 && cli.IsVersionArg(args[0]) {
		_, err := fmt.Fprintln(os.Stdout, cli.VersionLine("tailer"))
		return err
	}
	var (
		d cli.Daemon
		t cli.Tailer
	)
	d.Usage = tailerUsage
	if err := d.Parse("tailer", args, env, stderr, t.Register, "files to follow are given with -watch"); err != nil {
		return err
	}
	d.NATS.PublishOnly = true // on a fleet, the services own the stream
	b, err := d.Connect(ctx, "sessionpipe-tailer")
	if err != nil {
		return err
	}
	defer b.Close(context.WithoutCancel(ctx))
	var progress io.Writer
	if f, ok := stderr.(*os.File); ok && cli.IsTerminal(f) {
		progress = f
	}
	return cli.RunTailer(ctx, &t, &d.NATS, b, env, d.Log, progress)
}
