package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/marcboeker/go-duckdb/v2"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/export/duckdb"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
	"github.com/sessionpipe/sessionpipe/schema"
)

// This file is the end-to-end test of `sessionpipe run`: the real binary,
// a watched directory written to over time the way agents write
// (appends, lines half written and completed later, a file renamed while
// followed, a file truncated and rewritten), and its three outputs (the
// API's aggregates, the alerts, the Parquet read by DuckDB) compared with
// what the offline `sessionpipe sessions` computes from the files.

// buildE2EBinary returns this command, built once for the package's tests
// (sharedBinary).
func buildE2EBinary(t *testing.T) string {
	t.Helper()
	return sharedBinary(t)
}

// e2eHost is the host name both the live run and the offline command
// record, so that their sessions compare.
const e2eHost = "e2e"

// numbers is what the live and offline paths are compared on, per
// session: every counter of index.Session, the tokens and the cost.
type numbers struct {
	Turns, UserMessages, AssistantMessages, APICalls, ToolCalls, ToolErrors int64
	Input, Output, CacheRead, CacheWrite, Total                             int64
	CostNanoUSD                                                             int64 // rounded: the sum of float64 costs may differ in the last bits
	UnpricedCalls, Compactions                                              int64
}

func numbersOf(s index.Session) numbers {
	return numbers{
		Turns: s.Turns, UserMessages: s.UserMessages, AssistantMessages: s.AssistantMessages,
		APICalls: s.APICalls, ToolCalls: s.ToolCalls, ToolErrors: s.ToolErrors,
		Input: s.InputTokens, Output: s.OutputTokens, CacheRead: s.CacheReadTokens, CacheWrite: s.CacheWriteTokens,
		Total: s.TotalTokens, CostNanoUSD: nano(s.CostUSD), UnpricedCalls: s.UnpricedCalls, Compactions: s.Compactions,
	}
}

func nano(usd float64) int64 { return int64(usd*1e9 + 0.5) }

// sessionKey names a session: ids of different formats may collide.
func sessionKey(format, id string) string { return format + "/" + id }

// byKey indexes sessions by sessionKey.
func byKey(all []index.Session) map[string]numbers {
	m := make(map[string]numbers, len(all))
	for _, s := range all {
		m[sessionKey(string(s.Format), s.SessionID)] = numbersOf(s)
	}
	return m
}

// diffSessions returns nil when got and want hold the same sessions with
// the same numbers, else an error naming the first differences.
func diffSessions(want, got map[string]numbers) error {
	var diffs []string
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			diffs = append(diffs, "missing "+k)
		case g != w:
			diffs = append(diffs, fmt.Sprintf("%s: got %+v, want %+v", k, g, w))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, "unexpected "+k)
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	slices.Sort(diffs)
	return fmt.Errorf("%d of %d sessions differ: %s", len(diffs), len(want), strings.Join(diffs[:min(len(diffs), 5)], "; "))
}

// offlineSessions runs the binary's `sessions -json` on paths.
func offlineSessions(t *testing.T, bin string, paths ...string) []index.Session {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, append([]string{"sessions", "-json", "-q", "-host", e2eHost}, paths...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	var all []index.Session
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &all))
	return all
}

// apiGet decodes the JSON answer of GET url into v.
func apiGet(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", resp.Status, body)
	}
	return json.Unmarshal(body, v)
}

// apiSessions returns every session the API at api lists (at most 1000:
// more would be a failure of the test's own setup).
func apiSessions(api string) ([]index.Session, error) {
	var page struct {
		Sessions   []index.Session `json:"sessions"`
		NextCursor string          `json:"next_cursor"`
	}
	if err := apiGet(api+"/api/sessions?limit=1000", &page); err != nil {
		return nil, err
	}
	if page.NextCursor != "" {
		return nil, errors.New("more than 1000 sessions")
	}
	return page.Sessions, nil
}

