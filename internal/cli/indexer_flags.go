package cli

import (
	"flag"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
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
	// feeds the webhook (default DefaultWebhookConsumer).
	WebhookConsumer string
}

// DefaultMemoryLimitMiB is the indexer's default soft memory limit: its
// state is bounded by design (a cache of recent facts over the store), and
// the limit keeps garbage from growing the heap past it.
const DefaultMemoryLimitMiB = 256

// DefaultRunMemoryLimitMiB is the soft memory limit of `sessionpipe run`,
// whose process holds the embedded server, the tailer, the indexer and the
// exporter (with smaller buffers, RunParquetMemoryBytes).
const DefaultRunMemoryLimitMiB = 300

// Register adds the indexer flags to fs.
func (ix *Indexer) Register(fs *flag.FlagSet, env Env) {
	ix.register(fs, env, DefaultMemoryLimitMiB)
}

func (ix *Indexer) register(fs *flag.FlagSet, env Env, limitMiB int64) {
	fs.StringVar(&ix.Name, "consumer", orDefault(env("SESSIONPIPE_INDEXER_CONSUMER"), DefaultIndexerConsumer), "durable consumer name (env SESSIONPIPE_INDEXER_CONSUMER); indexers running at once need distinct names")
	fs.StringVar(&ix.HTTP, "http", orDefault(env("SESSIONPIPE_HTTP"), DefaultHTTPAddr), "address of the HTTP API and /metrics (env SESSIONPIPE_HTTP); empty: none")
	fs.StringVar(&ix.Token, "token", env("SESSIONPIPE_TOKEN"), "bearer token the API requires, but for /healthz and the dashboard page (env SESSIONPIPE_TOKEN); required when -http is not a loopback address")
	fs.StringVar(&ix.Rules, "rules", env("SESSIONPIPE_RULES"), "alert rules file, YAML (env SESSIONPIPE_RULES); reloaded on SIGHUP")
	fs.StringVar(&ix.Webhook, "webhook", env("SESSIONPIPE_WEBHOOK_URL"), "URL receiving a POST (Slack-compatible JSON) per alert, at least once, with the alert id as Idempotency-Key (env SESSIONPIPE_WEBHOOK_URL); what is not delivered yet is sent after a restart; a first webhook gets the alerts published from then on")
	fs.StringVar(&ix.WebhookConsumer, "webhook-consumer", orDefault(env("SESSIONPIPE_WEBHOOK_CONSUMER"), DefaultWebhookConsumer), "durable consumer of the alerts stream that feeds -webhook (env SESSIONPIPE_WEBHOOK_CONSUMER); indexers sending to different webhooks need distinct names")
	fs.StringVar(&ix.Prices, "prices", env("SESSIONPIPE_PRICES"), "price file (LiteLLM- or models.dev-shaped rows, optional dated periods) overriding the embedded prices (env SESSIONPIPE_PRICES); a change reprices the history the stream holds")
	fs.DurationVar(&ix.MaxLag, "alert-max-lag", DefaultAlertMaxLag, "an alert caused by an entry older than this is recorded but not sent (a rebuilt state does not page about last month); 0: no limit")
	fs.DurationVar(&ix.LeaseTTL, "lease-ttl", bus.DefaultLeaseTTL, "an indexer of the same -consumer standing by takes over at most this long after the active one died")
	RegisterMemoryLimit(fs, &ix.MemoryLimit, limitMiB, env, "")
	fs.StringVar(&ix.StateDir, "index-dir", env("SESSIONPIPE_INDEX_DIR"), "indexer state directory (env SESSIONPIPE_INDEX_DIR; default <data-dir>/indexer)")
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
