package tail

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
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

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
)

// TestTailer_KillAndRestart runs the tailer daemon (cmd/tailer) against
// an in-process JetStream server while the test writes transcripts (four
// files, appends and bursts, half-written lines completed later, a
// rotation by rename), kills it with SIGKILL at random moments, restarts
// it, and finally checks that the stream holds every complete line at
// least once, in file order, and nothing else (a batch of lines sent
// again after a kill, cut otherwise, is stored again: the consumers
// count each entry key once, as cmd/indexer's and cmd/exporter's kill
// tests check).
func TestTailer_KillAndRestart(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	if *modelSeed != 0 {
		seed = *modelSeed
	}
	t.Logf("seed %d (the kill moments depend on timing too; -tail.seed=%d writes the same lines)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	rounds := 8
	if os.Getenv("SESSIONPIPE_SOAK") == "1" {
		rounds = 40
	}
	if v := os.Getenv("SESSIONPIPE_KILL_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "SESSIONPIPE_KILL_ROUNDS")
		rounds = n
	}

	srv := natstest.RunServer(t)
	obs := newTestStream(t, srv)
	d := newDaemon(t, buildTailer(t), srv.URL())

	var files []*tfile
	for i, dir := range []string{"a", "b/c", "agents/main/sessions", "."} {
		label := fmt.Sprintf("k%d", i+1)
		f := newTFile(label, "kill", filepath.Join(d.watch, dir, label+".jsonl"))
		createFile(t, f.path, f.header()+f.more(rng, rng.IntN(20)))
		files = append(files, f)
	}
	write := func() {
		f := files[rng.IntN(len(files))]
		switch r := rng.IntN(100); {
		case r < 10:
			appendFile(t, f.path, f.more(rng, 100+rng.IntN(200))) // a backlog in flight at the kill
		case r < 25 && f.partial == "":
			appendFile(t, f.path, f.half(rng))
		default:
			appendFile(t, f.path, f.more(rng, rng.IntN(10)))
		}
	}

	var behind int64 // bytes past the checkpoints at the kills: read and sent again
	for round := range rounds {
		d.start()
		// Kill at a random moment: during start-up and the replay of the
		// files, or later while lines are written and published.
		until := time.Now().Add(time.Duration(rng.IntN(1200)) * time.Millisecond)
		for time.Now().Before(until) {
			write()
			time.Sleep(time.Duration(2+rng.IntN(20)) * time.Millisecond)
		}
		if round == rounds/2 {
			// OpenClaw-style archive; the session goes on in a new file.
			f := files[1]
			to := f.path + ".reset.2026-03-20T06-34-44.520Z"
			require.NoError(t, os.Rename(f.path, to))
			n := newTFile("k5", "kill", f.path)
			createFile(t, n.path, n.header()+n.more(rng, 3))
			f.path = to
			files = append(files, n)
			write()
		}
		d.kill()
		behind += d.behind()
	}

	d.start()
	for _, f := range files {
		appendFile(t, f.path, f.more(rng, 1)) // completes every half line
	}
	obs.waitAll(t, 60*time.Second, files)
	require.Equal(t, 0, d.term(), "exit code after SIGTERM")
	require.NoError(t, obs.refresh(t.Context()))
	st := checkDelivery(t, obs.msgs, files)
	require.Equal(t, len(obs.msgs), st.must+st.copies)
	t.Logf("%d lines in %d files delivered across %d kills (%d stored again); %d bytes were past the checkpoints at the kills", st.must, len(files), rounds, st.copies, behind)
}

// TestTailer_DaemonGracefulStop checks the daemon's graceful path:
// SIGTERM exits with code 0 and a checkpoint that covers every
// acknowledged line, so that a restart sends only what is new; and a
// SIGTERM while NATS is down still exits within the drain, losing
// nothing.
func TestTailer_DaemonGracefulStop(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	srv := natstest.RunServer(t)
	obs := newTestStream(t, srv)
	d := newDaemon(t, buildTailer(t), srv.URL())

	var files []*tfile
	for i := range 3 {
		label := fmt.Sprintf("g%d", i+1)
		f := newTFile(label, "term", filepath.Join(d.watch, label, label+".jsonl"))
		createFile(t, f.path, f.header()+f.more(rng, 200))
		files = append(files, f)
	}
	appendFile(t, files[0].path, files[0].half(rng))

	// Run 1: backfill, then follow.
	d.start()
	obs.waitAll(t, 30*time.Second, files)
	for _, f := range files[1:] {
		appendFile(t, f.path, f.more(rng, 50))
	}
	obs.waitAll(t, 30*time.Second, files)
	total := 0
	for _, f := range files {
		total += len(f.lines)
	}
	d.waitEntriesSent(int64(total))
	require.Zero(t, d.metrics()["sessionpipe_publish_duplicates_total"])
	require.Equal(t, 0, d.term(), "exit code after SIGTERM")

	// The checkpoint covers every complete line, not the half one.
	cp, err := OpenCheckpoints(d.state)
	require.NoError(t, err)
	states, err := cp.Load()
	require.NoError(t, err)
	require.Len(t, states, len(files))
	for _, s := range states {
		data, err := os.ReadFile(s.Path)
		require.NoError(t, err)
		require.Equal(t, int64(bytes.LastIndexByte(data, '\n')+1), s.Offset, "checkpoint of %s", s.Path)
	}

	// Run 2: nothing is sent again; only what is new.
	d.start()
	natstest.CheckFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		if got := d.metrics()["sessionpipe_tail_lines_read_total"]; got < int64(total) {
			return fmt.Errorf("%d lines read of %d", got, total)
		}
		return nil
	})
	before := len(obs.msgs)
	added := 0
	for _, f := range files {
		n := len(f.lines)
		appendFile(t, f.path, f.more(rng, 5))
		added += len(f.lines) - n
	}
	obs.waitAll(t, 30*time.Second, files)
	// Only the new lines were sent: the checkpoint, not the duplicate
	// window, kept the others.
	d.waitEntriesSent(int64(added))
	m := d.metrics()
	require.Equal(t, int64(added), m["sessionpipe_tail_entries_acked_total"], "entries acknowledged")
	require.Positive(t, m["sessionpipe_tail_raw_chunks_total"], "the new lines were archived too")
	require.Equal(t, m["sessionpipe_tail_batches_sent_total"]+m["sessionpipe_tail_raw_chunks_total"], m["sessionpipe_publish_accepted_total"],
		"one batch message and one raw chunk per run of lines read, nothing else")
	require.Equal(t, m["sessionpipe_tail_batches_sent_total"], m["sessionpipe_tail_raw_chunks_total"])
	require.Zero(t, m["sessionpipe_publish_duplicates_total"])
	require.Equal(t, before+added, len(obs.msgs))

	// Run 2 ends while NATS is down, with lines read and their batches
	// not acknowledged: it must still stop within the drain and keep
	// what was not acknowledged for the next run. (That a full publish
	// window blocks reading is the publisher's tests' business.)
	srv.Stop()
	read := d.metrics()["sessionpipe_tail_lines_read_total"]
	written := 0
	for _, f := range files {
		n := len(f.lines)
		appendFile(t, f.path, f.more(rng, 2000))
		written += len(f.lines) - n
	}
	natstest.CheckFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		m := d.metrics()
		if got := m["sessionpipe_tail_lines_read_total"] - read; got < int64(written) {
			return fmt.Errorf("%d of %d lines read", got, written)
		}
		if got := m["sessionpipe_publish_in_flight"]; got < int64(len(files)) {
			return fmt.Errorf("%d messages in flight", got)
		}
		return nil
	})
	start := time.Now()
	require.Equal(t, 0, d.term(), "exit code after SIGTERM with NATS down")
	require.Less(t, time.Since(start), 15*time.Second, "stop with NATS down took longer than the drain allows")
	srv.Start(t)

	// Run 3 sends the rest.
	d.start()
	obs.waitAll(t, 30*time.Second, files)
	require.Equal(t, 0, d.term(), "exit code after SIGTERM")
	require.NoError(t, obs.refresh(t.Context()))
	st := checkDelivery(t, obs.msgs, files)
	require.Equal(t, len(obs.msgs), st.must+st.copies)
}

