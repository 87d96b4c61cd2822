package main

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/marcboeker/go-duckdb/v2"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/export"
	"github.com/sessionpipe/sessionpipe/pipeline/export/archive"
	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
	"github.com/sessionpipe/sessionpipe/schema"
)

// buildExporter compiles this command into a temporary directory.
func buildExporter(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "exporter")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// published is what the test put on the stream: the entries, and the
// bytes of each file whose raw chunks it published.
type published struct {
	keys  map[string]bool
	files map[string][]byte // host + path → bytes
}

// publishFleet publishes n entries of several hosts, days and sessions,
// each file's raw chunk before its entries, as tailers do.
func publishFleet(t *testing.T, js jetstream.JetStream, n int) published {
	out := published{keys: map[string]bool{}, files: map[string][]byte{}}
	publishFiles(t, js, out, 0, n)
	return out
}

// publishFiles publishes n entries in files numbered from first on,
// recording them in out.
func publishFiles(t *testing.T, js jetstream.JetStream, out published, first, n int) {
	t.Helper()
	p, err := bus.NewPublisher(js, bus.PublisherConfig{})
	require.NoError(t, err)
	defer p.Close(t.Context())
	for f := first; (f-first)*perFile < n; f++ {
		host := fmt.Sprintf("host-%d", f%3)
		session := fmt.Sprintf("s%04d", f)
		path := "/home/u/.pi/agent/sessions/" + session + ".jsonl"
		ts := time.Date(2026, 11, 20+f%4, 8, 0, 0, 0, time.UTC)
		var data []byte
		entries := make([]schema.Entry, 0, perFile)
		for i := 0; i < perFile && (f-first)*perFile+i < n; i++ {
			line := fmt.Sprintf(`{"type":"message","id":"%s-%d","message":{"role":"user","content":"line %d %s"}}`+"\n", session, i, i, strings.Repeat("x", i%7*40))
			entries = append(entries, schema.Entry{
				Format: schema.FormatPi, Host: host, Path: path, Offset: int64(len(data)), Line: int64(i + 1),
				SessionID: session, EntryID: fmt.Sprint(i), Kind: schema.KindMessage, Role: schema.RoleUser,
				Text: line, TS: ts.Add(time.Duration(i) * time.Second),
			})
			data = append(data, line...)
		}
		msgs, err := bus.RawMsgs(bus.DefaultPrefix, &bus.RawChunk{
			Host: host, Path: path, Format: "pi", File: "7:" + session, Offset: 0, End: int64(len(data)),
			Line: 1, Lines: int64(len(entries)), Sessions: []string{session}, TS: ts, Data: data,
		}, 0)
		require.NoError(t, err)
		for _, m := range msgs {
			require.NoError(t, p.Publish(t.Context(), m, nil))
		}
		for i := range entries {
			require.NoError(t, p.Publish(t.Context(), bus.EntryMsg(bus.DefaultPrefix, &entries[i], nil), nil))
			out.keys[entries[i].Key()] = true
		}
		out.files[host+path] = data
	}
	require.NoError(t, p.Flush(t.Context()))
}

// perFile is the number of entries in each published file.
const perFile = 50

// requireExactlyOnce checks the output directories: no temporary file,
// every listed file present and nothing unlisted, each entry in exactly
// one row, and every file restored from the archive as published.
func requireExactlyOnce(t *testing.T, out, arch string, want published) {
	t.Helper()
	m, err := parquet.ReadManifest(out)
	require.NoError(t, err)
	listed := map[string]bool{}
	for _, f := range m.Files {
		listed[f.Path] = true
	}
	for _, dir := range []string{out, arch} {
		require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			require.NoError(t, err)
			require.False(t, strings.HasSuffix(p, ".tmp"), "temporary file left: %s", p)
			if dir == out && strings.HasSuffix(p, ".parquet") {
				rel, _ := filepath.Rel(out, p)
				require.True(t, listed[filepath.ToSlash(rel)], "unlisted Parquet file %s", rel)
			}
			return nil
		}))
	}
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	defer db.Close()
	var rows, keys int
	require.NoError(t, db.QueryRow(fmt.Sprintf(
		"SELECT count(*), count(DISTINCT key) FROM read_parquet('%s/**/*.parquet', hive_partitioning=true, union_by_name=true)", out)).Scan(&rows, &keys))
	require.Equal(t, len(want.keys), keys, "every entry exported")
	require.Equal(t, len(want.keys), rows, "no entry exported twice")

	restored, err := archive.Restore(t.Context(), archive.RestoreConfig{Archive: arch, Out: t.TempDir()})
	require.NoError(t, err)
	require.Len(t, restored, len(want.files))
	for _, r := range restored {
		got, err := os.ReadFile(r.Out)
		require.NoError(t, err)
		require.Equal(t, string(want.files[r.Host+r.Path]), string(got), r.Path)
	}
}

