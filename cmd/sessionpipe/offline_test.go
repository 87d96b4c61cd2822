package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
)

func userLine(session, uuid string) string {
	return fmt.Sprintf(`{"type":"user","uuid":%q,"sessionId":%q,"timestamp":"2026-03-01T08:00:00.000Z","message":{"role":"user","content":"hi"}}`, uuid, session)
}

func writeTranscript(tb testing.TB, path, content string) string {
	tb.Helper()
	require.NoError(tb, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(tb, os.WriteFile(path, []byte(content), 0o644))
	return path
}

// runSessions runs `sessionpipe sessions` in process, failing the test if
// it does not return (a FIFO would block it in open()).
func runCommand(tb testing.TB, args ...string) (code int, stdout, stderr string) {
	tb.Helper()
	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- run(tb.Context(), args, &out, &errOut) }()
	select {
	case code = <-done:
	case <-time.After(5 * time.Minute):
		tb.Fatalf("sessionpipe %s does not return", strings.Join(args, " "))
	}
	return code, out.String(), errOut.String()
}

// A half-written last line counts only once it is complete, offline as
// live; the summary says it is pending.
func TestSessions_IncompleteLastLineNotCounted(t *testing.T) {
	path := writeTranscript(t, filepath.Join(t.TempDir(), "s.jsonl"),
		userLine("s1", "u1")+"\n"+userLine("s1", "u2")+"\n"+userLine("s1", "u3"))
	code, stdout, stderr := runCommand(t, "sessions", "--json", path)
	require.Equal(t, exitOK, code, stderr)
	var all []index.Session
	require.NoError(t, json.Unmarshal([]byte(stdout), &all))
	require.Len(t, all, 1)
	require.Equal(t, int64(2), all[0].UserMessages)
	require.Contains(t, stderr, "; 1 incomplete last line not counted")
	require.NotContains(t, stderr, "bad line")
}

func TestSessions_MaxLineBytes(t *testing.T) {
	long := `{"type":"user","uuid":"u0","sessionId":"s1","message":{"role":"user","content":"` + strings.Repeat("x", 4000) + `"}}`
	path := writeTranscript(t, filepath.Join(t.TempDir(), "s.jsonl"), long+"\n"+userLine("s1", "u1")+"\n")
	code, stdout, stderr := runCommand(t, "sessions", "--max-line-bytes", "1024", path)
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stderr, fmt.Sprintf("sessionpipe: bad line: %s:1: offset 0: line of %d bytes exceeds -max-line-bytes 1024\n", path, len(long)))
	require.Contains(t, stdout, "TOTAL (1)")

	code, _, stderr = runCommand(t, "entries", "--max-line-bytes", "0", path)
	require.Equal(t, exitUsage, code, stderr)
}

func TestSessions_OnlyRegularFiles(t *testing.T) {
	dir := t.TempDir()
	writeTranscript(t, filepath.Join(dir, "s.jsonl"), userLine("s1", "u1")+"\n")
	fifo := filepath.Join(dir, "fifo.jsonl")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(dir, "zero.jsonl")))

	code, stdout, stderr := runCommand(t, "sessions", dir)
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "TOTAL (1)")
	require.Contains(t, stderr, "; 2 skipped (not regular files)")

	for _, path := range []string{fifo, filepath.Join(dir, "zero.jsonl"), "/dev/zero"} {
		code, stdout, stderr = runCommand(t, "sessions", path)
		require.Equal(t, exitError, code, path)
		require.Empty(t, stdout)
		require.Contains(t, stderr, "not a regular file", path)
	}
}

func TestSessions_GlobPath(t *testing.T) {
	dir := t.TempDir()
	writeTranscript(t, filepath.Join(dir, "p1", "a.jsonl"), userLine("s1", "u1")+"\n")
	writeTranscript(t, filepath.Join(dir, "p2", "deep", "b.jsonl"), userLine("s2", "u1")+"\n")
	code, stdout, stderr := runCommand(t, "sessions", filepath.Join(dir, "**", "*.jsonl"))
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "TOTAL (2)")

	code, _, stderr = runCommand(t, "sessions", filepath.Join(dir, "**", "*.parquet"))
	require.Equal(t, exitError, code)
	require.Contains(t, stderr, "no file matches")
}