// newTestStream creates the stream on srv and returns an observer of it
// on the test's own connection.
func newTestStream(t *testing.T, srv *natstest.Server) *observer {
	t.Helper()
	js := natstest.JetStream(t, natstest.Connect(t, srv.URL()))
	_, err := bus.EnsureStream(t.Context(), js, bus.StreamConfig{})
	require.NoError(t, err)
	return newObserver(js)
}

// buildTailer returns cmd/tailer, built once for the package's tests
// (sharedTailer).
func buildTailer(t *testing.T) string {
	t.Helper()
	return sharedTailer(t)
}

// daemon runs cmd/tailer as a subprocess, over and over on the same
// directories.
type daemon struct {
	t     *testing.T
	bin   string
	url   string
	watch string // transcripts
	state string // -state-dir
	data  string // -data-dir
	logs  *os.File

	cmd     *exec.Cmd
	exited  chan error
	metricC chan string
	metric  string // the /metrics URL of the running process
	runs    int
}

func newDaemon(t *testing.T, bin, url string) *daemon {
	d := &daemon{t: t, bin: bin, url: url, watch: t.TempDir(), state: t.TempDir(), data: t.TempDir()}
	var err error
	d.logs, err = os.Create(filepath.Join(t.TempDir(), "tailer.log"))
	require.NoError(t, err)
	t.Cleanup(func() {
		if d.cmd != nil {
			d.kill()
		}
		d.logs.Close()
		if t.Failed() {
			data, _ := os.ReadFile(d.logs.Name())
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			t.Logf("last lines of the daemon logs:\n%s", strings.Join(lines[max(0, len(lines)-60):], "\n"))
		}
	})
	return d
}

