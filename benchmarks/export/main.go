// Command export benchmarks the Parquet exporter (pipeline/export) against
// DuckDB's own JSON-to-Parquet conversion and against zstd-compressed
// JSONL, side by side in one run on the same transcript files:
//
//	go run ./benchmarks/export -corpus DIR [-out DIR] [-raw]
//
// Each contender runs in its own child process (this program re-executing
// itself with -mode), so that its CPU time (user+sys, from the child's
// rusage) and peak memory (maximum RSS) are its own:
//
//   - ours: decode every transcript with pipeline/formats (text on, as the
//     tailer publishes it) and write Hive-partitioned Parquet with
//     parquet.Writer, default configuration;
//   - duckdb: COPY (SELECT * FROM read_json_auto('DIR/**/*.jsonl')) TO
//     'out.parquet' (FORMAT parquet, COMPRESSION zstd), through go-duckdb
//     (DuckDB 1.4.1, its default threads);
//   - zstd: the same lines compressed as one JSONL stream by
//     klauspost/compress zstd at its default level;
//   - archive: the cold archive as the exporter writes it: the files'
//     bytes in raw chunks of up to 4 MiB of whole lines (as the tailer
//     cuts them), one zstd frame each, through archive.ArchiveWriter at
//     its default level, segments partitioned as the Parquet.
//
// Throughput is input bytes per CPU-second. The report is printed as a
// Markdown table on stdout.
//
// For experiments, BENCH_ZSTD=fastest|better sets our zstd level and
// BENCH_PAGE_BYTES our page size (parquet.Config.PageBytes).
package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/klauspost/compress/zstd"
	_ "github.com/marcboeker/go-duckdb/v2"
	pzstd "github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/export/archive"
	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

// result is what a child reports on stdout as JSON.
type result struct {
	Mode     string  `json:"mode"`
	InBytes  int64   `json:"in_bytes"`
	OutBytes int64   `json:"out_bytes"`
	Entries  int64   `json:"entries"`
	Files    int64   `json:"files"`
	CPU      float64 `json:"cpu_s"`  // filled by the parent
	Wall     float64 `json:"wall_s"` // filled by the parent
	MaxRSS   int64   `json:"max_rss"`
}

func main() {
	corpus := flag.String("corpus", "", "directory of transcripts (required)")
	out := flag.String("out", "", "output directory (default: a temporary one, removed)")
	mode := flag.String("mode", "", "run one contender in this process: ours, duckdb, zstd or archive")
	raw := flag.Bool("raw", false, "ours: keep each record's original JSON in the raw column too")
	duckOpts := flag.String("duckdb-opts", "union_by_name=true", "duckdb: options of read_json_auto (the generated corpus needs union_by_name or a full sample: its lines have keys the first lines lack)")
	cpuProfile := flag.String("cpuprofile", "", "ours: write a CPU profile to this file")
	memLimit := flag.Int64("memlimit", 192<<20, "ours: Go soft memory limit (GOMEMLIMIT), bytes; 0 leaves the runtime's")
	flag.Parse()
	if *corpus == "" {
		fmt.Fprintln(os.Stderr, "export: -corpus is required")
		os.Exit(2)
	}
	var err error
	if *mode != "" {
		err = child(*mode, *corpus, *out, *raw, *memLimit, *duckOpts, *cpuProfile)
	} else {
		err = parent(*corpus, *out, *raw, *memLimit, *duckOpts, *cpuProfile)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "export:", err)
		os.Exit(1)
	}
}

func parent(corpus, out string, raw bool, memLimit int64, duckOpts, cpuProfile string) error {
	if out == "" {
		d, err := os.MkdirTemp("", "export-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		out = d
	}
	var results []result
	for _, mode := range []string{"ours", "duckdb", "zstd", "archive"} {
		dir := filepath.Join(out, mode)
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		args := []string{"-mode", mode, "-corpus", corpus, "-out", dir, fmt.Sprintf("-memlimit=%d", memLimit),
			"-duckdb-opts", duckOpts, "-cpuprofile", cpuProfile}
		if raw {
			args = append(args, "-raw")
		}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Stderr = os.Stderr
		start := time.Now()
		b, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("%s: %w", mode, err)
		}
		var r result
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("%s: decode result %q: %w", mode, b, err)
		}
		r.Wall = time.Since(start).Seconds()
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		r.CPU = tv(ru.Utime) + tv(ru.Stime)
		r.MaxRSS = ru.Maxrss << 10 // KiB on Linux
		results = append(results, r)
		fmt.Fprintf(os.Stderr, "export: %s done: %.2f CPU-s, %.1f s wall\n", mode, r.CPU, r.Wall)
	}
	report(os.Stdout, results)
	return nil
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

