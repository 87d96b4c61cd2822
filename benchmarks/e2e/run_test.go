package e2e

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/marcboeker/go-duckdb/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/corpusgen"
	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/export/duckdb"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
)

var (
	runSize = flag.String("bench.size", "64MB", "corpus size of BenchmarkRun: bytes or KB, MB, GB (powers of 1024)")
	runDir  = flag.String("bench.dir", "", "where BenchmarkRun's generated corpus is cached (default: a new temporary directory)")
)

// BenchmarkRun measures `sessionpipe run` (the binary, in a child process,
// so that its peak RSS is its own) backfilling a generated mixed corpus
// (internal/testutil/corpusgen: every generated format, resumed and forked
// copies) with the embedded JetStream server, the indexer and the
// exporter, and, in the same benchmark run on the same corpus, the
// `tailer` binary alone publishing into an in-process server. It reports:
//
//   - run-entries/s: entries in the stream divided by the time from start
//     until the API's sessions equal `sessionpipe sessions` on the files;
//   - agree-s: the time from start until the API and the Parquet (read
//     with the DuckDB views of duckdb.DuckDBScript) both equal the offline
//     numbers (Parquet parts close after -part-age 1s), the DuckDB query
//     that says so included;
//   - parquet-s: the time from start until the exporter had committed
//     everything the indexer applied, in the poll after which that query
//     found the Parquet equal (agree-s without the query, and without
//     the queries that found it not yet equal);
//   - check-s: how long that query took (DuckDB's sessions view over
//     every Parquet file, on the same two cores as run);
//   - run-rss-MB: the run process's peak RSS (VmHWM before it is stopped);
//   - tailer-entries/s, tailer-s and tailer-rss-MB: the tailer alone, until
//     it has every entry acknowledged (its own counter; the stream is then
//     checked to hold them all);
//   - offline-entries/s: `sessionpipe sessions` on the same files.
//
// One iteration is a whole backfill; run it with -benchtime=1x:
//
//	go test ./benchmarks/e2e -run '^$' -bench BenchmarkRun -benchtime=1x -bench.size=64MB
//	go test ./benchmarks/e2e -run '^$' -bench BenchmarkRun -benchtime=1x -bench.size=1GB -timeout 2h
func BenchmarkRun(b *testing.B) {
	size, err := parseSize(*runSize)
	require.NoError(b, err)
	corpus := generate(b, size)
	sp, tailer := buildBin(b, "sessionpipe"), buildBin(b, "tailer")

	t0 := time.Now()
	want, entries := offlineNumbers(b, sp, corpus)
	offlineSecs := time.Since(t0).Seconds()
	b.Logf("corpus %s: %d sessions, %d entries", *runSize, len(want), entries)

	b.ResetTimer()
	for range b.N {
		r := benchRunOnce(b, sp, corpus, want)
		t := benchTailerOnce(b, tailer, corpus, r.streamEntries)
		b.ReportMetric(float64(r.streamEntries)/r.apiAgree.Seconds(), "run-entries/s")
		b.ReportMetric(r.agree.Seconds(), "agree-s")
		b.ReportMetric(r.apiAgree.Seconds(), "api-agree-s")
		b.ReportMetric(r.parquet.Seconds(), "parquet-s")
		b.ReportMetric(r.check.Seconds(), "check-s")
		b.ReportMetric(float64(r.maxRSS)/1024, "run-rss-MB")
		b.ReportMetric(float64(r.streamEntries)/t.elapsed.Seconds(), "tailer-entries/s")
		b.ReportMetric(t.elapsed.Seconds(), "tailer-s")
		b.ReportMetric(float64(t.maxRSS)/1024, "tailer-rss-MB")
		b.ReportMetric(float64(entries)/offlineSecs, "offline-entries/s")
	}
}

// parseSize parses a byte count with an optional KB, MB or GB suffix.
func parseSize(s string) (int64, error) {
	mult := int64(1)
	num := strings.ToUpper(strings.TrimSpace(s))
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}} {
		if v, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(v), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bench.size %q: want a positive byte count such as 64MB or 1GB", s)
	}
	return n * mult, nil
}

// generate writes (or finds, under -bench.dir) the mixed corpus of size
// bytes.
func generate(b *testing.B, size int64) string {
	b.Helper()
	dir := b.TempDir()
	if *runDir != "" {
		dir = filepath.Join(*runDir, fmt.Sprintf("run-mixed-%d", size))
		if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
			return dir
		}
		require.NoError(b, os.RemoveAll(dir))
	}
	_, err := corpusgen.WriteTree(b.Context(), corpusgen.TreeConfig{Dir: dir, Bytes: size, Seed: 1, MinSessionBytes: 20 << 10, MaxSessionBytes: 2 << 20})
	require.NoError(b, err)
	if *runDir != "" {
		require.NoError(b, os.WriteFile(filepath.Join(dir, ".complete"), nil, 0o644))
	}
	return dir
}