// growingFile is a sample transcript copied into the watched directory in
// pieces that end anywhere, inside a line too.
type growingFile struct {
	src, dst string
	data     []byte
	written  int
}

// writeTo appends the file's bytes up to fraction frac of its size, and
// returns whether that left a line half written.
func (g *growingFile) writeTo(t *testing.T, frac float64) bool {
	t.Helper()
	end := min(len(g.data), int(float64(len(g.data))*frac))
	if end <= g.written {
		return false
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(g.dst), 0o755))
	f, err := os.OpenFile(g.dst, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	require.NoError(t, err)
	_, err = f.Write(g.data[g.written:end])
	require.NoError(t, err)
	require.NoError(t, f.Close())
	g.written = end
	return end > 0 && g.data[end-1] != '\n'
}

// TestE2E_RunFollowsWritesAndAgreesWithOffline builds `sessionpipe`, runs
// `sessionpipe run` on a directory and writes sessions of every format
// (Claude Code with subagents, pi, Codex, Fluux, m4dtimes) into it over
// time. After each round of writes it waits until the API's sessions
// equal what `sessionpipe sessions` computes from the files as they are
// (lines still half written at the end of a file count in neither), so
// that the live path is checked while files grow, not only at the end.
// Along the way a Fluux history file is renamed into its sessions/ archive
// while followed and written on under its new name, and an m4dtimes file
// is truncated and written again. At the end a
// session-scope alert has fired for exactly the sessions over its
// threshold, and after SIGINT (exit 0) the Parquet read with the DuckDB
// views of duckdb.DuckDBScript gives the same per-session numbers, with
// every entry in exactly one row.