func report(w io.Writer, rs []result) {
	const mb = 1 << 20
	var duck, ours result
	for _, r := range rs {
		switch r.Mode {
		case "duckdb":
			duck = r
		case "ours":
			ours = r
		}
	}
	fmt.Fprintf(w, "| contender | input MB | CPU-s | MB per CPU-s | wall s | output MB | output / input | peak RSS MB |\n")
	fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rs {
		fmt.Fprintf(w, "| %s | %.1f | %.2f | %.1f | %.2f | %.2f | %.4f | %.0f |\n", r.Mode,
			float64(r.InBytes)/mb, r.CPU, float64(r.InBytes)/mb/r.CPU, r.Wall,
			float64(r.OutBytes)/mb, float64(r.OutBytes)/float64(r.InBytes), float64(r.MaxRSS)/mb)
	}
	if duck.CPU > 0 && ours.CPU > 0 {
		fmt.Fprintf(w, "\nours: %.2fx DuckDB's throughput per CPU-second; output %.3fx DuckDB's; %d entries in %d files\n",
			duck.CPU/ours.CPU*float64(ours.InBytes)/float64(duck.InBytes), float64(ours.OutBytes)/float64(duck.OutBytes),
			ours.Entries, ours.Files)
	}
	for _, r := range rs {
		if r.Mode == "zstd" && r.OutBytes > 0 {
			fmt.Fprintf(w, "ours / zstd JSONL: %.3fx\n", float64(ours.OutBytes)/float64(r.OutBytes))
		}
		if r.Mode == "archive" && r.OutBytes > 0 {
			fmt.Fprintf(w, "archive: %.4f of the input, %.3fx zstd JSONL's size\n", float64(r.OutBytes)/float64(r.InBytes), float64(r.OutBytes)/float64(zstdOut(rs)))
		}
	}
}

// transcripts lists the .jsonl files below dir.
func transcripts(dir string) ([]string, int64, error) {
	var files []string
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			info, err := d.Info()
			if err != nil {
				return err
			}
			files = append(files, p)
			total += info.Size()
		}
		return nil
	})
	return files, total, err
}

func child(mode, corpus, out string, raw bool, memLimit int64, duckOpts, cpuProfile string) error {
	files, total, err := transcripts(corpus)
	if err != nil {
		return err
	}
	r := result{Mode: mode, InBytes: total}
	switch mode {
	case "ours":
		if cpuProfile != "" {
			f, err := os.Create(cpuProfile)
			if err != nil {
				return err
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				return err
			}
			defer pprof.StopCPUProfile()
		}
		err = runOurs(&r, files, out, raw, memLimit)
	case "decode":
		err = runDecode(&r, files)
	case "duckdb":
		err = runDuckDB(&r, corpus, out, duckOpts)
	case "zstd":
		err = runZstd(&r, files, out)
	case "archive":
		err = runArchive(&r, files, out)
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(r)
}

func runOurs(r *result, files []string, out string, raw bool, memLimit int64) error {
	if memLimit > 0 {
		debug.SetMemoryLimit(memLimit)
	}
	ctx := context.Background()
	w, err := parquet.NewWriter(parquet.Config{Dir: out, WriterVersion: "sessionpipe-bench", CompressionLevel: zstdLevel(), PageBytes: pageBytes()})
	if err != nil {
		return err
	}
	var seq uint64
	var werr error
	for _, path := range files {
		cfg := formats.ReadConfig{Config: parse.Config{Host: "bench-host", Text: true, Raw: raw}}
		_, err := formats.ReadFile(ctx, path, cfg, func(e *schema.Entry) {
			seq++
			if werr == nil {
				werr = w.Write(ctx, e, seq)
			}
		}, func(error) {})
		if err != nil && !errorsIsUnknown(err) {
			return err
		}
		if werr != nil {
			return werr
		}
	}
	if err := w.Close(ctx); err != nil {
		return err
	}
	st := w.Stats()
	r.Entries, r.Files, r.OutBytes = st.Entries, st.Files, st.Bytes
	return nil
}

// runDecode decodes as runOurs does and writes nothing: the floor of
// runOurs's cost.
func runDecode(r *result, files []string) error {
	ctx := context.Background()
	for _, path := range files {
		cfg := formats.ReadConfig{Config: parse.Config{Host: "bench-host", Text: true}}
		_, err := formats.ReadFile(ctx, path, cfg, func(e *schema.Entry) { r.Entries++ }, func(error) {})
		if err != nil && !errorsIsUnknown(err) {
			return err
		}
	}
	return nil
}

func errorsIsUnknown(err error) bool {
	return errors.Is(err, formats.ErrUnknownFormat)
}

func runDuckDB(r *result, corpus, out, opts string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return err
	}
	defer db.Close()
	dst := filepath.Join(out, "out.parquet")
	q := fmt.Sprintf(`COPY (SELECT * FROM read_json_auto('%s/**/*.jsonl'%s)) TO '%s' (FORMAT parquet, COMPRESSION zstd)`, corpus, optList(opts), dst)
	if _, err := db.Exec(q); err != nil {
		return err
	}
	if err := db.QueryRow(fmt.Sprintf(`SELECT count(*) FROM read_parquet('%s')`, dst)).Scan(&r.Entries); err != nil {
		return err
	}
	info, err := os.Stat(dst)
	if err != nil {
		return err
	}
	r.OutBytes, r.Files = info.Size(), 1
	return nil
}