// buildBin compiles cmd/<name> in the main module (two directories up:
// benchmarks is a module of its own).
func buildBin(b *testing.B, name string) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), name)
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/"+name)
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.CombinedOutput()
	require.NoError(b, err, "%s", out)
	return bin
}

// sums is what the offline and live numbers are compared on, per session.
type sums struct {
	Turns, APICalls, Total, CostNanoUSD int64
}

const benchHost = "bench"

var entriesRE = regexp.MustCompile(`([0-9,]+) entries`)

// offlineNumbers runs `sessionpipe sessions -json` on dir and returns the
// sessions and the number of entries it read.
func offlineNumbers(b *testing.B, bin, dir string) (map[string]sums, int64) {
	b.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "sessions", "-json", "-host", benchHost, dir)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(b, cmd.Run(), stderr.String())
	var all []index.Session
	require.NoError(b, json.Unmarshal(stdout.Bytes(), &all))
	m := entriesRE.FindStringSubmatch(stderr.String())
	require.NotNil(b, m, "summary: %s", stderr.String())
	n, err := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
	require.NoError(b, err)
	return bySession(all), n
}

func bySession(all []index.Session) map[string]sums {
	m := make(map[string]sums, len(all))
	for _, s := range all {
		m[string(s.Format)+"/"+s.SessionID] = sums{s.Turns, s.APICalls, s.TotalTokens, int64(s.CostUSD*1e9 + 0.5)}
	}
	return m
}

// same returns nil when got equals want, else an error.
func same(want, got map[string]sums) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d sessions of %d", len(got), len(want))
	}
	for k, w := range want {
		if got[k] != w {
			return fmt.Errorf("%s: %+v, want %+v", k, got[k], w)
		}
	}
	return nil
}

// apiNumbers reads every session from the API (pages of 1000).
func apiNumbers(api string) (map[string]sums, error) {
	var all []index.Session
	cursor := ""
	for {
		resp, err := http.Get(api + "/api/sessions?limit=1000&cursor=" + cursor)
		if err != nil {
			return nil, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
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
		all = append(all, page.Sessions...)
		if page.NextCursor == "" {
			return bySession(all), nil
		}
		cursor = page.NextCursor
	}
}

// parquetNumbers reads the sessions view over the Parquet under out.
func parquetNumbers(out string) (map[string]sums, error) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(duckdb.DuckDBScript(duckdb.ViewConfig{Dir: out})); err != nil {
		return nil, err // no file yet
	}
	rows, err := db.Query("SELECT format, session_id, turns, api_calls, total_tokens, cost_nano_usd FROM sessions")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[string]sums{}
	for rows.Next() {
		var format, id string
		var s sums
		if err := rows.Scan(&format, &id, &s.Turns, &s.APICalls, &s.Total, &s.CostNanoUSD); err != nil {
			return nil, err
		}
		m[format+"/"+id] = s
	}
	return m, rows.Err()
}

