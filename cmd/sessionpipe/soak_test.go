package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSoak_RunStaysFlat runs `sessionpipe run` (embedded JetStream,
// tailer, indexer, exporter with the archive) while sessions are appended
// to without pause, and samples the process's resident memory, open file
// descriptors and threads from /proc: after the first fifth of the run
// (start-up, the first Parquet and archive files) none may keep growing.
// 20 seconds by default; SESSIONPIPE_SOAK_MINUTES=30 is the long soak.
func TestSoak_RunStaysFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs it for a while")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc")
	}
	length := 20 * time.Second
	if v := os.Getenv("SESSIONPIPE_SOAK_MINUTES"); v != "" {
		m, err := strconv.Atoi(v)
		require.NoError(t, err, "SESSIONPIPE_SOAK_MINUTES")
		length = time.Duration(m) * time.Minute
	}
	bin := buildE2EBinary(t)
	root := t.TempDir()
	watch, data := filepath.Join(root, "watch"), filepath.Join(root, "data")
	require.NoError(t, os.MkdirAll(watch, 0o755))
	rules := filepath.Join(root, "rules.yaml")
	require.NoError(t, os.WriteFile(rules, []byte("rules: []\n"), 0o644))
	r := startRun(t, bin, data, rules, watch)
	pid := r.cmd.Process.Pid

	// Eight sessions, one line every 10 ms between them, a new session
	// file every 2,000 lines (agents start new sessions).
	stop := make(chan struct{})
	written := make(chan int, 1)
	go func() {
		n := 0
		defer func() { written <- n }()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			s := fmt.Sprintf("soak-%d-%d", n%8, n/2000)
			f, err := os.OpenFile(filepath.Join(watch, s+".jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return
			}
			if n%2000 < 8 {
				fmt.Fprintf(f, `{"type":"session","version":3,"id":%q,"timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`+"\n", s)
			}
			fmt.Fprintf(f, `{"type":"message","id":"m%07d","parentId":null,"timestamp":"2026-01-01T00:00:%02d.000Z","message":{"role":"assistant","content":[{"type":"text","text":"line %d %s"}],"model":"claude-sonnet-4-5","usage":{"input":10,"output":20,"cacheRead":0,"cacheWrite":0,"totalTokens":30}}}`+"\n",
				n, n%60, n, strings.Repeat("x", 200))
			f.Close()
			n++
		}
	}()

	type sample struct {
		at                 time.Duration
		rssKB, fds, thread int
	}
	var samples []sample
	start := time.Now()
	sampling := time.NewTicker(max(length/40, time.Second))
	defer sampling.Stop()
	for range sampling.C {
		if time.Since(start) > length {
			break
		}
		rss, threads, err := procStatus(pid)
		require.NoError(t, err, "the run exited: %s", r.stderr.String())
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		require.NoError(t, err)
		samples = append(samples, sample{time.Since(start), rss, len(fds), threads})
	}
	close(stop)
	lines := <-written
	r.stop(t)

	warm := len(samples) / 5
	var peak sample
	for _, s := range samples[:warm+1] {
		peak.rssKB, peak.fds, peak.thread = max(peak.rssKB, s.rssKB), max(peak.fds, s.fds), max(peak.thread, s.thread)
	}
	last := samples[len(samples)-1]
	t.Logf("%d lines in %v; after warm-up (%v): peak RSS %d MB, fds %d, threads %d; at the end: %d MB, %d, %d",
		lines, length, samples[warm].at.Round(time.Second), peak.rssKB>>10, peak.fds, peak.thread, last.rssKB>>10, last.fds, last.thread)
	require.Greater(t, lines, int(length/(20*time.Millisecond)), "the writer kept writing")
	// Flat: the end no higher than the warm-up's peak plus a margin for
	// the garbage collector's cycle and the files of the newest sessions.
	require.LessOrEqual(t, last.rssKB, peak.rssKB*3/2+32<<10, "resident memory keeps growing")
	require.LessOrEqual(t, last.fds, peak.fds+32, "file descriptors keep growing")
	require.LessOrEqual(t, last.thread, peak.thread+8, "threads keep growing")
}

// procStatus returns a process's resident memory (KB) and thread count
// from /proc/<pid>/status.
func procStatus(pid int) (rssKB, threads int, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, l := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		switch k {
		case "VmRSS":
			rssKB, _ = strconv.Atoi(f[0])
		case "Threads":
			threads, _ = strconv.Atoi(f[0])
		}
	}
	return rssKB, threads, nil
}
