package tail

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
)

var (
	benchTailerBin = flag.String("bench.tailer", "", "cmd/tailer binary of BenchmarkDaemonMemory (default: built from this tree)")
	benchWindow    = flag.Duration("bench.window", 20*time.Second, "idle window of BenchmarkDaemonMemory")
)

// BenchmarkDaemonMemory runs the tailer daemon (cmd/tailer, a subprocess,
// so that its memory is its own) against an in-process JetStream server
// and reports what it holds once a burst is over:
//
//   - case=files: -bench.files small transcripts (6 lines each, last
//     written a day ago) backfilled at -rescan 1s; then idle for
//     -bench.window;
//   - case=bigline: one transcript whose second line is a 200 MB message,
//     and a few small ones.
//
// rss-MB is the daemon's resident set (VmRSS) at the end of the idle
// window, peak-MB its high-water mark (VmHWM), cpu% its CPU time over
// the window in percent of one core, backfill-s the time until every
// entry was acknowledged.
func BenchmarkDaemonMemory(b *testing.B) {
	bin := *benchTailerBin
	if bin == "" {
		bin = buildTailerTB(b)
	}
	b.Run(fmt.Sprintf("case=files/files=%d", *benchFiles), func(b *testing.B) {
		dir := b.TempDir()
		// Most of the transcripts a host keeps were written long ago.
		day := time.Now().Add(-24 * time.Hour)
		for _, p := range writeSmallFiles(b, dir, *benchFiles) {
			require.NoError(b, os.Chtimes(p, day, day))
		}
		daemonMemory(b, bin, dir, int64(*benchFiles*smallFileLines))
	})
	b.Run("case=bigline", func(b *testing.B) {
		dir := b.TempDir()
		writeSmallFiles(b, dir, 10)
		big := piHeader("big") + `{"type":"message","id":"big1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"` +
			strings.Repeat("x", 200<<20) + `","timestamp":1767225600000}}` + "\n" + piLine(2)
		require.NoError(b, os.WriteFile(filepath.Join(dir, "big.jsonl"), []byte(big), 0o644))
		daemonMemory(b, bin, dir, 10*smallFileLines+3)
	})
}

func daemonMemory(b *testing.B, bin, dir string, entries int64) {
	var rss, peak, cpu, backfill float64
	for b.Loop() {
		b.StopTimer()
		srv := natstest.RunServer(b)
		js := natstest.JetStream(b, natstest.Connect(b, srv.URL()))
		_, err := bus.EnsureStream(b.Context(), js, bus.StreamConfig{})
		require.NoError(b, err)
		state, data := b.TempDir(), b.TempDir()
		cmd := exec.Command(bin, "-nats", srv.URL(), "-watch", dir, "-state-dir", state, "-data-dir", data,
			"-metrics", "127.0.0.1:0", "-rescan", "1s", "-host", "memhost", "-max-line-bytes", "268435456")
		cmd.Env = []string{"HOME=" + data, "PATH=" + os.Getenv("PATH")}
		stderr, err := cmd.StderrPipe()
		require.NoError(b, err)
		start := time.Now()
		require.NoError(b, cmd.Start())
		url := make(chan string, 1)
		go func() {
			sc := bufio.NewScanner(stderr)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				if m := metricsURL.FindStringSubmatch(sc.Text()); m != nil {
					url <- m[1]
				}
			}
			io.Copy(io.Discard, stderr)
		}()
		var u string
		select {
		case u = <-url:
		case <-time.After(30 * time.Second):
			require.FailNow(b, "no metrics address")
		}
		natstest.CheckFor(b, 10*time.Minute, 50*time.Millisecond, func() error {
			if got := scrape(b, u)["sessionpipe_tail_entries_published_total"]; got < entries {
				return fmt.Errorf("%d of %d entries", got, entries)
			}
			return nil
		})
		backfill += time.Since(start).Seconds()
		cpu0 := procCPU(b, cmd.Process.Pid)
		t0 := time.Now()
		time.Sleep(*benchWindow)
		cpu += 100 * (procCPU(b, cmd.Process.Pid) - cpu0).Seconds() / time.Since(t0).Seconds()
		st := procStatus(b, cmd.Process.Pid)
		rss += float64(st["VmRSS"]) / 1024
		peak += float64(st["VmHWM"]) / 1024
		require.NoError(b, cmd.Process.Signal(os.Interrupt))
		require.NoError(b, cmd.Wait())
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(rss/n, "rss-MB")
	b.ReportMetric(peak/n, "peak-MB")
	b.ReportMetric(cpu/n, "cpu%")
	b.ReportMetric(backfill/n, "backfill-s")
}

// buildTailerTB returns cmd/tailer, built once (sharedTailer).
func buildTailerTB(tb testing.TB) string {
	tb.Helper()
	return sharedTailer(tb)
}

// scrape reads the metrics at url.
func scrape(tb testing.TB, url string) map[string]int64 {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(tb, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(tb, err)
	defer resp.Body.Close()
	out := make(map[string]int64)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		if i < 0 || strings.HasPrefix(line, "#") {
			continue
		}
		if v, err := strconv.ParseInt(line[i+1:], 10, 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out
}

var statusLine = regexp.MustCompile(`^(\w+):\s+(\d+) kB$`)

// procStatus returns the kB fields of /proc/pid/status.
func procStatus(tb testing.TB, pid int) map[string]int64 {
	tb.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(tb, err)
	out := make(map[string]int64)
	for line := range strings.Lines(string(data)) {
		if m := statusLine.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			v, _ := strconv.ParseInt(m[2], 10, 64)
			out[m[1]] = v
		}
	}
	return out
}

// procCPU returns the user and system CPU time of process pid.
func procCPU(tb testing.TB, pid int) time.Duration {
	tb.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(tb, err)
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}
