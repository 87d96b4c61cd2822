// Package e2e_test runs the three separate binaries of a fleet (tailers on
// two hosts, `indexer serve`, `exporter serve`) against a 3-node JetStream
// cluster on loopback, and compares what they produce with the offline
// numbers. Test-only.
package e2e_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/marcboeker/go-duckdb/v2"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/export"
	"github.com/sessionpipe/sessionpipe/pipeline/export/duckdb"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
)

const corpus = "../../testdata/corpus"

// build compiles the command cmd/<name> into a temporary directory.
func build(t *testing.T, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	out, err := exec.Command("go", "build", "-o", bin, "github.com/sessionpipe/sessionpipe/cmd/"+name).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// numbers is what the paths are compared on, per session.
type numbers struct {
	Host                                                                    string
	Turns, UserMessages, AssistantMessages, APICalls, ToolCalls, ToolErrors int64
	Input, Output, CacheRead, CacheWrite, Total, CostNanoUSD                int64
	UnpricedCalls, Compactions                                              int64
}

func numbersOf(s index.Session) numbers {
	return numbers{
		Host: s.Host, Turns: s.Turns, UserMessages: s.UserMessages, AssistantMessages: s.AssistantMessages,
		APICalls: s.APICalls, ToolCalls: s.ToolCalls, ToolErrors: s.ToolErrors,
		Input: s.InputTokens, Output: s.OutputTokens, CacheRead: s.CacheReadTokens, CacheWrite: s.CacheWriteTokens,
		Total: s.TotalTokens, CostNanoUSD: int64(s.CostUSD*1e9 + 0.5), UnpricedCalls: s.UnpricedCalls, Compactions: s.Compactions,
	}
}

// byKey indexes sessions by format/session id.
func byKey(all []index.Session) map[string]numbers {
	m := make(map[string]numbers, len(all))
	for _, s := range all {
		m[string(s.Format)+"/"+s.SessionID] = numbersOf(s)
	}
	return m
}

// diffSessions returns nil when got holds want's sessions with the same
// numbers and nothing else, else an error naming the first differences.
func diffSessions(want, got map[string]numbers) error {
	var diffs []string
	for k, w := range want {
		if g, ok := got[k]; !ok {
			diffs = append(diffs, "missing "+k)
		} else if g != w {
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

// offline runs `sessionpipe sessions -json` on paths as host.
func offline(t *testing.T, bin, host string, paths ...string) map[string]numbers {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, append([]string{"sessions", "-json", "-q", "-host", host}, paths...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	var all []index.Session
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &all))
	return byKey(all)
}

// apiSessions returns the sessions the indexer API at api lists.
func apiSessions(api string) (map[string]numbers, error) {
	resp, err := http.Get(api + "/api/sessions?limit=1000")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", resp.Status, body)
	}
	var page struct {
		Sessions   []index.Session `json:"sessions"`
		NextCursor string          `json:"next_cursor"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		return nil, err
	}
	if page.NextCursor != "" {
		return nil, fmt.Errorf("more than 1000 sessions")
	}
	return byKey(page.Sessions), nil
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// daemon is a child process of the test.
type daemon struct {
	name   string
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	exited bool
}

// start starts bin args… with NATS_URL=natsURL; it is killed when the
// test ends unless stopped, and its stderr is logged if the test failed.
func start(t *testing.T, name, natsURL, bin string, args ...string) *daemon {
	t.Helper()
	d := &daemon{name: name, cmd: exec.Command(bin, args...), stderr: &bytes.Buffer{}}
	d.cmd.Env = append(os.Environ(), "NATS_URL="+natsURL)
	d.cmd.Stderr = d.stderr
	require.NoError(t, d.cmd.Start())
	t.Cleanup(func() {
		if !d.exited {
			d.cmd.Process.Kill()
			d.cmd.Wait()
		}
		if t.Failed() {
			t.Logf("%s stderr:\n%s", d.name, d.stderr.String())
		}
	})
	return d
}

// stop sends SIGTERM and requires a clean exit.
func (d *daemon) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, d.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, d.cmd.Wait(), "%s exit status", d.name)
	d.exited = true
}

// piece is a transcript copied into a host's directory in pieces ending
// anywhere, inside lines too.
type piece struct {
	dst     string
	data    []byte
	written int
}

func (p *piece) writeTo(t *testing.T, frac float64) {
	t.Helper()
	end := min(len(p.data), int(float64(len(p.data))*frac))
	if end <= p.written {
		return
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(p.dst), 0o755))
	f, err := os.OpenFile(p.dst, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	require.NoError(t, err)
	_, err = f.Write(p.data[p.written:end])
	require.NoError(t, err)
	require.NoError(t, f.Close())
	p.written = end
}

// copies returns the transcripts under src/sub (relative paths kept) to
// be written under dst.
func copies(t *testing.T, dst string, subs ...string) []*piece {
	t.Helper()
	var out []*piece
	for _, sub := range subs {
		require.NoError(t, filepath.WalkDir(filepath.Join(corpus, sub), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
				return err
			}
			rel, err := filepath.Rel(corpus, p)
			if err != nil {
				return err
			}
			b, err := os.ReadFile(p)
			out = append(out, &piece{dst: filepath.Join(dst, rel), data: b})
			return err
		}))
	}
	require.NotEmpty(t, out)
	return out
}

// TestFleet_NodeRestartLosesAndDoublesNothing runs a fleet of the separate
// binaries against a 3-node JetStream cluster (in-process, loopback) with
// the stream replicated on all three: two `tailer` processes as hosts a
// and b, each following its own directory, `indexer serve` and `exporter
// serve`. Transcripts are written in three rounds; after the first the
// node leading the stream is stopped, the second is written while it is
// down (a new leader takes over, clients reconnect to the others), and it
// is restarted before the third. At the end the API's sessions equal the
// offline numbers of both hosts' files (no session lost, none doubled,
// each with its host), and after the exporter's SIGTERM the Parquet read
// with the DuckDB views of duckdb.DuckDBScript gives them too, every entry
// in exactly one row.
func TestFleet_NodeRestartLosesAndDoublesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries and runs a cluster")
	}
	bins := map[string]string{}
	for _, name := range []string{"tailer", "indexer", "exporter", "sessionpipe"} {
		bins[name] = build(t, name)
	}
	cluster := natstest.RunCluster(t, 3)
	urls := cluster.URLs()

	root := t.TempDir()
	dirA, dirB := filepath.Join(root, "host-a"), filepath.Join(root, "host-b")
	files := append(copies(t, dirA, "claude-code"), copies(t, dirB, "pi", "codex")...)

	// The services own the stream: the indexer creates it with three
	// replicas before the tailers (publish-only) start.
	api := "http://" + freeAddr(t)
	indexer := start(t, "indexer", urls, bins["indexer"], "serve", "-http", strings.TrimPrefix(api, "http://"),
		"-data-dir", filepath.Join(root, "indexer"), "-replicas", "3", "-log-level", "warn")
	natstest.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		_, err := apiSessions(api)
		return err
	})
	leader := cluster.WaitStreamLeader(t, bus.DefaultStream)
	stream, err := natstest.JetStream(t, natstest.Connect(t, urls)).Stream(t.Context(), bus.DefaultStream)
	require.NoError(t, err)
	require.Equal(t, 3, stream.CachedInfo().Config.Replicas, "the stream is replicated on the three nodes")
	out, archive := filepath.Join(root, "parquet"), filepath.Join(root, "archive")
	exporter := start(t, "exporter", urls, bins["exporter"], "serve", "-data-dir", filepath.Join(root, "exporter"),
		"-out", out, "-archive-dir", archive, "-part-age", "1s", "-replicas", "3", "-metrics", "", "-log-level", "warn")
	for host, dir := range map[string]string{"a": dirA, "b": dirB} {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		start(t, "tailer "+host, urls, bins["tailer"], "-host", host, "-watch", dir, "-data-dir", filepath.Join(root, "tailer-"+host),
			"-rescan", "1s", "-metrics", "", "-log-level", "warn")
	}

	expect := func() map[string]numbers {
		a, b := offline(t, bins["sessionpipe"], "a", dirA), offline(t, bins["sessionpipe"], "b", dirB)
		for k, n := range b {
			_, dup := a[k]
			require.False(t, dup, "session %s on both hosts: the hosts' files must be disjoint", k)
			a[k] = n
		}
		return a
	}
	waitAPI := func(what string) map[string]numbers {
		t.Helper()
		want := expect()
		natstest.CheckFor(t, 90*time.Second, 100*time.Millisecond, func() error {
			got, err := apiSessions(api)
			if err != nil {
				return err
			}
			if err := diffSessions(want, got); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			return nil
		})
		return want
	}

	for _, f := range files {
		f.writeTo(t, 0.35)
	}
	waitAPI("first third")

	// The stream's leader goes down; the second round is written and
	// counted without it.
	leader.Stop()
	require.NotSame(t, leader, cluster.WaitStreamLeader(t, bus.DefaultStream), "another node leads the stream")
	for _, f := range files {
		f.writeTo(t, 0.7)
	}
	waitAPI("written while a node was down")
	leader.Start(t)
	for _, f := range files {
		f.writeTo(t, 1)
	}
	final := waitAPI("complete, the node back")
	hosts := map[string]int{}
	for _, n := range final {
		hosts[n.Host]++
	}
	require.Positive(t, hosts["a"])
	require.Positive(t, hosts["b"])
	require.Len(t, hosts, 2)

	// The restarted node caught up: the three replicas are current.
	natstest.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		srv := leader.Server()
		if srv == nil || !srv.JetStreamIsCurrent() {
			return fmt.Errorf("restarted node %s not current", leader.Name())
		}
		return nil
	})

	// The exporter caught up too (its committed floor, saved beside the
	// manifest, reaches the stream's last entry message) before it is
	// stopped: SIGTERM commits what it took, not what it did not read yet.
	last, err := stream.GetLastMsgForSubject(t.Context(), bus.EntriesFilter(bus.DefaultPrefix))
	require.NoError(t, err)
	natstest.CheckFor(t, 90*time.Second, 100*time.Millisecond, func() error {
		data, err := os.ReadFile(filepath.Join(out, export.StateName))
		if err != nil {
			return err
		}
		var st struct {
			Committed uint64 `json:"committed"`
		}
		if err := json.Unmarshal(data, &st); err != nil {
			return err
		}
		if st.Committed < last.Sequence {
			return fmt.Errorf("exporter committed up to %d of %d", st.Committed, last.Sequence)
		}
		return nil
	})
	exporter.stop(t)
	indexer.stop(t)

	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	defer db.Close()
	db.SetMaxOpenConns(1)
	_, err = db.Exec(duckdb.DuckDBScript(duckdb.ViewConfig{Dir: out}))
	require.NoError(t, err)
	var rows, keys int
	require.NoError(t, db.QueryRow(fmt.Sprintf(
		"SELECT count(*), count(DISTINCT key) FROM read_parquet('%s/**/*.parquet', hive_partitioning=true, union_by_name=true)", out)).Scan(&rows, &keys))
	require.Positive(t, rows)
	require.Equal(t, keys, rows, "every entry in exactly one Parquet row")
	r, err := db.Query(`SELECT format, session_id, host, turns, user_messages, assistant_messages, api_calls, tool_calls, tool_errors,
		input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, total_tokens, cost_nano_usd, unpriced_calls, compactions
		FROM sessions`)
	require.NoError(t, err)
	defer r.Close()
	got := map[string]numbers{}
	for r.Next() {
		var format, id string
		var n numbers
		require.NoError(t, r.Scan(&format, &id, &n.Host, &n.Turns, &n.UserMessages, &n.AssistantMessages, &n.APICalls, &n.ToolCalls, &n.ToolErrors,
			&n.Input, &n.Output, &n.CacheRead, &n.CacheWrite, &n.Total, &n.CostNanoUSD, &n.UnpricedCalls, &n.Compactions))
		got[format+"/"+id] = n
	}
	require.NoError(t, r.Err())
	require.NoError(t, diffSessions(final, got), "Parquet (DuckDB views) against the offline numbers")
}