func freePort(b *testing.B) int {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// entriesIn returns the number of entries in the stream: a batch
// message counts its Sessionpipe-Entries, a message of one entry one.
func entriesIn(b *testing.B, s jetstream.Stream) (uint64, error) {
	info, err := s.Info(b.Context())
	if err != nil {
		return 0, err
	}
	prefix := bus.DefaultPrefix + ".entries."
	var n uint64
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(b.Context(), seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if !strings.HasPrefix(m.Subject, prefix) {
			continue
		}
		if !bus.IsBatch(m.Header) {
			n++
			continue
		}
		c, err := strconv.ParseUint(m.Header.Get(bus.HeaderEntries), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("seq %d: %s: %w", seq, bus.HeaderEntries, err)
		}
		n += c
	}
	return n, nil
}

// metricsOf reads the integer samples of api's /metrics.
func metricsOf(api string) (map[string]int64, error) {
	resp, err := http.Get(api + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	m := map[string]int64{}
	for _, line := range strings.Split(string(body), "\n") {
		name, v, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		// Prometheus writes a value as the shortest float: 1e+06 is a count too.
		if f, err := strconv.ParseFloat(v, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			m[name] = int64(f)
		}
	}
	return m, nil
}

// peakRSS returns the peak resident memory (VmHWM, KiB) of the running
// process pid. The rusage of a child is no measure of it: Go starts
// children with vfork, and Linux carries the parent's peak (this
// benchmark's, with its in-process server) into the child's maxrss at
// exec.
func peakRSS(b *testing.B, pid int) int64 {
	b.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(b, err)
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			require.NoError(b, err)
			return kb
		}
	}
	b.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

type runResult struct {
	apiAgree, agree time.Duration
	parquet         time.Duration // until the committed Parquet held the numbers
	check           time.Duration // DuckDB's query of them (the sessions view)
	maxRSS          int64         // KiB
	streamEntries   uint64
}

// benchRunOnce runs `sessionpipe run` on corpus until its API and its
// Parquet equal want, then stops it with SIGINT.
func benchRunOnce(b *testing.B, bin, corpus string, want map[string]sums) runResult {
	b.Helper()
	data := b.TempDir()
	port, httpPort := freePort(b), freePort(b)
	api := fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "run", "-data-dir", data, "-http", fmt.Sprintf("127.0.0.1:%d", httpPort), "-nats-port", strconv.Itoa(port),
		"-metrics", "", "-host", benchHost, "-part-age", "1s", "-log-level", "warn", corpus)
	cmd.Stderr = &stderr
	start := time.Now()
	require.NoError(b, cmd.Start())
	done := false
	b.Cleanup(func() {
		if !done {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	// The expensive comparisons run only once the cheap counters say the
	// stage caught up with the stream (the indexer's applied sequence, the
	// exporter's committed one, on run's /metrics), so that polling does
	// not slow down what it measures.
	var r runResult
	var js jetstream.JetStream
	apiOK, pqOK := false, false
	deadline := start.Add(2 * time.Hour)
	for !(apiOK && pqOK) {
		require.True(b, time.Now().Before(deadline), "no agreement: %s", stderr.String())
		time.Sleep(250 * time.Millisecond)
		if js == nil {
			nc, err := nats.Connect(fmt.Sprintf("nats://127.0.0.1:%d", port))
			if err != nil {
				continue // not up yet
			}
			b.Cleanup(nc.Close)
			js = natstest.JetStream(b, nc)
		}
		m, err := metricsOf(api)
		if err != nil {
			continue
		}
		applied := m["sessionpipe_index_applied_seq"]
		if !apiOK && applied > 0 && m["sessionpipe_index_lag_messages"] == 0 {
			if got, err := apiNumbers(api); err == nil && same(want, got) == nil {
				apiOK, r.apiAgree = true, time.Since(start)
			}
		}
		if apiOK && !pqOK && m["sessionpipe_export_pending_messages"] == 0 && m["sessionpipe_export_committed_seq"] >= applied {
			committed, t0 := time.Since(start), time.Now()
			if got, err := parquetNumbers(filepath.Join(data, "parquet")); err == nil && same(want, got) == nil {
				pqOK, r.parquet, r.check = true, committed, time.Since(t0)
			}
		}
	}
	r.agree = time.Since(start)
	s, err := js.Stream(b.Context(), bus.DefaultStream)
	require.NoError(b, err)
	r.streamEntries, err = entriesIn(b, s)
	require.NoError(b, err)
	r.maxRSS = peakRSS(b, cmd.Process.Pid)
	require.NoError(b, cmd.Process.Signal(syscall.SIGINT))
	require.NoError(b, cmd.Wait(), stderr.String())
	done = true
	return r
}

type tailerResult struct {
	elapsed time.Duration
	maxRSS  int64 // KiB
}

// benchTailerOnce runs the tailer binary alone on corpus, publishing to
// an in-process JetStream server, until the stream holds n entries.
func benchTailerOnce(b *testing.B, bin, corpus string, n uint64) tailerResult {
	b.Helper()
	srv := natstest.RunServer(b)
	js := natstest.JetStream(b, natstest.Connect(b, srv.URL()))
	s, err := bus.EnsureStream(b.Context(), js, bus.StreamConfig{})
	require.NoError(b, err)
	var stderr bytes.Buffer
	metrics := fmt.Sprintf("127.0.0.1:%d", freePort(b))
	cmd := exec.Command(bin, "-host", benchHost, "-watch", corpus, "-data-dir", b.TempDir(), "-metrics", metrics, "-log-level", "warn")
	cmd.Env = append(os.Environ(), "NATS_URL="+srv.URL())
	cmd.Stderr = &stderr
	start := time.Now()
	require.NoError(b, cmd.Start())
	done := false
	b.Cleanup(func() {
		if !done {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	// The tailer's own counter of acknowledged entries says when it is
	// done; the stream is read once, after: counting its entries means
	// fetching every message, which on each poll would take the CPU the
	// tailer is measured on.
	natstest.CheckFor(b, 2*time.Hour, 100*time.Millisecond, func() error {
		m, err := metricsOf("http://" + metrics)
		if err != nil {
			return err
		}
		if got := m["sessionpipe_tail_entries_acked_total"]; uint64(got) < n {
			return fmt.Errorf("%d of %d entries acknowledged", got, n)
		}
		return nil
	})
	elapsed := time.Since(start)
	got, err := entriesIn(b, s)
	require.NoError(b, err)
	require.Equal(b, n, got, "the tailer alone publishes the entries of the run")
	rss := peakRSS(b, cmd.Process.Pid)
	require.NoError(b, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(b, cmd.Wait(), stderr.String())
	done = true
	return tailerResult{elapsed, rss}
}
