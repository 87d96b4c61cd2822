package tail

// The tailer's end-to-end benchmarks, each against an embedded JetStream
// server run as laptop mode runs it (bus.StartEmbedded: file storage,
// in-process connection, default stream and publisher settings):
//
//   - BenchmarkBackfill: a generated transcript tree read from its start,
//     side by side with publishing the same pre-encoded messages through
//     the bus publisher alone and raw (PublishMsgAsync, bounded pending
//     window), and with reading and encoding them without publishing.
//   - BenchmarkBackfillFiles: a tree of many small files, read from its
//     start.
//   - BenchmarkIdleCPU: process CPU while many backfilled files stay
//     unchanged, per rescan interval, against the server alone.
//   - BenchmarkAppendLatency: from the write of a line to its arrival at
//     an ordered consumer, with file notifications and with rescans only.
//   - BenchmarkRescan and BenchmarkCheckpointSave: the two periodic jobs
//     that idle CPU is made of.
//
// They only run with -bench; benchmarks/RESULTS.md ("Tailer") has the
// commands and the measured figures.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/corpusgen"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/redact"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Benchmark flags, passed after -args:
//
//	go test ./pipeline/tail -run '^$' -bench Backfill -benchtime 1x -args -bench.size 1GB
var (
	benchSize    = flag.String("bench.size", "64MB", "corpus size of BenchmarkBackfill: bytes or KB, MB, GB (powers of 1024)")
	benchRounds  = flag.Int("bench.rounds", 1, "rounds of BenchmarkBackfill: each runs every impl once, in alternating order, so that they share the machine's load (use with -count=1)")
	benchDir     = flag.String("bench.dir", "", "where generated corpora are cached (default $TMPDIR/sessionpipe-bench)")
	benchFiles   = flag.Int("bench.files", 10000, "files of BenchmarkIdleCPU and BenchmarkRescan")
	benchIdle    = flag.Duration("bench.idle", 30*time.Second, "measurement window of BenchmarkIdleCPU")
	benchLatency = flag.Duration("bench.latency", 10*time.Second, "writing time of BenchmarkAppendLatency (at least 3 rescans without notifications)")
	benchRate    = flag.Int("bench.rate", 200, "lines written per second by BenchmarkAppendLatency")
	benchIdlePro = flag.String("bench.idleprofile", "", "write a CPU profile of BenchmarkIdleCPU's measurement windows (not its backfills) to this file")
)

// benchHost is the host name of the benchmarks' entries.
const benchHost = "bench-host"

// BenchmarkBackfill reads a generated mixed transcript tree (80% Claude
// Code bytes, 10% pi, 10% Codex, a few multi-MB image lines) from its
// start into JetStream, and compares it with the same messages published
// without the tailer:
//
//   - impl=encode: read, detect, parse and encode every entry on one
//     goroutine, no publishing (what the tailer does before publishing);
//   - impl=tail: the tailer, default settings (2 workers, publisher
//     window 4096), until every entry is acknowledged;
//   - impl=tail-redacted: the same with secrets redacted before
//     publishing;
//   - impl=tail-archive: redacted, and the original lines published
//     too (raw chunks for the exporter's archive), as the commands run
//     it by default;
//   - impl=tail-archive-full: the archive without redaction
//     (--content full), to tell the transport's cost from redaction's;
//   - impl=bus: the pre-encoded messages through a bus.Publisher with
//     default settings (ordering, completion callbacks, no reading);
//   - impl=raw: the pre-encoded messages through PublishMsgAsync with a
//     pending window of bus.DefaultMaxInFlight, no ordering or retry
//     logic, as `nats bench js pub --async` does.
//
// MB/s is corpus bytes per second for every impl, so that the rates
// compare; entries/s counts messages.
func BenchmarkBackfill(b *testing.B) {
	size, err := parseBenchSize(*benchSize)
	require.NoError(b, err)
	fx := &backfill{tree: mustCorpusTree(b, corpusgen.MixMixed, size)}
	name := "corpus=mixed-" + *benchSize
	impls := []struct {
		name string
		run  func(*testing.B)
	}{{"encode", fx.encode}, {"tail", fx.tail}, {"tail-redacted", fx.tailRedacted}, {"tail-archive", fx.tailArchive}, {"tail-archive-full", fx.tailArchiveFull}, {"bus", fx.bus}, {"raw", fx.raw}}
	for round := range max(*benchRounds, 1) {
		// -count repeats each sub-benchmark before the next one starts;
		// rounds interleave them instead, and reverse their order every
		// other round, so that a change of the machine's load falls on
		// all of them. Repeated names get a #NN suffix (strip it for
		// benchstat).
		for i := range impls {
			if round%2 == 1 {
				i = len(impls) - 1 - i
			}
			b.Run(name+"/impl="+impls[i].name, impls[i].run)
		}
	}
}