func TestE2E_RunFollowsWritesAndAgreesWithOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildE2EBinary(t)
	root := t.TempDir()
	watch, data := filepath.Join(root, "watch"), filepath.Join(root, "data")
	require.NoError(t, os.MkdirAll(watch, 0o755))

	// Every transcript of testdata/corpus under the same relative path
	// (Claude Code subagent files stay beside their sessions), and Fluux
	// and m4dtimes samples from the format packages' test data.
	var files []*growingFile
	add := func(src, rel string) {
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		files = append(files, &growingFile{src: src, dst: filepath.Join(watch, rel), data: b})
	}
	require.NoError(t, filepath.WalkDir(corpus, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		rel, err := filepath.Rel(corpus, p)
		if err == nil {
			add(p, rel)
		}
		return err
	}))
	const fluuxJID = "alice@example.com"
	fluuxHistory := filepath.Join("fluux", fluuxJID, "history.jsonl")
	fluuxArchived := filepath.Join(watch, "fluux", fluuxJID, "sessions", "20250208-190000.jsonl")
	add("../../pipeline/formats/fluux/testdata/doc_example/input.jsonl", fluuxHistory)
	add("../../pipeline/formats/fluux/testdata/muc/input.jsonl", filepath.Join("fluux", "room@conference.example.com", "history.jsonl"))
	truncated := filepath.Join(watch, "m4dtimes", "chat.jsonl")
	add("../../pipeline/formats/m4dtimes/testdata/readme_example/input.jsonl", filepath.Join("m4dtimes", "chat.jsonl"))
	add("../../pipeline/formats/m4dtimes/testdata/roles_and_blocks/input.jsonl", filepath.Join("m4dtimes", "other.jsonl"))
	require.Greater(t, len(files), 25)

	rules := filepath.Join(root, "rules.yaml")
	const threshold = 1_000_000
	require.NoError(t, os.WriteFile(rules, fmt.Appendf(nil,
		"rules:\n  - name: e2e-big-session\n    scope: session\n    metric: total_tokens\n    above: %d\n", threshold), 0o644))

	r := startRun(t, bin, data, rules, watch)
	api := r.api

	waitAPI := func(what string) map[string]numbers {
		t.Helper()
		return r.waitOffline(t, bin, what, watch)
	}

	// Round by round, every file grows to a fraction of its size; the
	// fractions cut most files inside a line.
	halfWritten := 0
	for round, frac := range []float64{0.13, 0.41, 0.57} {
		for _, f := range files {
			if f.writeTo(t, frac) {
				halfWritten++
			}
		}
		waitAPI(fmt.Sprintf("round %d (%.0f%%)", round, frac*100))
	}
	require.Positive(t, halfWritten, "some rounds ended inside a line")

	// The Fluux history is archived (renamed into sessions/) while
	// followed, and written on under its new name.
	require.NoError(t, os.MkdirAll(filepath.Dir(fluuxArchived), 0o755))
	require.NoError(t, os.Rename(filepath.Join(watch, fluuxHistory), fluuxArchived))
	for _, f := range files {
		if f.dst == filepath.Join(watch, fluuxHistory) {
			f.dst = fluuxArchived
		}
		f.writeTo(t, 0.8)
	}
	waitAPI("after the rename (80%)")

	// Every file is complete. The first m4dtimes file is truncated and
	// written again, in two pieces (an agent rewriting its transcript
	// whole): it is read again from its start, and its entries, with the
	// keys they had, are not counted twice.
	var m4d *growingFile
	for _, f := range files {
		f.writeTo(t, 1)
		if f.dst == truncated {
			m4d = f
		}
	}
	before := waitAPI("complete")
	require.NoError(t, os.Truncate(truncated, 0))
	m4d.written = 0
	require.True(t, m4d.writeTo(t, 0.5))
	m4d.writeTo(t, 1)
	final := waitAPI("rewritten")
	require.Equal(t, before, final)

	// Every session over the threshold, and only those, has its alert.
	var over []string
	for k, n := range final {
		if n.Total > threshold {
			// A session-scope alert is keyed by format, host and id.
			format, id, _ := strings.Cut(k, "/")
			over = append(over, alert.SessionKey(schema.Format(format), e2eHost, id))
		}
	}
	slices.Sort(over)
	require.NotEmpty(t, over)
	require.Less(t, len(over), len(final), "the threshold is not below every session")
	natstest.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		var a struct{ Alerts []alert.Event }
		if err := apiGet(api+"/api/alerts", &a); err != nil {
			return err
		}
		var fired []string
		for _, e := range a.Alerts {
			if e.Rule == "e2e-big-session" {
				fired = append(fired, e.Key)
			}
		}
		slices.Sort(fired)
		if !slices.Equal(fired, over) {
			return fmt.Errorf("alerts for %v, want %v", fired, over)
		}
		return nil
	})

	// One /metrics on the API's address covers the three stages.
	resp, err := http.Get(api + "/metrics")
	require.NoError(t, err)
	metrics, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	for _, name := range []string{"sessionpipe_index_applied_seq ", "sessionpipe_tail_messages_sent_total ",
		"sessionpipe_publish_in_flight_bytes ", "sessionpipe_export_committed_seq ",
		"sessionpipe_tail_publish_latency_seconds_count ", "sessionpipe_index_apply_latency_seconds_count ",
		"sessionpipe_alert_latency_seconds_count ", "sessionpipe_http_connections "} {
		require.Contains(t, string(metrics), "\n"+name, "run's /metrics")
	}
	// The process's metrics once, though three stages share the process.
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes"} {
		require.Equal(t, 1, strings.Count(string(metrics), "\n# TYPE "+name+" "), "run's /metrics: %s", name)
	}

	// The exporter may lag the indexer (on a loaded machine by seconds):
	// stopped earlier, it commits what it took, and the rest waits in the
	// stream for the next start. Parquet is compared once it committed
	// what the indexer applied.
	natstest.CheckFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		m := scrapeMetrics(t, api)
		if m["sessionpipe_export_committed_seq"] < m["sessionpipe_index_applied_seq"] {
			return fmt.Errorf("exporter committed up to %v, indexer applied %v", m["sessionpipe_export_committed_seq"], m["sessionpipe_index_applied_seq"])
		}
		return nil
	})
	r.stop(t)
	requireParquet(t, filepath.Join(data, "parquet"), truncated, final)
}

