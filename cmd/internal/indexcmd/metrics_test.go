package indexcmd_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/cmd/internal/exportcmd"
	"github.com/sessionpipe/sessionpipe/cmd/internal/indexcmd"
	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/internal/testutil/webtest"
)

// parseTailerFlags parses the tailer's flags as the tailer does.
func parseTailerFlags(t *testing.T, env map[string]string, args ...string) (*cli.Tailer, error) {
	t.Helper()
	var tl cli.Tailer
	fs := flag.NewFlagSet("tailer", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	tl.Register(fs, func(k string) string { return env[k] })
	return &tl, fs.Parse(args)
}

// The metric families each daemon served before its metrics moved to
// client_golang (collected from internal/prom's writers and the tests
// before the change): users scrape them, so every one stays, with its
// labels.
var oldMetrics = map[string][]string{
	"tailer": {
		"sessionpipe_tail_files", "sessionpipe_tail_files_skipped_total", "sessionpipe_tail_files_skipped_names",
		"sessionpipe_tail_lines_read_total", "sessionpipe_tail_bytes_read_total", "sessionpipe_tail_messages_sent_total",
		"sessionpipe_tail_entries_published_total", "sessionpipe_tail_batches_sent_total", "sessionpipe_tail_entries_sent_total",
		"sessionpipe_tail_entries_acked_total", "sessionpipe_tail_bad_lines_total", "sessionpipe_tail_entries_truncated_total",
		"sessionpipe_tail_publish_errors_total", "sessionpipe_tail_read_errors_total", "sessionpipe_tail_rewrites_total",
		"sessionpipe_tail_renames_total", "sessionpipe_tail_watch_errors_total", "sessionpipe_tail_rescans_total",
		"sessionpipe_tail_watched_dirs", "sessionpipe_tail_raw_chunks_total", "sessionpipe_tail_raw_bytes_total",
		"sessionpipe_tail_raw_holes_total", "sessionpipe_tail_raw_skipped_total", "sessionpipe_tail_documents_read_total",
		"sessionpipe_tail_documents_invalid_total", "sessionpipe_tail_documents_too_large_total",
		"sessionpipe_tail_document_entries_unchanged_total", "sessionpipe_tail_lag_bytes",
		`sessionpipe_tail_watch_files{watch=`, `sessionpipe_tail_secrets_redacted_total{kind=`, "sessionpipe_tail_fields_withheld_total",
		"sessionpipe_publish_accepted_total", "sessionpipe_publish_acked_total", "sessionpipe_publish_duplicates_total",
		"sessionpipe_publish_retries_total", "sessionpipe_publish_errors_total", "sessionpipe_publish_failed_total",
		"sessionpipe_publish_in_flight", "sessionpipe_publish_in_flight_bytes",
		"sessionpipe_http_connections", `sessionpipe_http_connections_refused_total{limit="total"}`,
		`sessionpipe_http_connections_refused_total{limit="per_client"}`,
	},
	"indexer": {
		"sessionpipe_index_applied_seq", "sessionpipe_index_committed_seq", "sessionpipe_index_lag_messages",
		"sessionpipe_index_entries_total", "sessionpipe_index_redelivered_skipped_total", "sessionpipe_index_gap_messages_total",
		"sessionpipe_index_undecodable_total", "sessionpipe_index_forged_total", "sessionpipe_index_rebuilds_total",
		"sessionpipe_index_reprices_total", "sessionpipe_alerts_fired_total", "sessionpipe_index_active",
		"sessionpipe_index_metric_pairs_folded",
		`sessionpipe_tokens_total{host="h",model="claude-sonnet-4-5",type="input"}`,
		`sessionpipe_tokens_total{host="h",model="claude-sonnet-4-5",type="output"}`,
		`sessionpipe_tokens_total{host="h",model="claude-sonnet-4-5",type="cache_read"}`,
		`sessionpipe_tokens_total{host="h",model="claude-sonnet-4-5",type="cache_write"}`,
		`sessionpipe_cost_usd_total{host="h",model="claude-sonnet-4-5"}`, `sessionpipe_api_calls_total{host="h",model="claude-sonnet-4-5"}`,
		"sessionpipe_index_event_streams", "sessionpipe_index_event_streams_refused_total",
		"sessionpipe_http_connections", `sessionpipe_http_connections_refused_total{limit="total"}`,
		`sessionpipe_http_connections_refused_total{limit="per_client"}`,
	},
	"exporter": {
		"sessionpipe_export_active", "sessionpipe_export_committed_seq", "sessionpipe_export_pending_messages",
		"sessionpipe_export_files_total", "sessionpipe_export_rows_total", "sessionpipe_export_bytes_total",
		"sessionpipe_export_archive_segments_total", "sessionpipe_export_archive_raw_bytes_total",
		"sessionpipe_export_archive_bytes_total", "sessionpipe_export_forged_total", "sessionpipe_export_gap_messages_total",
		"sessionpipe_export_undecodable_total", "sessionpipe_export_commit_errors_total",
		"sessionpipe_export_raw_purged_seq", "sessionpipe_export_raw_purge_blocked",
		"sessionpipe_http_connections", `sessionpipe_http_connections_refused_total{limit="total"}`,
		`sessionpipe_http_connections_refused_total{limit="per_client"}`,
	},
}

// The latency histograms each daemon adds, and the process's metrics
// every daemon serves once.
var (
	newHistograms = map[string][]string{
		"tailer":   {"sessionpipe_tail_publish_latency_seconds"},
		"indexer":  {"sessionpipe_index_apply_latency_seconds", "sessionpipe_alert_latency_seconds"},
		"exporter": nil,
	}
	processMetrics = []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "go_gc_duration_seconds", "go_info", "process_resident_memory_bytes", "process_cpu_seconds_total", "process_open_fds"}
)