// backfill is the shared fixture of BenchmarkBackfill's sub-benchmarks.
type backfill struct {
	tree corpusTree
	msgs []*nats.Msg // what the tailer publishes for the tree

	// ref is the stream state the first publishing run left; every other
	// run must store the same number of messages and bytes.
	ref jetstream.StreamState
}

// messages returns the messages of the tree, encoding them on first use.
func (fx *backfill) messages(tb testing.TB) []*nats.Msg {
	if fx.msgs == nil {
		fx.msgs = encodeTree(tb, fx.tree.dir)
		require.NotEmpty(tb, fx.msgs)
	}
	return fx.msgs
}

func (fx *backfill) encode(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(fx.tree.stats.Bytes)
	var msgs []*nats.Msg
	var cpu cpuMeter
	for b.Loop() {
		cpu.start(b)
		msgs = encodeTree(b, fx.tree.dir)
		cpu.stop(b)
	}
	fx.msgs = msgs
	reportEntryRate(b, len(msgs))
	cpu.report(b, len(msgs))
}

func (fx *backfill) tail(b *testing.B) { fx.tailWith(b, nil, false) }

// tailRedacted is the tailer as the commands run it by default: secrets
// redacted before publishing (--content redacted).
func (fx *backfill) tailRedacted(b *testing.B) {
	r, err := redact.New(redact.Config{Mode: redact.Redacted})
	require.NoError(b, err)
	fx.tailWith(b, r, false)
}

// tailArchive is the commands' default: redacted, with the original
// lines published for the archive.
func (fx *backfill) tailArchive(b *testing.B) {
	r, err := redact.New(redact.Config{Mode: redact.Redacted})
	require.NoError(b, err)
	fx.tailWith(b, r, true)
}

// tailArchiveFull archives without redacting (--content full).
func (fx *backfill) tailArchiveFull(b *testing.B) { fx.tailWith(b, nil, true) }

func (fx *backfill) tailWith(b *testing.B, red *redact.Redactor, archive bool) {
	want := int64(len(fx.messages(b)))
	var cpu cpuMeter
	b.ReportAllocs()
	b.SetBytes(fx.tree.stats.Bytes)
	for b.Loop() {
		b.StopTimer()
		s := startBenchBus(b)
		pub := s.publisher(b)
		tl, err := New(Config{
			Watch:     []string{filepath.Join(fx.tree.dir, "**", "*")},
			StateDir:  b.TempDir(),
			Host:      benchHost,
			Publisher: pub,
			Text:      true,
			Redactor:  red,
			Archive:   archive,
		})
		require.NoError(b, err)
		cpu.start(b)
		b.StartTimer()

		r := startBenchTailer(tl)
		benchWait(b, time.Hour, func() bool { return tl.m.ackedEntries.Load() >= want })

		b.StopTimer()
		cpu.stop(b)
		r.stop(b)
		m := tl.Metrics().Snapshot()
		require.Equal(b, want, m.AckedEntries, "entries acknowledged")
		require.Equal(b, want, m.Entries, "entries sent")
		require.Zero(b, m.BadLines+m.PublishErrors+m.ReadErrors, "bad lines, publish and read errors")
		if archive {
			require.Equal(b, fx.tree.stats.Bytes, m.RawBytes, "every byte archived")
		}
		// The tailer publishes batch messages: the stream holds fewer
		// messages than the one-per-entry impls (encode, bus, raw) store.
		b.ReportMetric(float64(m.Acked), "msgs")
		b.ReportMetric(float64(s.state(b).Bytes)/float64(fx.tree.stats.Bytes), "stored/input")
		s.stop(b, pub)
		b.StartTimer()
	}
	reportEntryRate(b, int(want))
	cpu.report(b, int(want))
}