// buildSessionpipe returns the command, built once for the package's
// tests in a directory others can read (sharedBinary).
func buildSessionpipe(tb testing.TB) string {
	tb.Helper()
	return sharedBinary(tb)
}

// A path the user named that cannot be read is an error exit, not an
// empty table. The command runs as an unprivileged user when the test
// runs as root, for whom permissions do not apply.
func TestSessions_PermissionDeniedIsAnError(t *testing.T) {
	bin := buildSessionpipe(t)
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	require.NoError(t, os.Chmod(filepath.Dir(dir), 0o755))
	path := writeTranscript(t, filepath.Join(dir, "s.jsonl"), userLine("s1", "u1")+"\n")
	require.NoError(t, os.Chmod(path, 0o000))

	cmd := exec.Command(bin, "sessions", "-q", path)
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "stdout: %s", stdout.String())
	require.Equal(t, exitError, exit.ExitCode())
	require.Contains(t, stderr.String(), "permission denied")
	require.Empty(t, stdout.String())
}

// SIGTERM stops `sessionpipe sessions` promptly in the middle of a huge
// line (a sparse file of 1 TB without a newline).
func TestSessions_SIGTERMStopsPromptly(t *testing.T) {
	bin := buildSessionpipe(t)
	path := filepath.Join(t.TempDir(), "huge.jsonl")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(1<<40))
	require.NoError(t, f.Close())

	cmd := exec.Command(bin, "sessions", "-q", path)
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	exited := false
	t.Cleanup(func() {
		if !exited {
			cmd.Process.Kill()
			<-done
		}
	})
	// Wait until it is well into the line.
	natstest.CheckFor(t, 20*time.Second, 10*time.Millisecond, func() error {
		if n := readBytes(cmd.Process.Pid); n < 64<<20 {
			return fmt.Errorf("read %d bytes so far", n)
		}
		return nil
	})
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-done:
		exited = true
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit)
		require.Equal(t, exitError, exit.ExitCode(), "stopped by its context, not killed")
	case <-time.After(30 * time.Second):
		// A ceiling for a loaded machine (5 s failed at a load average
		// of 20): reading the rest of the line takes minutes.
		t.Fatal("SIGTERM did not stop sessionpipe sessions")
	}
}