// sampleLine matches a sample: its name with labels, and its value.
var sampleLine = regexp.MustCompile(`(?m)^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (\S+)$`)

// samples parses a scrape: the value of every series.
func samples(t *testing.T, text string) map[string]float64 {
	t.Helper()
	out := make(map[string]float64)
	for _, m := range sampleLine.FindAllStringSubmatch(text, -1) {
		v, err := strconv.ParseFloat(m[2], 64)
		require.NoError(t, err, m[0])
		out[m[1]] = v
	}
	return out
}

// requireSeries fails unless text has a series whose name (with labels)
// starts with want; a want without labels must be a series of its own
// or the first of a labelled family.
func requireSeries(t *testing.T, daemon, text, want string) {
	t.Helper()
	if strings.Contains(want, "{") {
		require.Contains(t, text, "\n"+want, "%s's /metrics", daemon)
		return
	}
	require.Regexp(t, `(?m)^`+regexp.QuoteMeta(want)+`[ {]`, text, "%s's /metrics", daemon)
}

// Each daemon (tailer, indexer, exporter, wired as their commands wire
// them) serves on its /metrics every metric it served before the move
// to client_golang, with the same names and labels, the Go runtime and
// process collectors, and latency histograms fed by a real pipeline: a
// transcript line with usage and a secret, followed by the tailer,
// indexed (an alert fires) and exported.
func TestDaemons_Metrics(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	n := &cli.NATS{DataDir: t.TempDir(), Port: -1}
	b, err := n.Connect(t.Context(), "metrics", log)
	require.NoError(t, err)
	t.Cleanup(func() { b.Close(context.WithoutCancel(t.Context())) })

	watch := t.TempDir()
	now := time.Now().UTC().Add(-time.Second).Format(time.RFC3339Nano)
	line := func(i int) string {
		return fmt.Sprintf(`{"type":"assistant","uuid":"u%d","sessionId":"s1","timestamp":%q,"cwd":"/w","requestId":"req_%d",`+
			`"message":{"id":"msg_%d","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"the key is AKIAABCDEFGHIJKLMNOP"}],`+
			`"usage":{"input_tokens":100,"output_tokens":50,"cache_read_input_tokens":10,"cache_creation_input_tokens":5}}}`+"\n", i, now, i, i)
	}
	require.NoError(t, os.MkdirAll(filepath.Join(watch, "p"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(watch, "p", "s1.jsonl"), []byte(line(1)+line(2)), 0o644))
	rules := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(rules, []byte("rules:\n  - name: big\n    scope: session\n    metric: total_tokens\n    above: 10\n"), 0o644))

	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	var runs []func() error
	t.Cleanup(func() {
		cancel()
		for _, wait := range runs {
			require.NoError(t, wait())
		}
	})
	start := func(run func(context.Context) error) {
		done := make(chan error, 1)
		go func() { done <- run(ctx) }()
		runs = append(runs, func() error { return <-done })
	}

	ri, err := indexcmd.StartIndexer(&cli.Indexer{HTTP: "127.0.0.1:0", Name: "indexer", Rules: rules}, n, b, log)
	require.NoError(t, err)
	start(ri.Run)
	re, err := exportcmd.StartExporter(&cli.Exporter{Name: "exporter", Metrics: "127.0.0.1:0", NoArchive: true, PartAge: 10 * time.Millisecond, LeaseTTL: 2 * time.Second}, n, b, log)
	require.NoError(t, err)
	start(re.Run)
	tf, err := parseTailerFlags(t, nil, "-watch", watch, "-host", "h", "-metrics", "127.0.0.1:0", "-state-dir", t.TempDir())
	require.NoError(t, err)
	rt, err := cli.StartTailer(ctx, tf, n, b, func(string) string { return "" }, log, nil)
	require.NoError(t, err)
	start(rt.Run)

	urls := map[string]string{
		"tailer":   "http://" + rt.Metrics.Addr() + "/metrics",
		"indexer":  "http://" + ri.API.Addr() + "/metrics",
		"exporter": "http://" + re.Metrics.Addr() + "/metrics",
	}
	// Wait for the pipeline: both entries indexed and exported, an alert
	// fired, and every histogram observed.
	scrapes := make(map[string]string)
	natstest.CheckFor(t, 60*time.Second, 20*time.Millisecond, func() error {
		for daemon, url := range urls {
			code, text := webtest.Get(t, url)
			if code != 200 {
				return fmt.Errorf("%s: %d %s", daemon, code, text)
			}
			scrapes[daemon] = text
			s := samples(t, text)
			for _, h := range newHistograms[daemon] {
				if s[h+"_count"] == 0 {
					return fmt.Errorf("%s: no observation in %s", daemon, h)
				}
			}
		}
		if s := samples(t, scrapes["indexer"]); s["sessionpipe_index_entries_total"] < 2 || s["sessionpipe_alerts_fired_total"] == 0 {
			return fmt.Errorf("indexer: %v entries, %v alerts", s["sessionpipe_index_entries_total"], s["sessionpipe_alerts_fired_total"])
		}
		if s := samples(t, scrapes["exporter"]); s["sessionpipe_export_rows_total"] < 2 {
			return fmt.Errorf("exporter: %v rows", s["sessionpipe_export_rows_total"])
		}
		return nil
	})

	for daemon, text := range scrapes {
		for _, name := range oldMetrics[daemon] {
			requireSeries(t, daemon, text, name)
		}
		for _, name := range processMetrics {
			requireSeries(t, daemon, text, name)
			require.Equal(t, 1, strings.Count(text, "\n# TYPE "+name+" "), "%s: %s once", daemon, name)
		}
		for _, h := range newHistograms[daemon] {
			require.Contains(t, text, "\n# TYPE "+h+" histogram\n", daemon)
			require.Regexp(t, `(?m)^`+regexp.QuoteMeta(h)+`_bucket\{le="\+Inf"\} [1-9]`, text, daemon)
		}
		// Nothing but what the daemon is: no family of another's.
		for other, names := range oldMetrics {
			if other == daemon {
				continue
			}
			for _, name := range names {
				if !slices.Contains(oldMetrics[daemon], name) && !strings.HasPrefix(name, "sessionpipe_http_") {
					require.NotContains(t, text, "\n"+name, "%s serves %s's metrics", daemon, other)
				}
			}
		}
	}
	requireDocumented(t, scrapes)

	ts := samples(t, scrapes["tailer"])
	require.Equal(t, ts["sessionpipe_tail_entries_published_total"], ts["sessionpipe_tail_publish_latency_seconds_count"],
		"one observation per message acknowledged")
	require.Positive(t, ts[`sessionpipe_tail_secrets_redacted_total{kind="aws-access-key"}`], "the key in the lines")
	is := samples(t, scrapes["indexer"])
	require.Equal(t, is["sessionpipe_index_entries_total"], is["sessionpipe_index_apply_latency_seconds_count"], "one observation per entry applied")
	require.Equal(t, is["sessionpipe_alerts_fired_total"], is["sessionpipe_alert_latency_seconds_count"], "one observation per alert")
	require.GreaterOrEqual(t, is["sessionpipe_alert_latency_seconds_sum"]/is["sessionpipe_alert_latency_seconds_count"], 1.0,
		"the line was written a second before it was read")
	require.Equal(t, 200.0, is[`sessionpipe_tokens_total{host="h",model="claude-sonnet-4-5",type="input"}`])
}

