package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/browsertest"
	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
)

// TestREADME_FirstCommand runs the README's first command as a newcomer
// would, on a fresh clone of the committed tree, with a HOME of its own
// (no agent files, no sessionpipe state): the dashboard it serves shows
// the samples' spend in headless Chromium, non-zero, and the DuckDB
// command it prints gives sessions with a cost. Two changes to the
// command as written, both to run beside other tests: the data directory
// is the test's own instead of /tmp/sessionpipe-demo, and -http names a
// free port before the path. (The README's second command is the test
// suite itself: CI runs it as written.)
func TestREADME_FirstCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a fresh clone")
	}
	chromium := browsertest.Chromium(t)
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	first := regexp.MustCompile(`(?m)^    (go run \./cmd/sessionpipe run .*)$`).FindSubmatch(readme)
	require.NotNil(t, first, "the README's first command")
	args := strings.Fields(string(first[1]))
	require.Equal(t, []string{"go", "run", "./cmd/sessionpipe", "run", "-data-dir"}, args[:5])
	require.Equal(t, "testdata/corpus", args[len(args)-1])

	// A fresh clone of what is committed.
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	clone := filepath.Join(t.TempDir(), "sessionpipe")
	out, err := exec.Command("git", "clone", "-q", "--no-hardlinks", strings.TrimSpace(string(root)), clone).CombinedOutput()
	require.NoError(t, err, "%s", out)

	data := filepath.Join(t.TempDir(), "demo")
	args[5] = data
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	args = append(args[:len(args)-1], "-http", addr, args[len(args)-1])

	// A newcomer's environment: a HOME of their own; Go's caches stay
	// where they are (the first build would otherwise take minutes).
	env := append(os.Environ(), "HOME="+t.TempDir())
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		v, err := exec.Command("go", "env", k).Output()
		require.NoError(t, err)
		env = append(env, k+"="+strings.TrimSpace(string(v)))
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir, cmd.Env = clone, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // go run's child too
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
	cmd.WaitDelay = time.Minute
	// The banner goes to stderr, with the log; stdout has nothing.
	stderrPipe, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	stopped := false
	defer func() {
		if !stopped {
			cancel()
			cmd.Wait()
		}
	}()
	var (
		mu     sync.Mutex
		lines  []string
		banner = make(chan struct{})
	)
	go func() {
		sc := bufio.NewScanner(stderrPipe)
		seen := false
		for sc.Scan() {
			mu.Lock()
			lines = append(lines, sc.Text())
			mu.Unlock()
			if !seen && strings.Contains(sc.Text(), "DuckDB") {
				seen = true
				close(banner)
			}
		}
	}()
	stderr := func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(lines, "\n")
	}
	select { // the first build compiles for a while
	case <-banner:
	case <-time.After(10 * time.Minute):
		t.Fatalf("no banner after 10 minutes:\n%s", stderr())
	}
	text := stderr()
	require.Contains(t, text, "dashboard http://"+addr+"/", text)
	duck := regexp.MustCompile(`duckdb -init <\((.*) duckdb (\S+)\)`).FindStringSubmatch(text)
	require.NotNil(t, duck, "the banner's DuckDB command:\n%s", text)
	require.Equal(t, filepath.Join(data, "parquet"), duck[2])

	// The dashboard shows the samples' spend.
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.WindowSize(1400, 1000), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelA := chromedp.NewExecAllocator(t.Context(), opts...)
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate("http://"+addr+"/")))
	var spend string
	natstest.CheckFor(t, 3*time.Minute, 200*time.Millisecond, func() error {
		s, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.body.dataset.loadedUsage ? document.getElementById('spend').textContent : ''`))
		if err != nil {
			return err
		}
		if s == "" || s == "$0.00" || s == "–" {
			// The page reloads its numbers as entries arrive.
			return fmt.Errorf("spend on the page: %q", s)
		}
		spend = s
		return nil
	})
	t.Logf("the dashboard shows %s", spend)
	if dir := os.Getenv("SESSIONPIPE_SCREENSHOTS"); dir != "" {
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "readme-first-command.png"), png, 0o644))
	}

	// The DuckDB command: its script, run by DuckDB, has the sessions.
	natstest.CheckFor(t, 3*time.Minute, time.Second, func() error {
		script := exec.Command("go", "run", "./cmd/sessionpipe", "duckdb", duck[2])
		script.Dir, script.Env = clone, env
		out, err := script.Output()
		if err != nil {
			return fmt.Errorf("sessionpipe duckdb: %w", err)
		}
		db := openDuckDB(t)
		defer db.Close()
		if _, err := db.Exec(string(out)); err != nil {
			return err
		}
		var n int
		var cost float64
		if err := db.QueryRow("SELECT count(*), coalesce(sum(cost_usd), 0) FROM sessions").Scan(&n, &cost); err != nil {
			return err
		}
		if n == 0 || cost == 0 {
			return fmt.Errorf("%d sessions, $%.2f in Parquet", n, cost)
		}
		return nil
	})

	// Ctrl-C (SIGINT to the terminal's process group) stops it cleanly.
	// `go run` itself then exits 1 whatever the program's status, so the
	// clean stop is read from the log.
	require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGINT))
	stopped = true
	cmd.Wait()
	log := stderr()
	require.Contains(t, log, "embedded nats stopped")
	for _, line := range strings.Split(log, "\n") {
		// The embedded server's default port may be another test's: it
		// then takes a free one, and says so.
		if strings.Contains(line, "level=ERROR") && !strings.Contains(line, "Error listening on port") {
			t.Errorf("an error in the log: %s", line)
		}
	}
}
