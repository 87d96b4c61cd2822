package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/sessionpipe/sessionpipe/cmd/internal/exportcmd"
	"github.com/sessionpipe/sessionpipe/cmd/internal/indexcmd"
	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/export"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
)

const runUsage = `Usage: sessionpipe run [flags] [PATH...]

Runs the pipeline on this machine: an embedded JetStream server (unless
-nats is given), the tailer following the transcripts (PATH, a file or a
directory, or the -watch paths, or by default the well-known locations of
every agent under $HOME), the indexer: per-session aggregates kept in
<data-dir>/indexer across restarts, served on -http (GET /api/sessions,
/api/sessions/{id}, /api/usage, /api/alerts, /api/events, /metrics), and
the exporter: Parquet under <data-dir>/parquet (-out) that DuckDB reads
('sessionpipe duckdb DIR' prints the views), and the original lines as a
zstd archive under <data-dir>/archive (-archive-dir), which 'sessionpipe
restore' gives back.

With -once it stops when the files present at start are published and
counted, and prints the sessions like 'sessionpipe sessions' (the same
numbers, computed from the stream instead of the files).

Flags:
`

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, runUsage)
		fs.PrintDefaults()
	}
	var r cli.Run
	r.Register(fs, os.Getenv)
	if _, err := cli.ParseFlags(fs, "run", args, os.Getenv); err != nil {
		return err
	}
	n, t, ixf, exf, logs := &r.NATS, &r.Tailer, &r.Indexer, &r.Exporter, &r.Logging
	exf.NoArchive = !t.Archive // one switch: -archive publishes the lines and keeps them
	once, asJSON := &r.Once, &r.JSON
	// A PATH is a watch like -watch: a file, a directory or a glob; one
	// named without a wildcard must exist.
	for _, p := range fs.Args() {
		if err := cli.CheckPath(p); err != nil {
			return err
		}
		t.Watch = append(t.Watch, p)
	}
	t.Static = *once
	if *once && fs.Lookup("log-level").Value.String() == "info" {
		logs.Level = "warn" // the table is the output
	}
	log, err := logs.Logger(stderr)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b, err := n.Connect(ctx, "sessionpipe-run", log)
	if err != nil {
		return err
	}
	defer b.Close(context.WithoutCancel(ctx))
	var progress io.Writer
	if f, ok := stderr.(*os.File); ok && cli.IsTerminal(f) && !*once {
		progress = f
	}
	// One /metrics for the three stages, on the API's address: the Go
	// runtime's and the process's metrics once, on the indexer's registry.
	t.Registry, exf.Registry = prometheus.NewRegistry(), prometheus.NewRegistry()
	ixf.MoreMetrics = prometheus.Gatherers{t.Registry, exf.Registry}
	rt, err := cli.StartTailer(ctx, t, n, b, os.Getenv, log, nil)
	if err != nil {
		return err
	}

	ri, err := indexcmd.StartIndexer(ixf, n, b, log)
	if err != nil {
		return err
	}
	exf.Name, exf.Metrics = export.DefaultConsumerName, "" // its metrics are the process's
	re, err := exportcmd.StartExporter(exf, n, b, log)
	if err != nil {
		return err
	}
	if r.LiveFirst && !*once {
		// Live first: on two cores the exporter's share of a 1 GB
		// backfill had the API's numbers right after 18.6 s instead
		// of 11.1 (benchmarks/RESULTS.md).
		// -once prints at the end only, when both are done.
		re.Exporter.SetYield(rt.Tailer.Reading)
	}

	if !*once {
		printWhere(stderr, rt, ri, re)
	}
	if progress != nil {
		// The status line lives until the stages stopped.
		sctx, stopStatus := context.WithCancel(context.WithoutCancel(ctx))
		var sw sync.WaitGroup
		sw.Go(func() { runStatus(sctx, progress, rt.Tailer, ri.Indexer, re.Exporter) })
		defer func() { stopStatus(); sw.Wait() }()
	}

	// One group of the three stages: the first that fails stops the
	// others (a tailer that cannot go on must not leave an indexer serving
	// numbers that no longer grow), and its error is the command's.
	g, gctx := errgroup.WithContext(ctx)
	stage := func(name string, run func(context.Context) error) {
		g.Go(func() error {
			err := run(gctx)
			if err != nil && gctx.Err() != nil {
				// The group returns the first failure; one that comes while
				// stopping for it would be lost.
				log.Error(name+" failed while stopping", "error", err)
			}
			return err
		})
	}
	stage("tailer", rt.Run)
	stage("indexer", ri.Run)
	stage("exporter", re.Run)
	if *once {
		all, err := waitCounted(gctx, rt, ri.Indexer, re.Exporter, b.JS, n.Stream)
		cancel()
		if gerr := g.Wait(); gerr != nil {
			return gerr // a stage's failure, not the wait it ended
		}
		if err != nil {
			return err
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			return enc.Encode(all)
		}
		return indexcmd.WriteSessionsTable(stdout, all, false)
	}
	return g.Wait()
}