// readBytes returns the bytes process pid has read (rchar of
// /proc/<pid>/io), or 0.
func readBytes(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// pi/OpenClaw assistant messages count per record: two sessions whose
// Ollama replies all carry responseId chatcmpl-14 keep every reply, and
// OpenClaw's own delivery-mirror and gateway-injected messages are none.
func TestSessions_PiAssistantMessages(t *testing.T) {
	data, err := os.ReadFile("../../pipeline/formats/pi/testdata/openclaw-synthetic/input.jsonl")
	require.NoError(t, err)
	dir := t.TempDir()
	const first, second = "5b1c0d2e-7f3a-4c5b-9d6e-0f1a2b3c4d5e", "6c2d1e3f-8a4b-4d6c-8e7f-1a2b3c4d5e6f"
	writeTranscript(t, filepath.Join(dir, first+".jsonl"), string(data))
	// Another session: other record ids, the same provider response ids.
	other := strings.NewReplacer(first, second, "6f2bd1b4", "e6f2bd1b", "9a533f48", "e9a533f4", "1c2d3e4f", "e1c2d3e4",
		"2d3e4f5a", "e2d3e4f5", "3e4f5a6b", "e3e4f5a6", "4f5a6b7c", "e4f5a6b7",
		"1772975007057", "1772985007057", "1772975042130", "1772985042130").Replace(string(data))
	writeTranscript(t, filepath.Join(dir, second+".jsonl"), other)

	code, stdout, stderr := runCommand(t, "sessions", "--json", "-q", dir)
	require.Equal(t, exitOK, code, stderr)
	var all []index.Session
	require.NoError(t, json.Unmarshal([]byte(stdout), &all))
	require.Len(t, all, 2)
	for _, s := range all {
		require.Equal(t, int64(2), s.UserMessages, s.SessionID)
		require.Equal(t, int64(2), s.AssistantMessages, s.SessionID)
		require.Equal(t, int64(2), s.APICalls, s.SessionID)
		require.Equal(t, int64(812+23+851+4), s.TotalTokens, s.SessionID)
	}
}

// Token counters outside 0..10^12 are located bad lines; the entry counts
// everything but its usage, and no sum wraps.
func TestSessions_ImplausibleCountersReported(t *testing.T) {
	var b strings.Builder
	b.WriteString(userLine("s1", "u1") + "\n")
	for i, n := range []string{"4611686018427387904", "4611686018427387904", "4611686018427387904", "9223372036854775807", "12"} {
		fmt.Fprintf(&b, `{"type":"assistant","uuid":"a%d","sessionId":"s1","timestamp":"2026-03-01T08:00:0%dZ","message":{"id":"msg_%d","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"x"}],"usage":{"input_tokens":%s,"output_tokens":3}},"requestId":"req_%d"}`+"\n", i, i+1, i, n, i)
	}
	path := writeTranscript(t, filepath.Join(t.TempDir(), "s1.jsonl"), b.String())
	code, stdout, stderr := runCommand(t, "sessions", "--json", path)
	require.Equal(t, exitOK, code, stderr)
	var all []index.Session
	require.NoError(t, json.Unmarshal([]byte(stdout), &all))
	require.Len(t, all, 1)
	s := all[0]
	require.Equal(t, int64(5), s.AssistantMessages, "the entries stay")
	require.Equal(t, int64(1), s.APICalls, "only the plausible call has usage")
	require.Equal(t, int64(12+3), s.TotalTokens)
	require.Less(t, s.CostUSD, 0.01)
	require.Equal(t, 4, strings.Count(stderr, "token counter outside 0..10^12: usage.input_tokens"), stderr)
	require.Contains(t, stderr, "; 4 bad lines")
}

// The offline commands share their flags and their checks.
func TestOffline_SharedFlags(t *testing.T) {
	path := writeTranscript(t, filepath.Join(t.TempDir(), "s.jsonl"), userLine("s1", "u1")+"\n")
	for _, cmd := range []string{"sessions", "entries"} {
		t.Run(cmd, func(t *testing.T) {
			if cmd == "entries" { // sessions reads the well-known locations: TestSessions_WellKnownLocations
				code, _, stderr := runCommand(t, cmd)
				require.Equal(t, exitUsage, code, stderr)
				require.True(t, strings.HasPrefix(stderr, "Usage: sessionpipe "+cmd+" [flags] PATH..."), stderr)
				require.True(t, strings.HasSuffix(stderr, "sessionpipe: "+cmd+": no PATH given\n"), stderr)
			}

			code, _, stderr := runCommand(t, cmd, "--max-line-bytes", "-1", path)
			require.Equal(t, exitUsage, code, stderr)
			require.Equal(t, "sessionpipe: "+cmd+": -max-line-bytes -1 is not positive\n", stderr)

			code, _, stderr = runCommand(t, cmd, "-h")
			require.Equal(t, exitOK, code, stderr)
			for _, flag := range []string{"-errors int", "-host string", "-max-line-bytes int", "-q\t"} {
				require.Contains(t, stderr, "  "+flag, "flags of %s", cmd)
			}

			code, stdout, stderr := runCommand(t, cmd, "-q", "-errors", "0", "-host", "h1", path)
			require.Equal(t, exitOK, code, stderr)
			require.Empty(t, stderr, "-q: no summary")
			require.NotEmpty(t, stdout)
			if cmd == "entries" {
				require.Contains(t, stdout, `"host":"h1"`)
			}
		})
	}
}