func (fx *backfill) bus(b *testing.B) {
	all := fx.messages(b)
	var cpu cpuMeter
	b.ReportAllocs()
	b.SetBytes(fx.tree.stats.Bytes)
	for b.Loop() {
		b.StopTimer()
		s := startBenchBus(b)
		pub := s.publisher(b)
		msgs := cloneMsgs(all)
		var failed atomic.Int64
		done := func(err error) {
			if err != nil {
				failed.Add(1)
			}
		}
		ctx := b.Context()
		cpu.start(b)
		b.StartTimer()

		for _, m := range msgs {
			if err := pub.Publish(ctx, m, done); err != nil {
				b.Fatal(err)
			}
		}
		require.NoError(b, pub.Flush(ctx))

		b.StopTimer()
		cpu.stop(b)
		require.Zero(b, failed.Load(), "failed publishes")
		fx.checkStream(b, s)
		s.stop(b, pub)
		b.StartTimer()
	}
	reportEntryRate(b, len(all))
	cpu.report(b, len(all))
}

func (fx *backfill) raw(b *testing.B) {
	all := fx.messages(b)
	var cpu cpuMeter
	b.ReportAllocs()
	b.SetBytes(fx.tree.stats.Bytes)
	for b.Loop() {
		b.StopTimer()
		s := startBenchBus(b)
		var failed atomic.Int64
		js, err := jetstream.New(s.e.Conn(),
			jetstream.WithPublishAsyncMaxPending(bus.DefaultMaxInFlight),
			jetstream.WithPublishAsyncErrHandler(func(jetstream.JetStream, *nats.Msg, error) { failed.Add(1) }))
		require.NoError(b, err)
		msgs := cloneMsgs(all)
		cpu.start(b)
		b.StartTimer()

		for _, m := range msgs {
			for {
				_, err := js.PublishMsgAsync(m)
				if err == nil {
					break
				}
				// The pending window stayed full longer than the
				// library's stall wait: the message was not sent.
				if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
					b.Fatal(err)
				}
			}
		}
		select {
		case <-js.PublishAsyncComplete():
		case <-time.After(5 * time.Minute):
			b.Fatal("raw publishes not acknowledged")
		}

		b.StopTimer()
		cpu.stop(b)
		require.Zero(b, failed.Load(), "failed publishes")
		fx.checkStream(b, s)
		s.stop(b, nil)
		b.StartTimer()
	}
	reportEntryRate(b, len(all))
	cpu.report(b, len(all))
}

// checkStream requires the stream of s to hold what the first run
// stored: the same messages make the same count and bytes.
func (fx *backfill) checkStream(tb testing.TB, s *benchBus) {
	tb.Helper()
	st := s.state(tb)
	require.Equal(tb, uint64(len(fx.msgs)), st.Msgs, "messages stored")
	if fx.ref.Msgs == 0 {
		fx.ref = st
		return
	}
	require.Equal(tb, fx.ref.Bytes, st.Bytes, "bytes stored, against the first run")
}

// encodeTree returns the messages a tailer publishes for the transcripts
// under dir: the entries of every file in the order of its lines, encoded
// as the tailer encodes them (Text on, payloads shortened to
// DefaultMaxPayload). A bad line fails: it would be a dead letter, which
// this path does not build.
func encodeTree(tb testing.TB, dir string) []*nats.Msg {
	tb.Helper()
	t := &Tailer{cfg: Config{Host: benchHost}.withDefaults(), m: newMetrics()}
	var msgs []*nats.Msg
	var errs []error
	ws := newWatchSet([]string{dir})
	ws.walk(
		func(path string, _ fs.FileInfo, _ int) {
			cfg := formats.ReadConfig{Config: parse.Config{Path: path, Host: benchHost, Text: true}}
			_, err := formats.ReadFile(tb.Context(), path, cfg, func(e *schema.Entry) {
				e.Path = path
				msgs = append(msgs, t.entryMsg(e, t.cfg.MaxPayload))
			}, func(err error) { errs = append(errs, err) })
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", path, err))
			}
		},
		func(string) {},
		func(err error) { errs = append(errs, err) },
	)
	require.Empty(tb, errs, "the generated corpus must decode without errors")
	return msgs
}