// waitCounted waits until the tailer has published everything it found,
// the indexer has applied every entry of the stream and the exporter has
// committed every message, and returns the sessions.
func waitCounted(ctx context.Context, rt *cli.RunningTailer, ix *index.Indexer, ex *export.Exporter, js jetstream.JetStream, sc bus.StreamConfig) ([]index.Session, error) {
	sc = sc.WithDefaults()
	select {
	case <-ix.Ready():
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	stream, err := js.Stream(ctx, sc.Name)
	if err != nil {
		return nil, err
	}
	// The last entries message is asked for again only when the tailer
	// published since: the answer carries the message's whole body
	// (base64 in JSON), and the wait asks every 50 ms while the consumers
	// catch up (about a twentieth of run's CPU on a backfill).
	var last uint64
	asked := false
	var askedAt uint64 // the publisher's count of published messages when asked
	err = exportcmd.WaitSettled(ctx, rt, func(ctx context.Context) (bool, error) {
		st := rt.Publisher.Stats()
		if st.InFlight > 0 || st.Acked+st.Failed < st.Published {
			// The answer must cover every message counted in Published
			// (read before Acked and Failed: a message published while
			// the counters were read shows here).
			return false, nil
		}
		if published := st.Published; !asked || published != askedAt {
			m, err := stream.GetLastMsgForSubject(ctx, bus.EntriesFilter(sc.Prefix))
			switch {
			case errors.Is(err, jetstream.ErrMsgNotFound):
				last = 0
			case err != nil:
				return false, err
			default:
				last = m.Sequence
			}
			asked, askedAt = true, published
		}
		if ix.Stats().Applied < last {
			return false, nil
		}
		return exportcmd.Exported(ctx, stream, ex)
	})
	if err != nil {
		return nil, err
	}
	return ix.Sessions()
}

// printWhere says at start where everything is: what is watched, the API,
// the Parquet and the archive, and how to query them.
func printWhere(w io.Writer, rt *cli.RunningTailer, ri *indexcmd.RunningIndexer, re *exportcmd.RunningExporter) {
	var b strings.Builder
	b.WriteString("sessionpipe run\n")
	for i, g := range rt.Watch {
		label := ""
		if i == 0 {
			label = "watching"
		}
		fmt.Fprintf(&b, "  %-9s %s\n", label, g)
	}
	self := selfCommand()
	if ri.API != nil {
		api := "http://" + ri.API.Addr()
		fmt.Fprintf(&b, "  %-9s %s/  (in a terminal: %s top -api %s)\n", "dashboard", api, self, api)
		fmt.Fprintf(&b, "  %-9s %s/api/sessions, /api/usage?group_by=model, /api/alerts\n", "API", api)
	}
	fmt.Fprintf(&b, "  %-9s %s\n", "Parquet", re.Out)
	if re.Archive != "" {
		fmt.Fprintf(&b, "  %-9s %s  (%s restore -archive %s -out DIR)\n", "archive", re.Archive, self, shellQuote(re.Archive))
	}
	fmt.Fprintf(&b, "  %-9s duckdb -init <(%s duckdb %s)\n", "DuckDB", self, shellQuote(re.Out))
	b.WriteString("  Parquet is committed when the backfill ends, then as parts close (-part-age); Ctrl-C commits what is open and stops.\n")
	io.WriteString(w, b.String())
}

// selfCommand is how the user runs this command again, for the commands
// the banner shows: "sessionpipe" when that is this binary on the PATH,
// "go run ./cmd/sessionpipe" for a binary go run built, else its path.
func selfCommand() string {
	exe, err := os.Executable()
	if err != nil {
		return "sessionpipe"
	}
	onPath, _ := exec.LookPath("sessionpipe")
	return commandName(exe, onPath)
}

func commandName(exe, onPath string) string {
	if onPath != "" {
		a, errA := filepath.EvalSymlinks(exe)
		b, errB := filepath.EvalSymlinks(onPath)
		if errA == nil && errB == nil && a == b {
			return "sessionpipe"
		}
	}
	if strings.Contains(filepath.ToSlash(exe), "/go-build") && strings.HasSuffix(filepath.ToSlash(filepath.Dir(exe)), "/exe") {
		return "go run ./cmd/sessionpipe"
	}
	return shellQuote(exe)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
