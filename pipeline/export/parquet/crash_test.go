package parquet_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Environment of the crash child: the test binary run again, writing
// genEntries(crashEntries) into the directory and stopping dead (waiting
// for SIGKILL) at the given commit step.
const (
	envCrashDir  = "EXPORT_CRASH_DIR"
	envCrashStep = "EXPORT_CRASH_STEP" // written, renamed or recorded
	envCrashAt   = "EXPORT_CRASH_AT"   // at that step of the n-th commit
	crashEntries = 3000
)

// envTermDir runs the test binary as a writer that buffers entries and
// commits them when SIGTERM comes, as an exporter daemon does.
const envTermDir = "EXPORT_TERM_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(envCrashDir); dir != "" {
		crashChild(dir, os.Getenv(envCrashStep), os.Getenv(envCrashAt))
		return
	}
	if dir := os.Getenv(envTermDir); dir != "" {
		termChild(dir)
		return
	}
	os.Exit(m.Run())
}

// termChild writes crashEntries with the default part size and age (so
// nothing is committed yet), says "ready", and on SIGTERM closes the
// writer, prints the sequence it may acknowledge and exits 0.
func termChild(dir string) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	w, err := parquet.NewWriter(parquet.Config{Dir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, "term child:", err)
		os.Exit(2)
	}
	entries := genEntries(crashEntries)
	for i := range entries {
		if err := w.Write(ctx, &entries[i], uint64(i+1)); err != nil {
			fmt.Fprintln(os.Stderr, "term child:", err)
			os.Exit(2)
		}
	}
	fmt.Println("ready", w.Committed())
	<-ctx.Done()
	if err := w.Close(context.WithoutCancel(ctx)); err != nil {
		fmt.Fprintln(os.Stderr, "term child:", err)
		os.Exit(2)
	}
	fmt.Println("committed", w.Committed())
	os.Exit(0)
}

// TestWriter_SIGTERM: a writer whose process gets SIGTERM commits every
// open part before it exits, and may then acknowledge everything.
func TestWriter_SIGTERM(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envTermDir+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	r := bufio.NewReader(out)
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready 0\n", line, "nothing committed before the signal")
	_, parts := scan(t, dir)
	require.Empty(t, parts)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	line, err = r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("committed %d\n", crashEntries), line)
	require.NoError(t, cmd.Wait())

	var n, distinct int64
	require.NoError(t, openDuckDB(t).QueryRow(`SELECT count(*), count(DISTINCT seq) FROM `+glob(dir)).Scan(&n, &distinct))
	require.Equal(t, []int64{crashEntries, crashEntries}, []int64{n, distinct})
}

// crashConfig makes parts small, so that writing crashEntries commits
// many files in several partitions.
func crashConfig(dir string) parquet.Config {
	return parquet.Config{Dir: dir, PartBytes: 64 << 10, MemoryBytes: 160 << 10, RowGroupRows: 100}
}

// crashChild writes the entries and, at the chosen step of the chosen
// commit, prints the step and blocks until the parent kills it.
func crashChild(dir, step, at string) {
	n, err := strconv.Atoi(at)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(2)
	}
	w, err := parquet.NewWriter(crashConfig(dir))
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(2)
	}
	seen := 0
	parquet.SetHook(w, func(s string) {
		if s != step {
			return
		}
		if seen++; seen == n {
			fmt.Println(s)
			os.Stdout.Sync()
			select {} // until SIGKILL
		}
	})
	entries := genEntries(crashEntries)
	ctx := context.Background()
	for i := range entries {
		if err := w.Write(ctx, &entries[i], uint64(i+1)); err != nil {
			fmt.Fprintln(os.Stderr, "crash child:", err)
			os.Exit(2)
		}
	}
	w.Close(ctx)
	fmt.Fprintln(os.Stderr, "crash child: never reached", step, at)
	os.Exit(3)
}

