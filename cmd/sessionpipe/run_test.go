package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/internal/testutil/testcorpus"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
)

// The live path (files → tailer → JetStream → aggregates) gives exactly
// the numbers of the offline path (files → aggregates), and running again
// on the same state changes nothing: nothing lost, nothing doubled.
func TestRun_OnceMatchesSessions(t *testing.T) {
	requireLiveEqualsOffline(t, corpus, 2)
}

// Generated sessions of every format with resumed and forked copies, and
// Claude Code compaction and side-question files that replay hundreds of
// main-transcript records with the same ids as sidechain lines: the stream
// used to drop the main file's records as duplicates of the replays when
// a replay file was published first.
func TestRun_OnceMatchesSessionsWithReplays(t *testing.T) {
	requireLiveEqualsOffline(t, testcorpus.Generate(t, 2<<20, 11), 1)
}

// requireLiveEqualsOffline runs `run -once -json` rounds times on one data
// directory and requires the offline sessions each time.
func requireLiveEqualsOffline(t *testing.T, dir string, rounds int) {
	t.Helper()
	offline := ours(t, dir)
	corpus := dir
	data := t.TempDir()
	for round := range rounds {
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), []string{"run", "-once", "-json", "-data-dir", data, "-nats-port", "-1", "-http", "", "-metrics", "127.0.0.1:0", corpus}, &stdout, &stderr)
		require.Equal(t, exitOK, code, "round %d: %s", round, stderr.String())
		var live []index.Session
		require.NoError(t, json.Unmarshal(stdout.Bytes(), &live), "round %d", round)
		require.Equal(t, len(offline), len(live), "round %d", round)
		require.Equal(t, offline, live, "round %d", round)
	}
}

// The guarantee past the duplicate window: a tailer that re-sends
// acknowledged entries later than the stream's duplicate window (a
// laptop that slept through a crash and restarts the next day; here a
// lost checkpoint file and a 1 s window) stores them a second time, and
// no duplicate reaches the numbers users read: aggregation is idempotent
// per entry.
func TestRun_DuplicatesPastTheWindowCountOnce(t *testing.T) {
	dir := testcorpus.Generate(t, 1<<20, 5)
	offline := ours(t, dir)
	data := t.TempDir()
	args := []string{"run", "-once", "-json", "-data-dir", data, "-nats-port", "-1", "-http", "", "-metrics", "", "-dup-window", "1s", dir}
	var stored [2]uint64
	for round := range 2 {
		var stdout, stderr bytes.Buffer
		require.Equal(t, exitOK, run(t.Context(), args, &stdout, &stderr), "round %d: %s", round, stderr.String())
		var live []index.Session
		require.NoError(t, json.Unmarshal(stdout.Bytes(), &live))
		require.Equal(t, offline, live, "round %d", round)
		stored[round] = streamMsgs(t, data)
		if round == 0 {
			// Past the window, the checkpoints gone: every line is read
			// and sent again, and stored again.
			done := time.Now()
			natstest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
				if time.Since(done) < 1500*time.Millisecond {
					return errors.New("still inside the duplicate window")
				}
				return nil
			})
			require.NoError(t, os.Remove(filepath.Join(data, "tailer", "checkpoints.json")))
		}
	}
	require.Equal(t, 2*stored[0], stored[1], "the stream holds every message twice: the check above was not vacuous")
}

// streamMsgs returns how many messages the stream in a stopped run's data
// directory holds.
func streamMsgs(t *testing.T, data string) uint64 {
	t.Helper()
	var n uint64
	withStream(t, data, func(s jetstream.Stream) {
		info, err := s.Info(t.Context())
		require.NoError(t, err)
		n = info.State.Msgs
	})
	return n
}

// withStream calls fn with the stream in a stopped run's data directory,
// on an embedded server started for the call.
func withStream(t *testing.T, data string, fn func(jetstream.Stream)) {
	t.Helper()
	e, err := bus.StartEmbedded(t.Context(), bus.EmbeddedConfig{StoreDir: filepath.Join(data, "jetstream")})
	require.NoError(t, err)
	defer func() { require.NoError(t, e.Shutdown(context.WithoutCancel(t.Context()))) }()
	s, err := natstest.JetStream(t, e.Conn()).Stream(t.Context(), bus.DefaultStream)
	require.NoError(t, err)
	fn(s)
}