var metricsURL = regexp.MustCompile(`msg="tailer metrics" url=(\S+)`)

// start starts the daemon; it does not wait for it to be ready.
func (d *daemon) start() {
	d.t.Helper()
	require.Nil(d.t, d.cmd, "daemon already running")
	d.runs++
	fmt.Fprintf(d.logs, "TEST run %d starts\n", d.runs)
	cmd := exec.Command(d.bin,
		"-nats", d.url, "-watch", d.watch+"/**", "-state-dir", d.state, "-data-dir", d.data,
		"-metrics", "127.0.0.1:0", "-rescan", "200ms", "-drain", "2s", "-host", "crashhost", "-log-level", "debug")
	cmd.Env = []string{"HOME=" + d.data, "PATH=" + os.Getenv("PATH")}
	stderr, err := cmd.StderrPipe()
	require.NoError(d.t, err)
	require.NoError(d.t, cmd.Start())
	d.cmd, d.exited, d.metricC, d.metric = cmd, make(chan error, 1), make(chan string, 1), ""
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if m := metricsURL.FindStringSubmatch(sc.Text()); m != nil {
				d.metricC <- m[1]
			}
			fmt.Fprintf(d.logs, "%s\n", sc.Bytes())
		}
		io.Copy(io.Discard, stderr)
		d.exited <- cmd.Wait()
	}()
}

// kill stops the daemon with SIGKILL and waits for it.
func (d *daemon) kill() {
	d.t.Helper()
	require.NoError(d.t, d.cmd.Process.Signal(syscall.SIGKILL))
	d.wait(10 * time.Second)
	fmt.Fprintf(d.logs, "TEST run %d killed\n", d.runs)
}

// term stops the daemon with SIGTERM and returns its exit code. It
// waits for the daemon to be up first (its metrics address printed, its
// signal handler set): a daemon just started, whose work another run
// already did, would be ended by the signal itself, exit code -1.
func (d *daemon) term() int {
	d.t.Helper()
	d.up()
	require.NoError(d.t, d.cmd.Process.Signal(syscall.SIGTERM))
	err := d.wait(30 * time.Second)
	fmt.Fprintf(d.logs, "TEST run %d stopped: %v\n", d.runs, err)
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	require.NoError(d.t, err)
	return 0
}

// wait waits for the daemon to exit and returns what Wait said.
func (d *daemon) wait(timeout time.Duration) error {
	d.t.Helper()
	select {
	case err := <-d.exited:
		d.cmd = nil
		return err
	case <-time.After(timeout):
		d.cmd.Process.Signal(syscall.SIGQUIT) // its goroutines go to the log
		<-d.exited
		d.cmd = nil
		require.FailNow(d.t, "daemon did not exit", "within %v", timeout)
		return nil
	}
}