func optList(opts string) string {
	if opts == "" {
		return ""
	}
	return ", " + opts
}

func runZstd(r *result, files []string, out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(out, "lines.jsonl.zst"))
	if err != nil {
		return err
	}
	defer f.Close()
	zw, err := zstd.NewWriter(f, zstd.WithEncoderConcurrency(1))
	if err != nil {
		return err
	}
	for _, p := range files {
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		_, err = io.Copy(zw, in)
		in.Close()
		if err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	info, err := f.Stat()
	if err != nil {
		return err
	}
	r.OutBytes, r.Files = info.Size(), 1
	return nil
}

func zstdLevel() pzstd.Level {
	switch os.Getenv("BENCH_ZSTD") {
	case "fastest":
		return pzstd.SpeedFastest
	case "better":
		return pzstd.SpeedBetterCompression
	}
	return 0
}

// pageBytes reads BENCH_PAGE_BYTES, for experiments; 0 is the default.
func pageBytes() int {
	n, _ := strconv.Atoi(os.Getenv("BENCH_PAGE_BYTES"))
	return n
}

func zstdOut(rs []result) int64 {
	for _, r := range rs {
		if r.Mode == "zstd" {
			return max(r.OutBytes, 1)
		}
	}
	return 1
}

// runArchive writes the files as the exporter archives them: chunks of
// whole lines of up to 4 MiB (what a tailer's publishing batch holds),
// one per message, through an ArchiveWriter.
func runArchive(r *result, files []string, out string) error {
	ctx := context.Background()
	a, err := archive.NewArchiveWriter(archive.ArchiveConfig{Dir: out})
	if err != nil {
		return err
	}
	const chunkBytes = 4 << 20
	var seq uint64
	ts := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	for i, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var off int64
		line := int64(1)
		for len(data) > 0 {
			n := min(len(data), chunkBytes)
			if n < len(data) {
				if nl := bytes.LastIndexByte(data[:n], '\n'); nl >= 0 {
					n = nl + 1
				} else if nl := bytes.IndexByte(data[n:], '\n'); nl >= 0 {
					n += nl + 1
				} else {
					n = len(data)
				}
			}
			lines := int64(bytes.Count(data[:n], []byte{'\n'}))
			seq++
			c := bus.RawChunk{Host: "bench", Path: p, Format: "claude-code", File: fmt.Sprint(i), Offset: off, End: off + int64(n),
				Line: line, Lines: lines, TS: ts, Data: data[:n]}
			if err := a.Write(ctx, &c, seq); err != nil {
				return err
			}
			data, off, line = data[n:], off+int64(n), line+lines
		}
	}
	if err := a.Close(ctx); err != nil {
		return err
	}
	for _, s := range a.Segments() {
		r.OutBytes += s.Bytes
		r.Files++
	}
	return nil
}