// Stub files beside a real session (a lone teleported-from line, only
// title and agent-name lines, a file that tells no format) do not keep
// `run -once` waiting for more lines: it returns as soon as the real
// session is counted, well before the 30 s a growing file would be given.
func TestRun_OnceDoesNotWaitOnStubs(t *testing.T) {
	dir := t.TempDir()
	real, err := os.ReadFile(filepath.Join(corpus, "claude-code", "claude-code-transcripts", "sample_session.jsonl"))
	require.NoError(t, err)
	for name, content := range map[string]string{
		"real.jsonl":       string(real),
		"teleported.jsonl": `{"type":"teleported-from","sessionId":"8c0e0a7e-0000-4000-8000-000000000001","from":"web"}` + "\n",
		"titled.jsonl":     `{"type":"ai-title","sessionId":"8c0e0a7e-0000-4000-8000-000000000002","aiTitle":"Fix the build"}` + "\n" + `{"type":"agent-name","sessionId":"8c0e0a7e-0000-4000-8000-000000000002","agentName":"builder"}` + "\n",
		"unknown.jsonl":    `{"hello":"world"}` + "\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	offline := ours(t, dir)
	require.Len(t, offline, 1)
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"run", "-once", "-json", "-data-dir", t.TempDir(), "-nats-port", "-1", "-http", "", "-metrics", "", dir}, &stdout, &stderr)
	require.NoError(t, ctx.Err(), "run -once waited on the stub files")
	require.Equal(t, exitOK, code, stderr.String())
	var live []index.Session
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &live))
	require.Equal(t, offline, live)
}

// A stage that fails stops the others and the command: here the tailer
// cannot read its checkpoints. Before, the indexer and the exporter went
// on serving numbers that no longer grew, and the process ran until
// Ctrl-C with the failure only in its log.
func TestRun_StageFailureStopsTheOthers(t *testing.T) {
	data := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(data, "tailer"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(data, "tailer", "checkpoints.json"), []byte("{not json"), 0o644))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"run", "-data-dir", data, "-nats-port", "-1", "-http", "127.0.0.1:0", "-metrics", "", corpus}, &stdout, &stderr)
	require.NoError(t, ctx.Err(), "run returned by itself, not at the test's deadline")
	require.NotEqual(t, exitOK, code)
	require.Contains(t, stderr.String(), "checkpoint")
}

// A resumed Claude Code session whose file begins with verbatim copies of
// another session's lines (same uuids, same session id): before batch
// messages the stream's duplicate window kept whichever copy the tailer
// read first, and the live turns depended on the order the files were
// read in (1, 2 or 3 over runs of the same two files). Both copies now
// reach the indexer, whose attribution rules decide: live equals offline
// whatever the order.
func TestRun_ResumedCopiesWhateverTheOrder(t *testing.T) {
	sample, err := os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", "claude-code", "claude-code-transcripts", "sample_session.jsonl"))
	require.NoError(t, err)
	dir := t.TempDir()
	orig := filepath.Join(dir, "a", "test-session-id.jsonl")
	resumed := filepath.Join(dir, "b", "resumed-session.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(orig), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Dir(resumed), 0o755))
	require.NoError(t, os.WriteFile(orig, sample, 0o644))
	more := `{"type":"user","timestamp":"2025-12-24T11:00:00.000Z","sessionId":"resumed-session","cwd":"/project","message":{"role":"user","content":"And a third one"},"uuid":"msg-101"}` + "\n" +
		`{"type":"assistant","timestamp":"2025-12-24T11:00:05.000Z","sessionId":"resumed-session","requestId":"req_101","message":{"id":"msg_101","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Done."}],"usage":{"input_tokens":10,"output_tokens":5}},"uuid":"msg-102"}` + "\n"
	require.NoError(t, os.WriteFile(resumed, append(append([]byte(nil), sample...), more...), 0o644))

	offline := ours(t, dir)
	require.Len(t, offline, 2)
	for _, order := range [][]string{{orig, resumed}, {resumed, orig}, {orig, resumed}, {resumed, orig}} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"run", "-once", "-json", "-data-dir", t.TempDir(), "-nats-port", "-1", "-http", "", "-metrics", ""}, order...)
		require.Equal(t, exitOK, run(t.Context(), args, &stdout, &stderr), stderr.String())
		var live []index.Session
		require.NoError(t, json.Unmarshal(stdout.Bytes(), &live))
		require.Equal(t, offline, live, "files read in the order %v", order)
	}
}

// The banner's commands name this binary as the user can run it again:
// "sessionpipe" when it is the one on the PATH, "go run ./cmd/sessionpipe"
// for the binary go run built, else its path.
func TestRun_BannerCommandName(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "sessionpipe")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755))
	require.Equal(t, "sessionpipe", commandName(bin, bin))
	require.Equal(t, "go run ./cmd/sessionpipe", commandName("/tmp/go-build1234/b001/exe/sessionpipe", ""))
	require.Equal(t, "'/opt/my tools/sessionpipe'", commandName("/opt/my tools/sessionpipe", bin))
}

