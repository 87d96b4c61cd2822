package app

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
)

// DefaultHTTPAddr is the indexer's API address.
const DefaultHTTPAddr = "127.0.0.1:7474"

// Indexer holds the indexer's flags.
type Indexer struct {
	Name     string
	HTTP     string
	Token    string
	Rules    string
	Webhook  string
	Prices   string
	StateDir string
	MaxLag   time.Duration
	LeaseTTL time.Duration
	// MemoryLimit is Go's soft memory limit for the process, in MiB;
	// 0 leaves Go's (or GOMEMLIMIT's).
	MemoryLimit int64
	// Registry, when set, receives the indexer's metrics and its API
	// server's; nil: a new [NewRegistry]. The API serves it on /metrics.
	Registry *prometheus.Registry
	// MoreMetrics, when set, is served on the API's /metrics beside the
	// indexer's: the process's other stages (`sessionpipe run`: the
	// tailer's and the exporter's registries).
	MoreMetrics prometheus.Gatherer
	// WebhookConsumer is the durable consumer of the alerts stream that
	// feeds the webhook (default index.DefaultWebhookConsumer).
	WebhookConsumer string
}

// DefaultMemoryLimitMiB is the indexer's default soft memory limit: its
// state is bounded by design (a cache of recent facts over the store), and
// the limit keeps garbage from growing the heap past it.
const DefaultMemoryLimitMiB = 256

// Register adds the indexer flags to fs.
func (ix *Indexer) Register(fs *flag.FlagSet, env Env) {
	fs.StringVar(&ix.Name, "consumer", orDefault(env("SESSIONPIPE_INDEXER_CONSUMER"), index.DefaultConsumerName), "durable consumer name (env SESSIONPIPE_INDEXER_CONSUMER); indexers running at once need distinct names")
	fs.StringVar(&ix.HTTP, "http", orDefault(env("SESSIONPIPE_HTTP"), DefaultHTTPAddr), "address of the HTTP API and /metrics (env SESSIONPIPE_HTTP); empty: none")
	fs.StringVar(&ix.Token, "token", env("SESSIONPIPE_TOKEN"), "bearer token the API requires, but for /healthz and the dashboard page (env SESSIONPIPE_TOKEN); required when -http is not a loopback address")
	fs.StringVar(&ix.Rules, "rules", env("SESSIONPIPE_RULES"), "alert rules file, YAML (env SESSIONPIPE_RULES); reloaded on SIGHUP")
	fs.StringVar(&ix.Webhook, "webhook", env("SESSIONPIPE_WEBHOOK_URL"), "URL receiving a POST (Slack-compatible JSON) per alert, at least once, with the alert id as Idempotency-Key (env SESSIONPIPE_WEBHOOK_URL); what is not delivered yet is sent after a restart; a first webhook gets the alerts published from then on")
	fs.StringVar(&ix.WebhookConsumer, "webhook-consumer", orDefault(env("SESSIONPIPE_WEBHOOK_CONSUMER"), index.DefaultWebhookConsumer), "durable consumer of the alerts stream that feeds -webhook (env SESSIONPIPE_WEBHOOK_CONSUMER); indexers sending to different webhooks need distinct names")
	fs.StringVar(&ix.Prices, "prices", env("SESSIONPIPE_PRICES"), "price file (LiteLLM- or models.dev-shaped rows, optional dated periods) overriding the embedded prices (env SESSIONPIPE_PRICES); a change reprices the history the stream holds")
	fs.DurationVar(&ix.MaxLag, "alert-max-lag", index.DefaultAlertMaxLag, "an alert caused by an entry older than this is recorded but not sent (a rebuilt state does not page about last month); 0: no limit")
	fs.DurationVar(&ix.LeaseTTL, "lease-ttl", bus.DefaultLeaseTTL, "an indexer of the same -consumer standing by takes over at most this long after the active one died")
	limit := int64(DefaultMemoryLimitMiB)
	if env("GOMEMLIMIT") != "" {
		limit = 0 // the environment decides
	}
	fs.Int64Var(&ix.MemoryLimit, "memory-limit", limit, "soft memory limit of the process in MiB, for Go's garbage collector (0: none; GOMEMLIMIT, when set, wins)")
	fs.StringVar(&ix.StateDir, "index-dir", env("SESSIONPIPE_INDEX_DIR"), "indexer state directory (env SESSIONPIPE_INDEX_DIR; default <data-dir>/indexer)")
}

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

// IsLoopback reports whether a listen address binds loopback only.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// RunningIndexer is an indexer wired to its API server (the indexer
// runs the webhook sender).
type RunningIndexer struct {
	Indexer *index.Indexer
	API     *Server // nil without -http
	rules   string
	log     *slog.Logger
}

// StartIndexer builds the indexer the flags describe on the bus b and
// opens its API listener; [RunningIndexer.Run] runs them.
func StartIndexer(ix *Indexer, n *NATS, b *Bus, log *slog.Logger) (*RunningIndexer, error) {
	if ix.HTTP != "" && ix.Token == "" && !IsLoopback(ix.HTTP) {
		return nil, fmt.Errorf("-http %s is not a loopback address: set -token (or SESSIONPIPE_TOKEN) so that the API is not open to the network", ix.HTTP)
	}
	table, err := LoadPrices(ix.Prices)
	if err != nil {
		return nil, err
	}
	if ix.MemoryLimit > 0 {
		debug.SetMemoryLimit(ix.MemoryLimit << 20)
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
		reg = NewRegistry()
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
	handler := idx.Handler(index.APIConfig{Token: ix.Token, Addr: ix.HTTP, Logger: log, Metrics: ix.MoreMetrics})
	api, err := listenWithMetrics(ix.HTTP, handler, reg)
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
