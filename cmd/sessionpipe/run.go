package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sessionpipe/sessionpipe/internal/app"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/schema"
)

const runUsage = `Usage: sessionpipe run [flags] [PATH...]

Runs the pipeline on this machine: an embedded JetStream server (unless
-nats is given), the tailer following the transcripts (PATH, a file or a
directory, or the -watch globs, or by default the well-known locations of
every agent under $HOME), and live per-session aggregates computed from
the stream, served as JSON on -http (GET /sessions).

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
	var (
		n    app.NATS
		t    app.Tailer
		logs app.Logging
	)
	n.Register(fs, os.Getenv)
	t.Register(fs, os.Getenv)
	logs.Register(fs, os.Getenv)
	once := fs.Bool("once", false, "stop once the files present at start are counted, and print the sessions")
	asJSON := fs.Bool("json", false, "with -once, print a JSON array instead of a table")
	httpAddr := fs.String("http", "127.0.0.1:7474", "address of the sessions API (GET /sessions); empty: none")
	prices := fs.String("prices", "", "LiteLLM-shaped price file overriding the embedded prices")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for _, p := range fs.Args() {
		info, err := os.Stat(p)
		if err != nil {
			return err
		}
		if info.IsDir() {
			p = filepath.Join(p, "**")
		}
		t.Watch = append(t.Watch, p)
	}
	if *once && fs.Lookup("log-level").Value.String() == "info" {
		logs.Level = "warn" // the table is the output
	}
	log, err := logs.Logger(stderr)
	if err != nil {
		return err
	}
	table, err := loadPrices(*prices)
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
	if f, ok := stderr.(*os.File); ok && app.IsTerminal(f) && !*once {
		progress = f
	}
	rt, err := app.StartTailer(ctx, &t, &n, b, os.Getenv, log, progress)
	if err != nil {
		return err
	}

	live := &liveSessions{agg: index.NewAggregator(table)}
	consumer, err := live.consume(ctx, b.JS, n.Stream, log)
	if err != nil {
		return err
	}
	defer consumer.Stop()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /sessions", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(live.sessions()); err != nil {
			log.Debug("sessions API: client went away", "err", err)
		}
	})
	api, err := app.Listen(*httpAddr, mux)
	if err != nil {
		return err
	}
	if api != nil {
		log.Info("sessions API", "url", "http://"+api.Addr()+"/sessions")
	}

	var wg sync.WaitGroup
	var tailErr, apiErr error
	wg.Go(func() { apiErr = api.Run(ctx) })
	wg.Go(func() { tailErr = rt.Run(ctx) })
	if *once {
		err := live.waitCaughtUp(ctx, rt, b.JS, n.Stream)
		cancel()
		wg.Wait()
		if err := errors.Join(err, tailErr, apiErr); err != nil {
			return err
		}
		all := live.sessions()
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			return enc.Encode(all)
		}
		return writeSessionsTable(stdout, all)
	}
	wg.Wait()
	return errors.Join(tailErr, apiErr, live.err())
}

// liveSessions folds the entries of the stream into aggregates.
type liveSessions struct {
	mu      sync.Mutex
	agg     *index.Aggregator
	lastSeq uint64 // stream sequence of the last message applied
	bad     int64
	failure error // the first message without metadata: nothing after it is applied
}

// err returns the failure that stopped the aggregates, if any.
func (l *liveSessions) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failure
}

func (l *liveSessions) sessions() []index.Session {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.agg.Sessions()
}

func (l *liveSessions) applied() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastSeq
}

// consume applies every entry of the stream, from its start, in stream
// order.
func (l *liveSessions) consume(ctx context.Context, js jetstream.JetStream, sc bus.StreamConfig, log *slog.Logger) (jetstream.ConsumeContext, error) {
	name := sc.Name
	if name == "" {
		name = bus.DefaultStream
	}
	prefix := sc.Prefix
	if prefix == "" {
		prefix = bus.DefaultPrefix
	}
	c, err := js.OrderedConsumer(ctx, name, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return nil, fmt.Errorf("consume stream %s: %w", name, err)
	}
	dead := prefix + ".dead."
	var e schema.Entry
	return c.Consume(func(m jetstream.Msg) {
		l.mu.Lock()
		defer l.mu.Unlock()
		meta, err := m.Metadata()
		if err != nil || l.failure != nil {
			// Without its sequence the message cannot be placed: the
			// aggregates would silently miss it. Stop applying; -once
			// reports it instead of waiting forever.
			if l.failure == nil {
				l.failure = fmt.Errorf("stream message on %s without metadata: %w", m.Subject(), err)
			}
			return
		}
		l.lastSeq = meta.Sequence.Stream
		if strings.HasPrefix(m.Subject(), dead) {
			return // a dead letter
		}
		if err := bus.DecodeEntry(m.Headers(), m.Data(), &e); err != nil {
			l.bad++
			log.Warn("undecodable entry in the stream", "seq", meta.Sequence.Stream, "err", err)
			return
		}
		l.agg.Add(&e)
	})
}

// waitCaughtUp waits until the tailer has published everything it found
// and the aggregates have applied the whole stream.
func (l *liveSessions) waitCaughtUp(ctx context.Context, rt *app.RunningTailer, js jetstream.JetStream, sc bus.StreamConfig) error {
	name := sc.Name
	if name == "" {
		name = bus.DefaultStream
	}
	stream, err := js.Stream(ctx, name)
	if err != nil {
		return err
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	quiet := 0
	for {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-tick.C:
		}
		if !rt.Tailer.Idle() || rt.Publisher.Stats().InFlight > 0 {
			quiet = 0
			continue
		}
		info, err := stream.Info(ctx)
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return err
			}
			continue
		}
		if err := l.err(); err != nil {
			return err
		}
		if l.applied() < info.State.LastSeq {
			quiet = 0
			continue
		}
		// Idle twice in a row: nothing was on its way in between.
		if quiet++; quiet >= 2 {
			return nil
		}
	}
}