// cloneMsgs returns fresh message structs sharing subject, header and
// data, so that a run starts from messages no publisher has touched.
func cloneMsgs(msgs []*nats.Msg) []*nats.Msg {
	out := make([]*nats.Msg, len(msgs))
	for i, m := range msgs {
		out[i] = &nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data}
	}
	return out
}

// BenchmarkIdleCPU measures the CPU the whole process (tailer and
// embedded server) uses while -bench.files small transcripts, all read,
// stay unchanged: cpu% is CPU time over wall time of the -bench.idle
// window, in percent of one core; write-KB/s the bytes the process hands
// to write(2) meanwhile (checkpoint saves). tailer=off is the embedded
// server alone, the floor. backfill-s is how long reading the files took
// before the window. The cases vary the rescan interval around its
// default, and the checkpoint interval once.
func BenchmarkIdleCPU(b *testing.B) {
	n := *benchFiles
	dir := b.TempDir()
	writeSmallFiles(b, dir, n)
	name := fmt.Sprintf("files=%d", n)
	b.Run(name+"/tailer=off", func(b *testing.B) { idleCPU(b, dir, n, nil) })
	for _, c := range []struct{ rescan, checkpoint time.Duration }{
		{time.Second, DefaultCheckpointInterval},
		{DefaultRescanInterval, DefaultCheckpointInterval},
		{time.Minute, DefaultCheckpointInterval},
		{DefaultRescanInterval, 10 * time.Second},
	} {
		b.Run(fmt.Sprintf("%s/rescan=%v/checkpoint=%v", name, c.rescan, c.checkpoint), func(b *testing.B) {
			idleCPU(b, dir, n, func(cfg *Config) { cfg.RescanInterval, cfg.CheckpointInterval = c.rescan, c.checkpoint })
		})
	}
}

// BenchmarkBackfillFiles reads a tree of many small files from its start
// (files=-bench.files, and a tenth of it), as a first run over a long
// Claude Code history does: thousands of session files, most of them
// small. The tailer keeps MaxOpenFiles handles open (256 by default), so
// once that many files were read, each new file's handle makes it close
// idle ones; cpu-us/file is what a file costs in all, that included.
func BenchmarkBackfillFiles(b *testing.B) {
	for _, n := range []int{*benchFiles / 10, *benchFiles} {
		dir := b.TempDir()
		writeSmallFiles(b, dir, n)
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			var cpu cpuMeter
			for b.Loop() {
				b.StopTimer()
				s := startBenchBus(b)
				pub := s.publisher(b)
				tl, err := New(Config{Watch: []string{filepath.Join(dir, "**", "*")}, StateDir: b.TempDir(), Host: benchHost, Publisher: pub, Text: true})
				require.NoError(b, err)
				cpu.start(b)
				b.StartTimer()
				r := startBenchTailer(tl)
				want := int64(n * smallFileLines)
				benchWait(b, 10*time.Minute, func() bool { return tl.m.ackedEntries.Load() >= want })
				b.StopTimer()
				cpu.stop(b)
				r.stop(b)
				m := tl.Metrics().Snapshot()
				require.Equal(b, want, m.AckedEntries, "entries acknowledged")
				require.Equal(b, int64(n), m.Files, "files followed")
				s.stop(b, pub)
				b.StartTimer()
			}
			b.ReportMetric(float64(n)*float64(b.N)/cpu.wall.Seconds(), "files/s")
			b.ReportMetric(float64(cpu.cpu.Microseconds())/float64(n*b.N), "cpu-us/file")
		})
	}
}

// smallFileLines is the number of lines (and entries) of each file
// writeSmallFiles writes.
const smallFileLines = 6

// writeSmallFiles writes n pi transcripts of smallFileLines lines (about
// 1 KB) under dir, 100 per directory.
func writeSmallFiles(tb testing.TB, dir string, n int) []string {
	tb.Helper()
	paths := make([]string, n)
	for i := range n {
		sub := filepath.Join(dir, "pi", "sessions", fmt.Sprintf("--home-u-project%03d--", i/100))
		if i%100 == 0 {
			require.NoError(tb, os.MkdirAll(sub, 0o755))
		}
		paths[i] = filepath.Join(sub, fmt.Sprintf("2026-01-01T00-00-00-000Z_s%05d.jsonl", i))
		data := piFile(fmt.Sprintf("s%05d", i), 0, smallFileLines-1)
		require.NoError(tb, os.WriteFile(paths[i], []byte(data), 0o644))
	}
	return paths
}