// scrapeMetrics returns the unlabelled samples of api's /metrics.
func scrapeMetrics(t *testing.T, api string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(api + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	m := map[string]float64{}
	for line := range strings.Lines(string(body)) {
		name, value, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok || strings.HasPrefix(name, "#") || strings.Contains(name, "{") {
			continue
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			m[name] = v
		}
	}
	return m
}

// requireParquet requires the Parquet under out, read with the views of
// duckdb.DuckDBScript, to give want's sessions, and every entry to be in
// exactly one row.
func requireParquet(t *testing.T, out, reread string, want map[string]numbers) {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	defer db.Close()
	db.SetMaxOpenConns(1) // the views are temporary: one connection
	_, err = db.Exec(duckdb.DuckDBScript(duckdb.ViewConfig{Dir: out}))
	require.NoError(t, err)

	// Each copy of a record in each file is a row once, but for the lines
	// of a file read again (truncated and rewritten: its batches are cut
	// otherwise, so the stream stores them again and the views keep one).
	var rows, copies int
	require.NoError(t, db.QueryRow(fmt.Sprintf(
		"SELECT count(*), count(DISTINCT (key, path)) FROM read_parquet('%s/**/*.parquet', hive_partitioning=true, union_by_name=true)", out)).Scan(&rows, &copies))
	require.Positive(t, rows)
	var others int
	require.NoError(t, db.QueryRow(fmt.Sprintf(
		`SELECT count(*) FROM (SELECT key, path FROM read_parquet('%s/**/*.parquet', hive_partitioning=true, union_by_name=true)
		 GROUP BY key, path HAVING count(*) > 1 AND path IS DISTINCT FROM ?)`, out), reread).Scan(&others))
	require.Zero(t, others, "no entry of a file that was not read again in two rows")
	var viewed int
	require.NoError(t, db.QueryRow("SELECT count(*) FROM entry_copies").Scan(&viewed))
	require.Equal(t, copies, viewed, "entry_copies: each copy of a record in each file once")

	r, err := db.Query(`SELECT format, session_id, turns, user_messages, assistant_messages, api_calls, tool_calls, tool_errors,
		input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, total_tokens, cost_nano_usd, unpriced_calls, compactions
		FROM sessions`)
	require.NoError(t, err)
	defer r.Close()
	got := map[string]numbers{}
	for r.Next() {
		var format, id string
		var n numbers
		require.NoError(t, r.Scan(&format, &id, &n.Turns, &n.UserMessages, &n.AssistantMessages, &n.APICalls, &n.ToolCalls, &n.ToolErrors,
			&n.Input, &n.Output, &n.CacheRead, &n.CacheWrite, &n.Total, &n.CostNanoUSD, &n.UnpricedCalls, &n.Compactions))
		got[sessionKey(format, id)] = n
	}
	require.NoError(t, r.Err())
	require.NoError(t, diffSessions(want, got), "Parquet (DuckDB views) against the offline numbers")
}

// waitOffline waits until the API's sessions equal those `sessionpipe
// sessions` computes from paths now, and returns them.
func (r *running) waitOffline(t *testing.T, bin, what string, paths ...string) map[string]numbers {
	t.Helper()
	want := byKey(offlineSessions(t, bin, paths...))
	natstest.CheckFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		got, err := apiSessions(r.api)
		if err != nil {
			return err
		}
		if err := diffSessions(want, byKey(got)); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	})
	return want
}

// running is a `sessionpipe run` child process.
type running struct {
	cmd    *exec.Cmd
	api    string
	stderr *bytes.Buffer
	exited bool
}