// TestExporter_KilledAtRandomPoints kills `exporter serve` with SIGKILL at
// random points (between writing, renaming and recording files, and
// acknowledging) and restarts it each time: every entry ends up in
// exactly one committed file, every original line in the archive once,
// and no temporary file is left. It kills 10 times;
// SESSIONPIPE_KILL_ROUNDS=50 50 times:
//
//	SESSIONPIPE_KILL_ROUNDS=50 go test ./cmd/exporter -run TestExporter_KilledAtRandomPoints -timeout 30m -v
func TestExporter_KilledAtRandomPoints(t *testing.T) {
	rounds := 10
	if v := os.Getenv("SESSIONPIPE_KILL_ROUNDS"); v != "" {
		var err error
		rounds, err = strconv.Atoi(v)
		require.NoError(t, err, "SESSIONPIPE_KILL_ROUNDS")
	}
	bin := buildExporter(t)
	srv := natstest.RunServer(t)
	js := natstest.JetStream(t, natstest.Connect(t, srv.URL()))
	_, err := bus.EnsureStream(t.Context(), js, bus.StreamConfig{})
	require.NoError(t, err)
	want := publishFleet(t, js, 4000)

	data := t.TempDir()
	out, arch := filepath.Join(data, "parquet"), filepath.Join(data, "archive")
	args := []string{"serve", "-data-dir", data, "-out", out, "-archive-dir", arch, "-metrics", "",
		"-part-bytes", "200000", "-part-age", "300ms", "-lease-ttl", "1s", "-log-level", "warn"}
	start := func(extra ...string) (*exec.Cmd, *bytes.Buffer) {
		cmd := exec.Command(bin, append(args, extra...)...)
		cmd.Env = append(os.Environ(), "NATS_URL="+srv.URL())
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd, &stderr
	}
	rng := rand.New(rand.NewPCG(3, 9))
	for kill := range rounds {
		cmd, stderr := start()
		// More is published while it runs (new files, the same hosts and
		// days: open partitions get more).
		publishFiles(t, js, want, 1000+kill*100, 4000)
		time.Sleep(time.Duration(300+rng.IntN(1500)) * time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		cmd.Wait()
		require.NotContains(t, stderr.String(), "panic", "run %d", kill)
		m, err := parquet.ReadManifest(out)
		require.NoError(t, err, "run %d", kill)
		state, _ := os.ReadFile(filepath.Join(out, export.StateName))
		t.Logf("killed run %d: %d files committed, position %s", kill, len(m.Files), bytes.TrimSpace(state))
	}

	// The last run goes to the end and stops on SIGTERM.
	addr := freeAddr(t)
	cmd, stderr := start("-metrics", addr)
	natstest.CheckFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		var b bytes.Buffer
		if err := health(t.Context(), []string{"-url", "http://" + addr + "/healthz"}, &b, &b); err != nil {
			return err
		}
		if strings.TrimSpace(b.String()) != "ok" {
			return errors.New(b.String())
		}
		return nil
	})
	s, err := js.Stream(t.Context(), bus.DefaultStream)
	require.NoError(t, err)
	info, err := s.Info(t.Context())
	require.NoError(t, err)
	natstest.CheckFor(t, 60*time.Second, 50*time.Millisecond, func() error {
		b, err := os.ReadFile(filepath.Join(out, export.StateName))
		if err != nil {
			return err
		}
		if !strings.Contains(string(b), fmt.Sprintf(`"committed":%d}`, info.State.LastSeq)) {
			return fmt.Errorf("position %s, want %d", b, info.State.LastSeq)
		}
		return nil
	})
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait(), stderr.String())
	requireExactlyOnce(t, out, arch, want)
}

// SIGTERM commits what is open: with parts that would stay open for five
// minutes, a stop still leaves everything consumed in committed files.
func TestExporter_SigtermCommitsOpenParts(t *testing.T) {
	bin := buildExporter(t)
	srv := natstest.RunServer(t)
	js := natstest.JetStream(t, natstest.Connect(t, srv.URL()))
	_, err := bus.EnsureStream(t.Context(), js, bus.StreamConfig{})
	require.NoError(t, err)
	want := publishFleet(t, js, 500)

	data := t.TempDir()
	out, arch := filepath.Join(data, "parquet"), filepath.Join(data, "archive")
	cmd := exec.Command(bin, "serve", "-data-dir", data, "-out", out, "-archive-dir", arch, "-metrics", "", "-log-level", "warn")
	cmd.Env = append(os.Environ(), "NATS_URL="+srv.URL())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	s, err := js.Stream(t.Context(), bus.DefaultStream)
	require.NoError(t, err)
	info, err := s.Info(t.Context())
	require.NoError(t, err)
	natstest.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		c, err := js.Consumer(t.Context(), bus.DefaultStream, export.DefaultConsumerName)
		if err != nil {
			return err
		}
		ci, err := c.Info(t.Context())
		if err != nil {
			return err
		}
		if ci.AckFloor.Stream < info.State.LastSeq {
			return errors.New("not consumed yet")
		}
		return nil
	})
	m, err := parquet.ReadManifest(out)
	require.NoError(t, err)
	require.Empty(t, m.Files, "nothing committed before the stop")
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait(), stderr.String())
	requireExactlyOnce(t, out, arch, want)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

func TestUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.ErrorAs(t, run(t.Context(), nil, os.Getenv, &stdout, &stderr), new(usageError))
	require.ErrorAs(t, run(t.Context(), []string{"nope"}, os.Getenv, &stdout, &stderr), new(usageError))
	require.NoError(t, run(t.Context(), []string{"help"}, os.Getenv, &stdout, &stderr))
	require.Contains(t, stdout.String(), "exporter serve")
	err := run(t.Context(), []string{"serve", "extra"}, func(string) string { return "" }, &stdout, &stderr)
	require.ErrorContains(t, err, "-out and -archive-dir")
}