// idleCPU runs one case of BenchmarkIdleCPU: a tailer over the n files of
// dir with its config changed by mod, or no tailer if mod is nil.
func idleCPU(b *testing.B, dir string, n int, mod func(*Config)) {
	var cpu cpuMeter
	var written, backfill float64
	for b.Loop() {
		b.StopTimer()
		s := startBenchBus(b)
		pub := s.publisher(b)
		var r *benchTailer
		if mod != nil {
			cfg := Config{
				Watch:     []string{filepath.Join(dir, "**", "*")},
				StateDir:  b.TempDir(),
				Host:      benchHost,
				Publisher: pub,
				Text:      true,
			}
			mod(&cfg)
			tl, err := New(cfg)
			require.NoError(b, err)
			start := time.Now()
			r = startBenchTailer(tl)
			want := int64(n * smallFileLines)
			benchWait(b, 10*time.Minute, func() bool { return tl.m.ackedEntries.Load() >= want })
			backfill += time.Since(start).Seconds()
		}
		// Let the backfill's last checkpoint save and garbage collection
		// pass before the window.
		time.Sleep(3 * time.Second)
		w0 := processWritten()
		stopProfile := startIdleProfile(b)
		cpu.start(b)
		b.StartTimer()

		time.Sleep(*benchIdle)

		b.StopTimer()
		cpu.stop(b)
		stopProfile()
		written += float64(processWritten() - w0)
		if r != nil {
			r.stop(b)
			m := r.tl.Metrics().Snapshot()
			require.Equal(b, int64(n*smallFileLines), m.AckedEntries, "entries acknowledged")
			require.Equal(b, int64(n), m.Files, "files followed")
		}
		s.stop(b, pub)
		b.StartTimer()
	}
	b.ReportMetric(100*cpu.cpu.Seconds()/cpu.wall.Seconds(), "cpu%")
	b.ReportMetric(written/1024/cpu.wall.Seconds(), "write-KB/s")
	if mod != nil {
		b.ReportMetric(backfill/float64(b.N), "backfill-s")
	}
}

// startIdleProfile starts a CPU profile of an idle window when
// -bench.idleprofile is set, and returns what stops it.
func startIdleProfile(tb testing.TB) (stop func()) {
	if *benchIdlePro == "" {
		return func() {}
	}
	f, err := os.Create(*benchIdlePro)
	require.NoError(tb, err)
	require.NoError(tb, pprof.StartCPUProfile(f))
	return func() {
		pprof.StopCPUProfile()
		require.NoError(tb, f.Close())
	}
}

// cpuMeter adds up the process CPU time and the wall time of the timed
// parts of a benchmark.
type cpuMeter struct {
	cpu, wall time.Duration
	cpu0      time.Duration
	t0        time.Time
}

func (c *cpuMeter) start(tb testing.TB) { c.cpu0, c.t0 = processCPU(tb), time.Now() }

func (c *cpuMeter) stop(tb testing.TB) {
	c.cpu += processCPU(tb) - c.cpu0
	c.wall += time.Since(c.t0)
}

// report adds cores, CPU time over wall time (at most 2 on a 2-core
// machine), and cpu-us/entry, CPU time per entry of the n per operation:
// the cost that does not depend on how many cores were free.
func (c *cpuMeter) report(b *testing.B, n int) {
	if c.wall > 0 {
		b.ReportMetric(c.cpu.Seconds()/c.wall.Seconds(), "cores")
	}
	if n > 0 && b.N > 0 {
		b.ReportMetric(float64(c.cpu.Microseconds())/float64(n*b.N), "cpu-us/entry")
	}
}

