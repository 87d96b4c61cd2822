package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
)

const streamUsage = `Usage: sessionpipe stream info [flags]
       sessionpipe stream update [-max-age D] [-dup-window D] [-max-bytes N] [-replicas N] [flags]

The stream's settings belong to whoever created it: the indexer, the
exporter and run create a missing stream with their flags, and keep those
of a stream that exists (logging each that differs from their flags).
This command is the way to change them.

  info    prints the stream's settings, state and cluster
  update  changes the settings given on the command line, and only those,
          and prints each one changed, before -> after. A shorter -max-age
          or a lower -max-bytes discards the messages beyond it at once; a
          consumer that had not read them yet reports them as a gap.

The connection is that of the daemons (-nats, -creds, TLS, and their
environment variables; not the config file). Without -nats it opens the
embedded server's store under -data-dir, which must not be running
(stop sessionpipe run, or give -nats its URL).

Flags:
`

// runStream runs `sessionpipe stream`.
func runStream(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fmt.Fprint(stdout, streamUsage)
			return nil
		}
		return usageError{"stream: want info or update"}
	}
	sub, args := args[0], args[1:]
	if sub != "info" && sub != "update" {
		return usageError{fmt.Sprintf("stream: unknown command %q (want info or update)", sub)}
	}
	var (
		n       cli.NATS
		logging cli.Logging
	)
	fs := flag.NewFlagSet("stream "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, streamUsage)
		fs.PrintDefaults()
	}
	n.Register(fs, os.Getenv)
	logging.Register(fs, os.Getenv)
	maxBytes := fs.Int64("max-bytes", 0, "update: the stream's size cap in bytes; the oldest messages are discarded beyond it (0: none)")
	asJSON := fs.Bool("json", false, "info: print JetStream's stream info as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("stream %s: unexpected arguments %q", sub, fs.Args())}
	}
	var ch bus.StreamChange
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "max-age":
			ch.MaxAge = &n.Stream.MaxAge
		case "dup-window":
			ch.DuplicateWindow = &n.Stream.DuplicateWindow
		case "max-bytes":
			ch.MaxBytes = maxBytes
		case "replicas":
			ch.Replicas = &n.Stream.Replicas
		}
	})
	if sub == "update" && ch == (bus.StreamChange{}) {
		return usageError{"stream update: give at least one of -max-age, -dup-window, -max-bytes, -replicas"}
	}
	log, err := logging.Logger(stderr)
	if err != nil {
		return usageError{err.Error()}
	}
	js, closeJS, err := streamConnect(ctx, &n, log)
	if err != nil {
		return err
	}
	defer closeJS()
	name := n.Stream.WithDefaults().Name
	if sub == "info" {
		s, err := js.Stream(ctx, name)
		if err != nil {
			return fmt.Errorf("stream %s: %w", name, err)
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(s.CachedInfo())
		}
		return writeStreamInfo(stdout, s.CachedInfo())
	}
	before, after, err := bus.UpdateStream(ctx, js, name, ch)
	if err != nil {
		return err
	}
	diffs := bus.StreamSettingDiffs(before, after)
	if len(diffs) == 0 {
		fmt.Fprintf(stdout, "stream %s: nothing to change\n", name)
		return nil
	}
	fmt.Fprintf(stdout, "stream %s updated:\n", name)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for _, d := range diffs {
		fmt.Fprintf(tw, "  %s\t%s -> %s\n", d.Setting, d.From, d.To)
		log.Info("stream setting changed", "stream", name, "setting", d.Setting, "from", d.From, "to", d.To)
	}
	return tw.Flush()
}

// streamConnect reaches JetStream as the daemons do, without ensuring the
// stream: with -nats, the server; without, the embedded server's store.
func streamConnect(ctx context.Context, n *cli.NATS, log *slog.Logger) (jetstream.JetStream, func(), error) {
	if n.URL == "" {
		// The server's lifecycle is no news here: its failure to start is
		// the error returned.
		e, err := bus.StartEmbedded(ctx, bus.EmbeddedConfig{StoreDir: filepath.Join(n.DataDir, "jetstream"), Port: -1})
		if err != nil {
			return nil, nil, fmt.Errorf("start embedded JetStream: %w", err)
		}
		stop := func() { e.Shutdown(context.WithoutCancel(ctx)) }
		js, err := jetstream.New(e.Conn())
		if err != nil {
			stop()
			return nil, nil, fmt.Errorf("jetstream: %w", err)
		}
		return js, stop, nil
	}
	nc, err := bus.Connect(ctx, bus.ConnConfig{URL: n.URL, CredsFile: n.Creds, TLSCert: n.TLSCert, TLSKey: n.TLSKey, TLSCA: n.TLSCA,
		InboxPrefix: n.InboxPrefix, Name: "sessionpipe-stream", Logger: log})
	if err != nil {
		return nil, nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("jetstream: %w", err)
	}
	return js, nc.Close, nil
}

// writeStreamInfo prints a stream's settings, state and cluster.
func writeStreamInfo(w io.Writer, info *jetstream.StreamInfo) error {
	c, st := info.Config, info.State
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "stream %s (created %s)\n", c.Name, info.Created.UTC().Format(time.RFC3339))
	row := func(k string, v any) { fmt.Fprintf(tw, "  %s\t%v\n", k, v) }
	row("subjects", strings.Join(c.Subjects, ", "))
	for _, s := range bus.StreamSettings(c) {
		row(s.Name, s.Value)
	}
	if len(c.Sources) > 0 {
		names := make([]string, len(c.Sources))
		for i, s := range c.Sources {
			names[i] = s.Name
		}
		row("sources", strings.Join(names, ", "))
	}
	fmt.Fprintln(tw, "state")
	row("messages", st.Msgs)
	row("bytes", fmt.Sprintf("%d (%s)", st.Bytes, cli.HumanBytes(int64(st.Bytes))))
	row("first_seq", seqAt(st.FirstSeq, st.FirstTime))
	row("last_seq", seqAt(st.LastSeq, st.LastTime))
	row("consumers", st.Consumers)
	if cl := info.Cluster; cl != nil {
		fmt.Fprintln(tw, "cluster")
		row("name", orNone(cl.Name))
		row("leader", orNone(cl.Leader))
		for _, p := range cl.Replicas {
			state := "current"
			switch {
			case p.Offline:
				state = "offline"
			case !p.Current:
				state = fmt.Sprintf("%d operations behind", p.Lag)
			}
			row("replica "+p.Name, state)
		}
	}
	return tw.Flush()
}

func seqAt(seq uint64, at time.Time) string {
	if at.IsZero() {
		return fmt.Sprint(seq)
	}
	return fmt.Sprintf("%d (%s)", seq, at.UTC().Format(time.RFC3339))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