// docRow is a row of the table of docs/metrics.md: a family, its type,
// and the daemons that serve it.
var docRow = regexp.MustCompile("(?m)^\\| `(sessionpipe_[a-z_]+)` \\| ([a-z]+) \\| [^|]* \\| ([a-z, ]+) \\|")

// requireDocumented checks docs/metrics.md against the scrapes: every
// sessionpipe family a daemon serves is in the table with its type and
// that daemon, and every family the table says a daemon serves is served.
func requireDocumented(t *testing.T, scrapes map[string]string) {
	t.Helper()
	doc, err := os.ReadFile("../../../docs/metrics.md")
	require.NoError(t, err)
	rows := docRow.FindAllStringSubmatch(string(doc), -1)
	require.NotEmpty(t, rows)
	for daemon, text := range scrapes {
		served := make(map[string]string)
		for _, m := range regexp.MustCompile(`(?m)^# TYPE (sessionpipe_[a-z_]+) ([a-z]+)$`).FindAllStringSubmatch(text, -1) {
			served[m[1]] = m[2]
		}
		documented := make(map[string]string)
		for _, r := range rows {
			if slices.Contains(strings.Split(r[3], ", "), daemon) {
				documented[r[1]] = r[2]
			}
		}
		require.Equal(t, documented, served, "docs/metrics.md: the families %s serves", daemon)
	}
}