// processCPU returns the user and system CPU time of the process.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	require.NoError(tb, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processWritten returns the bytes the process passed to write calls
// (wchar of /proc/self/io), 0 where that is not available.
func processWritten() int64 {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// BenchmarkRescan measures one periodic rescan of -bench.files files
// already known (directory walk, stat and lookup of each), the job that
// runs every RescanInterval.
func BenchmarkRescan(b *testing.B) {
	n := *benchFiles
	dir := b.TempDir()
	writeSmallFiles(b, dir, n)
	b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
		s := startBenchBus(b)
		pub := s.publisher(b)
		defer s.stop(b, pub)
		tl, err := New(Config{Watch: []string{filepath.Join(dir, "**", "*")}, StateDir: b.TempDir(), Host: benchHost, Publisher: pub})
		require.NoError(b, err)
		tl.rescan(nil)
		require.Len(b, tl.files, n)
		b.ReportAllocs()
		for b.Loop() {
			tl.rescan(nil)
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "files/s")
	})
	// The floor: listing the directories and a stat of every file,
	// nothing else.
	b.Run(fmt.Sprintf("files=%d/impl=stat", n), func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var walk func(string)
			walk = func(d string) {
				entries, err := os.ReadDir(d)
				require.NoError(b, err)
				for _, e := range entries {
					p := d + "/" + e.Name()
					if e.IsDir() {
						walk(p)
						continue
					}
					_, err := os.Stat(p)
					require.NoError(b, err)
				}
			}
			walk(dir)
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "files/s")
	})
}

// BenchmarkCheckpointSave measures one save of the checkpoints of
// -bench.files files (encode, write, fsync, rename, fsync of the
// directory), the job that runs every CheckpointInterval.
func BenchmarkCheckpointSave(b *testing.B) {
	n := *benchFiles
	dir := b.TempDir()
	states := make([]FileState, n)
	for i, p := range writeSmallFiles(b, dir, n) {
		info, err := os.Stat(p)
		require.NoError(b, err)
		id, ok := idOf(info)
		require.True(b, ok)
		states[i] = FileState{Dev: id.Dev, Ino: id.Ino, Fingerprint: uint64(i) * 0x9e3779b97f4a7c15,
			FingerprintLen: int(min(info.Size(), fingerprintBytes)), Path: p, Offset: info.Size(), Format: schema.FormatPi}
	}
	b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
		cp, err := OpenCheckpoints(b.TempDir())
		require.NoError(b, err)
		require.NoError(b, cp.Save(states))
		info, err := os.Stat(cp.Path())
		require.NoError(b, err)
		b.ReportAllocs()
		b.SetBytes(info.Size())
		for b.Loop() {
			if err := cp.Save(states); err != nil {
				b.Fatal(err)
			}
		}
		got, err := cp.Load()
		require.NoError(b, err)
		require.Len(b, got, n)
	})
}

// BenchmarkAppendLatency appends -bench.rate lines per second, spread
// over four files, for -bench.latency, and reports the time from each
// write(2) to the arrival of its entry at an ordered consumer of the
// stream: p50-ms, p99-ms and max-ms. notify=off runs the tailer with Poll:
// it finds changes by its rescans only.
func BenchmarkAppendLatency(b *testing.B) {
	for _, c := range []struct {
		notify bool
		rescan time.Duration
	}{
		{true, DefaultRescanInterval},
		{false, DefaultRescanInterval},
		{false, time.Second},
	} {
		name := fmt.Sprintf("notify=%s/rescan=%v", map[bool]string{true: "on", false: "off"}[c.notify], c.rescan)
		b.Run(name, func(b *testing.B) { appendLatency(b, c.notify, c.rescan) })
	}
}

// latencyFiles is the number of files BenchmarkAppendLatency writes to.
const latencyFiles = 4