// genEntries returns n entries spread over 3 hosts, 2 formats, 2 dates
// and 12 sessions, with some text: the same on every call.
func genEntries(n int) []schema.Entry {
	entries := make([]schema.Entry, n)
	base := time.Date(2026, 5, 1, 23, 0, 0, 0, time.UTC)
	for i := range entries {
		s := i % 12
		entries[i] = schema.Entry{
			Format:    []schema.Format{schema.FormatClaudeCode, schema.FormatCodex}[s%2],
			Host:      fmt.Sprintf("host-%d", s%3),
			Path:      fmt.Sprintf("/p/%d.jsonl", s),
			Offset:    int64(i * 100),
			Line:      int64(i/12 + 1),
			SessionID: fmt.Sprintf("session-%02d", s),
			EntryID:   fmt.Sprintf("entry-%05d", i),
			TS:        base.Add(time.Duration(i) * time.Second), // crosses midnight: 2 dates
			Kind:      schema.KindMessage,
			Role:      schema.RoleUser,
			Text:      strings.Repeat(fmt.Sprintf("line %d of session %d. ", i, s), 3),
		}
	}
	return entries
}

// TestWriter_CrashRecovery kills a writer with SIGKILL at each step of a
// commit (temporary file written, renamed, recorded in the manifest), then
// opens the directory again and redelivers every entry from the start, as
// a consumer whose acknowledgements were lost would: no temporary file is
// left, every committed file is listed once, and every entry is in exactly
// one committed file.
func TestWriter_CrashRecovery(t *testing.T) {
	for _, tc := range []struct {
		step string
		at   int
	}{
		{"written", 1}, {"written", 4},
		{"renamed", 1}, {"renamed", 4},
		{"recorded", 1}, {"recorded", 4},
	} {
		t.Run(fmt.Sprintf("%s#%d", tc.step, tc.at), func(t *testing.T) {
			dir := t.TempDir()
			killAt(t, dir, tc.step, tc.at)

			// What the kill left, before recovery.
			tmps, parts := scan(t, dir)
			man, err := parquet.ReadManifest(dir)
			require.NoError(t, err)
			// A commit may take several parts (the memory budget frees a
			// quarter of itself at once): "written" comes once per file,
			// "renamed" and "recorded" once per commit.
			switch tc.step {
			case "written":
				require.NotEmpty(t, tmps, "the commit's files written so far are temporary files")
				require.Equal(t, tc.at, len(tmps)+len(man.Files), "every file written is recorded or a temporary file")
			case "renamed":
				require.Empty(t, tmps)
				require.Greater(t, len(parts), len(man.Files), "the renamed files are on disk, not in the manifest")
				require.GreaterOrEqual(t, len(man.Files), tc.at-1)
			case "recorded":
				require.GreaterOrEqual(t, len(man.Files), tc.at)
				require.Len(t, parts, len(man.Files))
			}

			w := mustWriter(t, crashConfig(dir))
			tmps, parts = scan(t, dir)
			require.Empty(t, tmps)
			listed := map[string]bool{}
			for _, f := range w.Manifest() {
				require.False(t, listed[f.Path], "listed twice: %s", f.Path)
				listed[f.Path] = true
			}
			require.ElementsMatch(t, keys(listed), parts, "files on disk = files in the manifest")

			writeAll(t, w, genEntries(crashEntries))
			_, parts = scan(t, dir)
			man, err = parquet.ReadManifest(dir)
			require.NoError(t, err)
			paths := map[string]bool{}
			for _, f := range man.Files {
				require.False(t, paths[f.Path], "listed twice: %s", f.Path)
				paths[f.Path] = true
			}
			require.ElementsMatch(t, keys(paths), parts)

			var rows, seqs, minSeq, maxSeq int64
			require.NoError(t, openDuckDB(t).QueryRow(`SELECT count(*), count(DISTINCT seq), min(seq), max(seq) FROM `+glob(dir)).
				Scan(&rows, &seqs, &minSeq, &maxSeq))
			require.Equal(t, []int64{crashEntries, crashEntries, 1, crashEntries}, []int64{rows, seqs, minSeq, maxSeq})
		})
	}
}

// killAt runs the crash child on dir and kills it with SIGKILL once it
// reports the step.
func killAt(t *testing.T, dir, step string, at int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envCrashDir+"="+dir, envCrashStep+"="+step, envCrashAt+"="+strconv.Itoa(at))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "the child must reach %s #%d", step, at)
	require.Equal(t, step+"\n", line)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	err = cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	require.Equal(t, syscall.SIGKILL, exit.Sys().(syscall.WaitStatus).Signal())
}
