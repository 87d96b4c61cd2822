package indexcmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
	"github.com/sessionpipe/sessionpipe/pipeline/index/api"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
)

// LoadPrices returns the embedded price table, overridden by the file at
// path when given.
func LoadPrices(path string) (*price.Table, error) {
	table := price.Default()
	if path == "" {
		return table, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	override, err := price.Load(f)
	if err != nil {
		return nil, fmt.Errorf("load prices %s: %w", path, err)
	}
	return table.Merge(override), nil
}

// RunningIndexer is an indexer wired to its API server (the indexer
// runs the webhook sender).
type RunningIndexer struct {
	Indexer *index.Indexer
	API     *cli.Server // nil without -http
	rules   string
	log     *slog.Logger
}

// StartIndexer builds the indexer the flags describe on the bus b and
// opens its API listener; [RunningIndexer.Run] runs them.
func StartIndexer(ix *cli.Indexer, n *cli.NATS, b *cli.Bus, log *slog.Logger) (*RunningIndexer, error) {
	if ix.HTTP != "" && ix.Token == "" && !cli.IsLoopback(ix.HTTP) {
		return nil, fmt.Errorf("-http %s is not a loopback address: set -token (or SESSIONPIPE_TOKEN) so that the API is not open to the network", ix.HTTP)
	}
	table, err := LoadPrices(ix.Prices)
	if err != nil {
		return nil, err
	}
	if ix.MemoryLimit > 0 {
		cli.SetMemoryLimit(ix.MemoryLimit<<20, 0)
	}
	var rules []alert.Rule
	if ix.Rules != "" {
		// At start, before the signal handling: a FIFO or a device is
		// refused at once, and a file is read up to alert.MaxRulesBytes.
		if rules, err = alert.Load(ix.Rules); err != nil {
			return nil, err
		}
	}
	var hook *alert.Webhook
	if ix.Webhook != "" {
		if hook, err = alert.NewWebhook(alert.WebhookConfig{URL: ix.Webhook, Logger: log}); err != nil {
			return nil, err
		}
	}
	dir := ix.StateDir
	if dir == "" {
		dir = filepath.Join(n.DataDir, "indexer")
	}
	reg := ix.Registry
	if reg == nil {
		reg = cli.NewRegistry()
	}
	idx, err := index.NewIndexer(index.IndexerConfig{
		JS: b.JS, Stream: n.Stream, Name: ix.Name, Dir: dir, Pricer: table, Rules: rules, Logger: log,
		Webhook: hook, WebhookConsumer: ix.WebhookConsumer,
		AlertMaxLag: cmp.Or(ix.MaxLag, -1), LeaseTTL: ix.LeaseTTL, Registry: reg,
	})
	if err != nil {
		return nil, err
	}
	// /metrics: the indexer's registry (with its server's metrics), the
	// API's, and the others'.
	handler := api.Handler(idx, api.Config{Token: ix.Token, Addr: ix.HTTP, Logger: log, Metrics: ix.MoreMetrics})
	api, err := cli.ListenWithMetrics(ix.HTTP, handler, reg)
	if err != nil {
		return nil, err
	}
	if api != nil {
		log.Info("indexer API", "url", "http://"+api.Addr()+"/api/sessions", "metrics", "http://"+api.Addr()+"/metrics", "rules", len(rules))
	}
	return &RunningIndexer{Indexer: idx, API: api, rules: ix.Rules, log: log}, nil
}

// Run runs the indexer (and its webhook sender), its API and the SIGHUP
// reload of the rules until ctx ends or the indexer fails.
func (ri *RunningIndexer) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var ixErr, apiErr error
	wg.Go(func() {
		if ixErr = ri.Indexer.Run(ctx); ixErr != nil {
			cancel()
		}
	})
	// The API outlives the indexer's stop only as long as Run waits.
	wg.Go(func() { apiErr = ri.API.Run(ctx) })
	if ri.rules != "" {
		wg.Go(func() { ri.reloadOnHUP(ctx) })
	}
	wg.Wait()
	return errors.Join(ixErr, apiErr)
}

// reloadOnHUP reloads the rules file on every SIGHUP (see reloadOn).
func (ri *RunningIndexer) reloadOnHUP(ctx context.Context) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	ri.reloadOn(ctx, hup)
}

// reloadOn reloads the rules file on every signal from hup until ctx
// ends; a file that is invalid, not a regular file or too large keeps the
// rules in force and logs why. A read that hangs (a FIFO swapped in
// between, a hung file system) never delays the stop: alert.LoadContext
// returns when ctx ends.
func (ri *RunningIndexer) reloadOn(ctx context.Context, hup <-chan os.Signal) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			rules, err := alert.LoadContext(ctx, ri.rules)
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				err = ri.Indexer.ReloadRules(rules)
			}
			if err != nil {
				ri.log.Error("alert rules not reloaded; the previous rules stay in force", "file", ri.rules, "error", err)
				continue
			}
			ri.log.Info("alert rules reloaded", "file", ri.rules, "rules", len(rules))
		}
	}
}