func appendLatency(b *testing.B, notify bool, rescan time.Duration) {
	duration := *benchLatency
	if !notify {
		duration = max(duration, 3*rescan)
	}
	lines := int(duration.Seconds() * float64(*benchRate))
	require.Positive(b, lines)
	var lat []time.Duration
	for b.Loop() {
		b.StopTimer()
		s := startBenchBus(b)
		pub := s.publisher(b)
		dir := b.TempDir()
		handles := make([]*os.File, latencyFiles)
		for i := range handles {
			p := filepath.Join(dir, fmt.Sprintf("p%d", i), fmt.Sprintf("lat%d.jsonl", i))
			require.NoError(b, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(b, os.WriteFile(p, []byte(piHeader(fmt.Sprintf("lat%d", i))), 0o644))
			h, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(b, err)
			handles[i] = h
		}
		tl, err := New(Config{
			Watch:          []string{filepath.Join(dir, "**", "*")},
			StateDir:       b.TempDir(),
			Host:           benchHost,
			Publisher:      pub,
			Text:           true,
			RescanInterval: rescan,
			Poll:           !notify,
		})
		require.NoError(b, err)
		r := startBenchTailer(tl)
		benchWait(b, time.Minute, func() bool { return tl.m.ackedEntries.Load() >= latencyFiles })

		rec := newLatencyRecorder(lines)
		cons, err := s.js.OrderedConsumer(b.Context(), bus.DefaultStream, jetstream.OrderedConsumerConfig{
			FilterSubjects: []string{bus.EntriesFilter(bus.DefaultPrefix)},
		})
		require.NoError(b, err)
		cc, err := cons.Consume(rec.consume)
		require.NoError(b, err)
		tick := time.NewTicker(time.Second / time.Duration(*benchRate))
		b.StartTimer()

		for i := range lines {
			<-tick.C
			f := i % latencyFiles
			line := piLine(i/latencyFiles + 1)
			rec.written(fmt.Sprintf("lat%d/e%06d", f, i/latencyFiles+1), time.Now())
			if _, err := handles[f].WriteString(line); err != nil {
				b.Fatal(err)
			}
		}
		tick.Stop()
		benchWait(b, 2*rescan+time.Minute, func() bool { return rec.complete() })

		b.StopTimer()
		cc.Stop()
		r.stop(b)
		for _, h := range handles {
			require.NoError(b, h.Close())
		}
		got, err := rec.latencies()
		require.NoError(b, err)
		lat = append(lat, got...)
		s.stop(b, pub)
		b.StartTimer()
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(percentileOf(lat, 50)), "p50-ms")
	b.ReportMetric(ms(percentileOf(lat, 99)), "p99-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
	b.ReportMetric(float64(len(lat))/float64(b.N), "lines/op")
}

// latencyRecorder records when each line was written and when its entry came
// out of the stream, keyed by session and entry id.
type latencyRecorder struct {
	mu      sync.Mutex
	want    int
	sent    map[string]time.Time
	arrived map[string]time.Time
	dup     int
	bad     error
}

func newLatencyRecorder(n int) *latencyRecorder {
	return &latencyRecorder{want: n, sent: make(map[string]time.Time, n), arrived: make(map[string]time.Time, n)}
}

func (r *latencyRecorder) written(key string, at time.Time) {
	r.mu.Lock()
	r.sent[key] = at
	r.mu.Unlock()
}

// consume is the consumer's callback.
func (r *latencyRecorder) consume(m jetstream.Msg) {
	at := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	err := bus.DecodeEntries(m.Headers(), m.Data(), func(e *schema.Entry) error {
		if e.EntryID == e.SessionID {
			return nil // a file's header, written before the measurement
		}
		key := e.SessionID + "/" + e.EntryID
		if _, ok := r.arrived[key]; ok {
			r.dup++
			return nil
		}
		r.arrived[key] = at
		return nil
	})
	if err != nil {
		r.bad = firstErr(r.bad, err)
	}
}

func (r *latencyRecorder) complete() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.arrived) >= r.want || r.bad != nil
}

// latencies returns arrival minus write time of every line, failing if
// an entry was decoded badly, arrived twice, or was never written.
func (r *latencyRecorder) latencies() ([]time.Duration, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.bad != nil:
		return nil, r.bad
	case r.dup > 0:
		return nil, fmt.Errorf("%d entries arrived twice", r.dup)
	case len(r.arrived) != len(r.sent):
		return nil, fmt.Errorf("%d entries arrived, %d lines written", len(r.arrived), len(r.sent))
	}
	out := make([]time.Duration, 0, len(r.arrived))
	for k, at := range r.arrived {
		w, ok := r.sent[k]
		if !ok {
			return nil, fmt.Errorf("entry %s arrived but was not written", k)
		}
		out = append(out, at.Sub(w))
	}
	return out, nil
}

func firstErr(old, err error) error {
	if old != nil {
		return old
	}
	return err
}