// behind returns how many bytes of the followed files lie past their
// saved checkpoints (files without one count whole).
func (d *daemon) behind() int64 {
	d.t.Helper()
	cp, err := OpenCheckpoints(d.state)
	require.NoError(d.t, err)
	states, err := cp.Load()
	require.NoError(d.t, err)
	offsets := make(map[string]int64)
	for _, s := range states {
		offsets[s.Path] = s.Offset
	}
	var n int64
	err = filepath.WalkDir(d.watch, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		n += max(info.Size()-offsets[path], 0)
		return nil
	})
	require.NoError(d.t, err)
	return n
}

// waitEntriesSent waits until the running daemon has handed want
// entries to the publisher (in batch messages or alone).
func (d *daemon) waitEntriesSent(want int64) {
	d.t.Helper()
	natstest.CheckFor(d.t, 10*time.Second, 20*time.Millisecond, func() error {
		m := d.metrics()
		if sent := m["sessionpipe_tail_entries_sent_total"]; sent != want {
			return fmt.Errorf("%d entries sent (in %d messages), want %d", sent, m["sessionpipe_tail_messages_sent_total"], want)
		}
		return nil
	})
}

// up waits until the running daemon has printed its metrics address.
func (d *daemon) up() {
	d.t.Helper()
	if d.metric == "" {
		select {
		case d.metric = <-d.metricC:
		case <-time.After(30 * time.Second):
			require.FailNow(d.t, "the daemon did not print its metrics address")
		}
	}
}

// metrics scrapes the running daemon's /metrics.
func (d *daemon) metrics() map[string]int64 {
	d.t.Helper()
	d.up()
	ctx, cancel := context.WithTimeout(d.t.Context(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.metric, nil)
	require.NoError(d.t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(d.t, err)
	defer resp.Body.Close()
	require.Equal(d.t, http.StatusOK, resp.StatusCode)
	out := make(map[string]int64)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ') // label values may hold spaces
		if i < 0 || strings.HasPrefix(line, "#") {
			continue
		}
		name, value := line[:i], line[i+1:]
		// Prometheus writes a value as the shortest float: 1e+06 is a
		// count too. Every sessionpipe_ count is whole.
		v, err := strconv.ParseFloat(value, 64)
		require.NoError(d.t, err, "metric %s", name)
		if v != math.Trunc(v) || math.Abs(v) >= 1<<53 {
			require.False(d.t, strings.HasPrefix(name, "sessionpipe_") && !strings.Contains(name, "_seconds"), "metric %s = %s is not a count", name, value)
			continue
		}
		out[name] = int64(v)
	}
	require.NoError(d.t, sc.Err())
	return out
}

// A second tailer process on a state directory in use refuses to start,
// exits non-zero and names the process that holds it; the first goes on.
func TestTailer_DaemonSecondOnStateDir(t *testing.T) {
	t.Parallel()
	srv := natstest.RunServer(t)
	obs := newTestStream(t, srv)
	bin := buildTailer(t)
	d := newDaemon(t, bin, srv.URL())
	f := newTFile("o1", "owner", filepath.Join(d.watch, "o1.jsonl"))
	createFile(t, f.path, f.header())
	d.start()
	obs.waitAll(t, 30*time.Second, []*tfile{f})

	cmd := exec.Command(bin, "-nats", srv.URL(), "-watch", d.watch, "-state-dir", d.state, "-data-dir", t.TempDir(),
		"-metrics", "", "-host", "crashhost")
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "the second tailer must fail:\n%s", out)
	require.NotZero(t, exit.ExitCode())
	require.Contains(t, string(out), d.state)
	require.Contains(t, string(out), fmt.Sprintf("by process %d", d.cmd.Process.Pid))

	appendFile(t, f.path, f.more(rand.New(rand.NewPCG(1, 1)), 3))
	obs.waitAll(t, 30*time.Second, []*tfile{f})
	require.Equal(t, 0, d.term())
}