// `run` commits the end of its backfill to Parquet within seconds, not a
// part age (5 minutes) later: while it runs, the DuckDB script printed
// by `sessionpipe duckdb <data-dir>/parquet` (the banner's command)
// gives the sessions `sessionpipe sessions` gives. Before a file exists
// the script runs too, over no rows.
func TestRun_ParquetSoonAfterBackfill(t *testing.T) {
	data := t.TempDir()
	pq := filepath.Join(data, "parquet")
	require.NoError(t, os.MkdirAll(pq, 0o755))
	var out, errb bytes.Buffer
	require.Equal(t, exitOK, run(t.Context(), []string{"duckdb", pq}, &out, &errb), errb.String())
	db := openDuckDB(t)
	_, err := db.Exec(out.String())
	require.NoError(t, err, "the script over a fresh data directory")

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int, 1)
	var stdout, stderr bytes.Buffer // read once run returned
	go func() {
		done <- run(ctx, []string{"run", "-data-dir", data, "-nats-port", "-1", "-http", "", "-metrics", "", "-log-level", "warn", corpus}, &stdout, &stderr)
	}()
	defer func() {
		cancel()
		require.Equal(t, exitOK, <-done, stderr.String())
	}()
	offline := ours(t, corpus)
	start := time.Now()
	// A ceiling well under the part age: only a commit on catching up
	// can meet it.
	natstest.CheckFor(t, 2*time.Minute, 100*time.Millisecond, func() error {
		select {
		case code := <-done:
			done <- code
			return errors.New("run stopped: " + stderr.String())
		default:
		}
		out.Reset()
		errb.Reset()
		if code := run(t.Context(), []string{"duckdb", pq}, &out, &errb); code != exitOK {
			return errors.New(errb.String())
		}
		db := openDuckDB(t)
		defer db.Close()
		if _, err := db.Exec(out.String()); err != nil {
			return err
		}
		var n int
		if err := db.QueryRow("SELECT count(*) FROM sessions").Scan(&n); err != nil {
			return err
		}
		if n != len(offline) {
			return fmt.Errorf("%d sessions in Parquet, want %d", n, len(offline))
		}
		return nil
	})
	t.Logf("every session in Parquet %s after start (part age 5m)", time.Since(start).Round(100*time.Millisecond))
}

// openDuckDB opens an in-memory DuckDB on one connection (the views the
// scripts create are temporary: they live in their connection).
func openDuckDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// After `run -once` the stream holds the entries and not the original
// lines, which are in the archive (-purge-archived, on in run); the
// archive gives the files back, and the counts are those of the files.
// With -purge-archived=false the lines stay.
func TestRun_OncePurgesArchivedLines(t *testing.T) {
	dir := testcorpus.Generate(t, 2<<20, 7)
	offline := ours(t, dir)
	for _, purge := range []bool{true, false} {
		t.Run(fmt.Sprint("purge=", purge), func(t *testing.T) {
			data := t.TempDir()
			var stdout, stderr bytes.Buffer
			code := run(t.Context(), []string{"run", "-once", "-json", "-data-dir", data, "-nats-port", "-1", "-http", "", "-metrics", "",
				"-content", "full", fmt.Sprint("-purge-archived=", purge), dir}, &stdout, &stderr)
			require.Equal(t, exitOK, code, stderr.String())
			var live []index.Session
			require.NoError(t, json.Unmarshal(stdout.Bytes(), &live))
			require.Equal(t, offline, live)

			raw, entries := streamSubjects(t, data)
			require.Positive(t, entries)
			if purge {
				require.Zero(t, raw, "original lines left in the stream")
			} else {
				require.Positive(t, raw)
			}
			var restoreOut, restoreErr bytes.Buffer
			out := t.TempDir()
			require.Equal(t, exitOK, run(t.Context(), []string{"restore", "-archive", filepath.Join(data, "archive"), "-out", out}, &restoreOut, &restoreErr), restoreErr.String())
			n := 0
			require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				want, err := os.ReadFile(p)
				require.NoError(t, err)
				host, err := os.Hostname()
				require.NoError(t, err)
				got, err := os.ReadFile(filepath.Join(out, host, p))
				require.NoError(t, err, "restored %s", p)
				require.Equal(t, string(want), string(got), p)
				n++
				return nil
			}))
			require.Positive(t, n)
		})
	}
}

// streamSubjects returns how many raw and entry messages the stream of
// `run`'s data directory holds.
func streamSubjects(t *testing.T, data string) (raw, entries uint64) {
	t.Helper()
	withStream(t, data, func(s jetstream.Stream) {
		for filter, n := range map[string]*uint64{bus.RawFilter(bus.DefaultPrefix): &raw, bus.EntriesFilter(bus.DefaultPrefix): &entries} {
			info, err := s.Info(t.Context(), jetstream.WithSubjectFilter(filter))
			require.NoError(t, err)
			for _, c := range info.State.Subjects {
				*n += c
			}
		}
	})
	return raw, entries
}