// percentileOf returns the p-th percentileOf of sorted by nearest rank.
func percentileOf(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

// benchBus is an embedded JetStream server as laptop mode runs it, with
// the default stream.
type benchBus struct {
	e     *bus.Embedded
	js    jetstream.JetStream
	store string
}

// startBenchBus starts an embedded server on a fresh store directory,
// removed by stop or at the end of the benchmark.
func startBenchBus(tb testing.TB) *benchBus {
	tb.Helper()
	store, err := os.MkdirTemp("", "sessionpipe-bench-js-")
	require.NoError(tb, err)
	tb.Cleanup(func() { os.RemoveAll(store) })
	e, err := bus.StartEmbedded(tb.Context(), bus.EmbeddedConfig{StoreDir: store})
	require.NoError(tb, err)
	js, err := jetstream.New(e.Conn())
	require.NoError(tb, err)
	_, err = bus.EnsureStream(tb.Context(), js, bus.StreamConfig{})
	require.NoError(tb, err)
	return &benchBus{e: e, js: js, store: store}
}

// publisher returns a publisher with the settings of the tailer command.
func (s *benchBus) publisher(tb testing.TB) *bus.Publisher {
	tb.Helper()
	p, err := bus.NewPublisher(s.js, bus.PublisherConfig{})
	require.NoError(tb, err)
	return p
}

// state returns the stream's state.
func (s *benchBus) state(tb testing.TB) jetstream.StreamState {
	tb.Helper()
	st, err := s.js.Stream(tb.Context(), bus.DefaultStream)
	require.NoError(tb, err)
	info, err := st.Info(tb.Context())
	require.NoError(tb, err)
	return info.State
}

// stop closes pub (if not nil), shuts the server down and removes its
// store.
func (s *benchBus) stop(tb testing.TB, pub *bus.Publisher) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(tb.Context()), time.Minute)
	defer cancel()
	if pub != nil {
		require.NoError(tb, pub.Close(ctx))
	}
	require.NoError(tb, s.e.Shutdown(ctx))
	require.NoError(tb, os.RemoveAll(s.store))
}

// benchTailer is a tailer started by startBenchTailer.
type benchTailer struct {
	tl     *Tailer
	cancel context.CancelFunc
	done   chan error
}

func startBenchTailer(tl *Tailer) *benchTailer {
	ctx, cancel := context.WithCancel(context.Background())
	r := &benchTailer{tl: tl, cancel: cancel, done: make(chan error, 1)}
	tl.cfg.Drain = time.Minute
	go func() { r.done <- tl.Run(ctx) }()
	return r
}

// stop stops the tailer gracefully and waits for it.
func (r *benchTailer) stop(tb testing.TB) {
	tb.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		require.NoError(tb, err)
	case <-time.After(2 * time.Minute):
		tb.Fatal("tailer did not stop")
	}
}

// benchWait polls cond every 2ms until it holds, failing after timeout.
func benchWait(tb testing.TB, timeout time.Duration, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("condition not met within %v", timeout)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// reportEntryRate adds entries/s: n entries per operation.
func reportEntryRate(b *testing.B, n int) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(n)*float64(b.N)/s, "entries/s")
	}
}

// corpusTree is a generated transcript tree.
type corpusTree struct {
	dir   string
	stats corpusgen.TreeStats
}

// mustCorpusTree returns a tree of mix and size (seed 1), generating it
// into the -bench.dir cache unless an earlier run left it complete there
// (a <dir>.json file beside it records what was written).
func mustCorpusTree(tb testing.TB, mix corpusgen.Mix, size int64) corpusTree {
	tb.Helper()
	root := *benchDir
	if root == "" {
		root = filepath.Join(os.TempDir(), "sessionpipe-bench")
	}
	t := corpusTree{dir: filepath.Join(root, fmt.Sprintf("tree-%s-%d-seed1", mix, size))}
	marker := t.dir + ".json"
	if data, err := os.ReadFile(marker); err == nil {
		require.NoError(tb, json.Unmarshal(data, &t.stats), "corpus marker %s", marker)
		return t
	}
	require.NoError(tb, os.RemoveAll(t.dir))
	start := time.Now()
	stats, err := corpusgen.WriteTree(tb.Context(), corpusgen.TreeConfig{Dir: t.dir, Format: mix, Bytes: size, Seed: 1})
	require.NoError(tb, err)
	t.stats = stats
	data, err := json.Marshal(stats)
	require.NoError(tb, err)
	require.NoError(tb, os.WriteFile(marker, data, 0o644))
	tb.Logf("generated %s: %d files, %d lines, %d bytes in %v", t.dir, stats.Files, stats.Lines, stats.Bytes, time.Since(start).Round(time.Millisecond))
	return t
}

// parseBenchSize parses a byte count with an optional KB, MB or GB suffix
// (powers of 1024).
func parseBenchSize(s string) (int64, error) {
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