// startRun starts `sessionpipe run` on watch with its state under data,
// an embedded server on a free port, the API on another, Parquet parts
// closed after 1 s, and the alert rules file rules (alerting on entries
// of any age). It is killed when the test ends, unless stopped.
func startRun(t *testing.T, bin, data, rules, watch string) *running {
	t.Helper()
	addr := freeTCPAddr(t)
	r := &running{api: "http://" + addr, stderr: &bytes.Buffer{}}
	r.cmd = exec.Command(bin, "run", "-data-dir", data, "-http", addr, "-nats-port", "-1", "-metrics", "",
		"-host", e2eHost, "-part-age", "1s", "-rules", rules, "-alert-max-lag", "0", "-rescan", "1s", "-log-level", "warn", watch)
	r.cmd.Stderr = r.stderr
	require.NoError(t, r.cmd.Start())
	t.Cleanup(func() {
		if !r.exited {
			r.cmd.Process.Kill()
			r.cmd.Wait()
		}
		if t.Failed() {
			t.Logf("sessionpipe run stderr:\n%s", r.stderr.String())
		}
	})
	return r
}

// stop sends SIGINT, which commits the open Parquet files, and requires
// a clean exit (status 0).
func (r *running) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, r.cmd.Process.Signal(syscall.SIGINT))
	require.NoError(t, r.cmd.Wait(), "sessionpipe run exit status")
	r.exited = true
}

// freeTCPAddr returns a loopback address with a port that was free a
// moment ago.
func freeTCPAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// TestE2E_RunTruncatedFileRewrittenWithAnotherSession truncates a followed
// file and writes another session into it.
//
// The expectation: the stream is append-only, so what was published of
// the file before it was truncated stays counted (docs/ARCHITECTURE.md,
// "Delivery guarantees": a truncated file is read again from its start;
// nothing is unpublished). The API and the Parquet must therefore give
// the offline numbers of the final file plus those of its earlier
// content, kept for that purpose outside the watched directory: the
// replaced session stays beside the session that replaced it, and the new
// session counts as it does offline (its first prompt starts a turn).
func TestE2E_RunTruncatedFileRewrittenWithAnotherSession(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildE2EBinary(t)
	root := t.TempDir()
	watch, data, gone := filepath.Join(root, "watch"), filepath.Join(root, "data"), filepath.Join(root, "gone")
	require.NoError(t, os.MkdirAll(watch, 0o755))
	require.NoError(t, os.MkdirAll(gone, 0o755))
	rules := filepath.Join(root, "rules.yaml")
	require.NoError(t, os.WriteFile(rules, []byte("rules: []\n"), 0o644))
	first, err := os.ReadFile("../../pipeline/formats/m4dtimes/testdata/readme_example/input.jsonl")
	require.NoError(t, err)
	second, err := os.ReadFile("../../pipeline/formats/m4dtimes/testdata/tool_loop/input.jsonl")
	require.NoError(t, err)
	file := filepath.Join(watch, "chat.jsonl")
	require.NoError(t, os.WriteFile(file, first, 0o644))

	r := startRun(t, bin, data, rules, watch)
	before := r.waitOffline(t, bin, "first session", watch)
	require.Len(t, before, 1)

	require.NoError(t, os.WriteFile(filepath.Join(gone, "chat-before-truncation.jsonl"), first, 0o644))
	require.NoError(t, os.Truncate(file, 0))
	g := &growingFile{dst: file, data: second}
	require.True(t, g.writeTo(t, 0.5))
	g.writeTo(t, 1)
	final := r.waitOffline(t, bin, "after the rewrite", watch, gone)
	require.Len(t, final, 2, "the replaced session stays, the new one is added")
	for k, n := range final {
		require.Positive(t, n.Turns, "%s: its prompt starts a turn", k)
	}

	r.stop(t)
	requireParquet(t, filepath.Join(data, "parquet"), file, final)
}
