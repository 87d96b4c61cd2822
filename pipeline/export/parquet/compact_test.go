package parquet_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	pzstd "github.com/parquet-go/parquet-go/compress/zstd"

	parquetgo "github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
	"github.com/sessionpipe/sessionpipe/schema"
)

// farFuture closes every partition of the test entries.
var farFuture = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)

// compactConfig compacts every dated partition of dir, with the row
// groups of crashConfig.
func compactConfig(dir string) parquet.CompactConfig {
	return parquet.CompactConfig{Dir: dir, ClosedBefore: farFuture, RowGroupRows: 100}
}

// TestCompact_Merge compacts the many small files of six closed
// partitions: one file per partition, the same rows (read back field by
// field), sorted, with manifest records that agree with the files. Late
// entries of a closed partition make new small files, which the next
// compaction merges with the merged file into a second generation.
func TestCompact_Merge(t *testing.T) {
	dir := t.TempDir()
	entries := genEntries(crashEntries)
	writeAll(t, mustWriter(t, crashConfig(dir)), entries)
	before, err := parquet.ReadManifest(dir)
	require.NoError(t, err)
	require.Greater(t, len(before.Files), 18, "several files per partition")
	db := openDuckDB(t)
	rows := readBack(t, db, dir)

	st := mustCompact(t, compactConfig(dir))
	m := checkDir(t, dir)
	require.Len(t, m.Files, 6, "one file per partition")
	require.Equal(t, 6, st.Partitions)
	require.Equal(t, len(before.Files), st.FilesIn)
	require.Equal(t, 6, st.FilesOut)
	require.Equal(t, []int64{crashEntries, crashEntries, 0}, []int64{st.RowsIn, st.RowsOut, st.Duplicates})
	var in, out int64
	for _, f := range before.Files {
		in += f.Bytes
	}
	for _, f := range m.Files {
		out += f.Bytes
	}
	require.Equal(t, []int64{in, out}, []int64{st.BytesIn, st.BytesOut})
	require.Less(t, out, in, "fewer footers, longer runs")
	require.Equal(t, rows, readBack(t, openDuckDB(t), dir), "every row as it was")
	for _, f := range m.Files {
		require.Regexp(t, `/part-\d+-\d+-c1\.parquet$`, f.Path)
		checkMerged(t, dir, f)
	}

	// Nothing more to merge.
	st = mustCompact(t, compactConfig(dir))
	require.Zero(t, st.FilesIn)

	// Late entries of the closed partitions, then a second generation.
	late := genEntries(crashEntries + 600)
	w := mustWriter(t, crashConfig(dir))
	writeAll(t, w, late)
	require.Equal(t, int64(600), w.Stats().Entries)
	st = mustCompact(t, compactConfig(dir))
	m = checkDir(t, dir)
	require.Len(t, m.Files, 6)
	require.Equal(t, 6, st.FilesOut)
	for _, f := range m.Files {
		require.Regexp(t, `/part-\d+-\d+-c2\.parquet$`, f.Path)
		checkMerged(t, dir, f)
	}
	require.Equal(t, [3]int64{crashEntries + 600, crashEntries + 600, crashEntries + 600}, counts(t, dir))
}

// checkMerged checks the file f of dir against its manifest record, as
// DuckDB reads it: rows, size, sha256, ts span, stream range, and rows
// sorted by (session_id, ts, seq).
func checkMerged(t *testing.T, dir string, f parquet.File) {
	t.Helper()
	file := filepath.Join(dir, filepath.FromSlash(f.Path))
	db := openDuckDB(t)
	var n, minSeq, maxSeq int64
	var minTS, maxTS time.Time
	var sum string
	require.NoError(t, db.QueryRow(`SELECT count(*), min(seq), max(seq), min(ts), max(ts) FROM read_parquet(?)`, file).
		Scan(&n, &minSeq, &maxSeq, &minTS, &maxTS))
	require.NoError(t, db.QueryRow(`SELECT sha256(content) FROM read_blob(?)`, file).Scan(&sum))
	info, err := os.Stat(file)
	require.NoError(t, err)
	require.Equal(t, f.Rows, n)
	require.Equal(t, f.Bytes, info.Size())
	require.Equal(t, f.SHA256, sum)
	require.Equal(t, []uint64{f.FirstSeq, f.LastSeq}, []uint64{uint64(minSeq), uint64(maxSeq)})
	require.True(t, f.MinTS.Equal(minTS) && f.MaxTS.Equal(maxTS), "ts span %s..%s, manifest %s..%s", minTS, maxTS, f.MinTS, f.MaxTS)
	require.Equal(t, fmt.Sprintf("part-%d-%d", f.FirstSeq, f.LastSeq), strings.SplitN(path.Base(f.Path), "-c", 2)[0])

	var unsorted int64
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM (
		SELECT session_id, ts, seq, lag(session_id) OVER w AS ps, lag(ts) OVER w AS pt, lag(seq) OVER w AS pq
		FROM read_parquet(?, file_row_number=true) WINDOW w AS (ORDER BY file_row_number))
		WHERE ps > session_id OR ps = session_id AND (pt > ts OR pt IS NOT NULL AND ts IS NULL OR pt IS NOT DISTINCT FROM ts AND pq > seq)`, file).Scan(&unsorted))
	require.Zero(t, unsorted, "rows out of (session_id, ts, seq) order")
}

// TestCompact_SameAsWriter: a file merged from many small parts is byte
// for byte the file a Writer writes from the same entries in one part:
// the same schema, encodings, compression, statistics, row groups,
// sorting columns and key-value metadata.
func TestCompact_SameAsWriter(t *testing.T) {
	entries := sessionsEntries(3000)
	one, many := t.TempDir(), t.TempDir()
	// Compaction writes at the default level (the writer, by default, at
	// the fastest): the one-part file is written at it.
	level := pzstd.SpeedDefault
	writeAll(t, mustWriter(t, parquet.Config{Dir: one, RowGroupRows: 1000, CompressionLevel: level}), entries)
	writeAll(t, mustWriter(t, parquet.Config{Dir: many, RowGroupRows: 1000, PartBytes: 32 << 10}), entries)
	parts, err := parquet.ReadManifest(many)
	require.NoError(t, err)
	require.Greater(t, len(parts.Files), 5)

	st := mustCompact(t, parquet.CompactConfig{Dir: many, ClosedBefore: farFuture, RowGroupRows: 1000})
	require.Equal(t, 1, st.FilesOut)
	a, b := onlyFile(t, one), onlyFile(t, many)
	require.Equal(t, "part-1-3000-c1.parquet", filepath.Base(b))
	da, err := os.ReadFile(a)
	require.NoError(t, err)
	db, err := os.ReadFile(b)
	require.NoError(t, err)
	require.True(t, string(da) == string(db), "merged file differs from the Writer's")

	// And what that means, as parquet-go reads it.
	f, err := os.Open(b)
	require.NoError(t, err)
	defer f.Close()
	pf, err := parquetgo.OpenFile(f, int64(len(db)))
	require.NoError(t, err)
	require.Len(t, pf.RowGroups(), 3)
	var sorting []string
	for _, c := range pf.RowGroups()[0].SortingColumns() {
		sorting = append(sorting, strings.Join(c.Path(), ".")+map[bool]string{true: " nulls first"}[c.NullsFirst()])
	}
	require.Equal(t, []string{"session_id", "ts nulls first", "seq"}, sorting)
	v, _ := pf.Lookup(parquet.MetaSchemaVersion)
	require.Equal(t, strconv.Itoa(schema.Version), v)
}

// TestCompact_Duplicates: entries re-sent under new sequences (a tailer
// after the stream's duplicate window) are kept once, with their lowest
// sequence; entries of the same session and ts with other keys are kept.
// Delivered again, every sequence, dropped copies included, is skipped.
func TestCompact_Duplicates(t *testing.T) {
	dir := t.TempDir()
	entries := sessionsEntries(600)
	entries = append(entries, entries[100:200]...) // seq 601..700: copies of 101..200
	for i := range 50 {                            // seq 701..750: same session and ts, other entries
		e := entries[300+i]
		e.EntryID += "-other"
		entries = append(entries, e)
	}
	cfg := parquet.Config{Dir: dir, PartBytes: 16 << 10, RowGroupRows: 100}
	writeAll(t, mustWriter(t, cfg), entries)
	require.Equal(t, [3]int64{750, 750, 650}, counts(t, dir))

	st := mustCompact(t, compactConfig(dir))
	require.Equal(t, []int64{750, 650, 100}, []int64{st.RowsIn, st.RowsOut, st.Duplicates})
	m := checkDir(t, dir)
	require.Len(t, m.Files, 1)
	require.Equal(t, uint64(750), m.Files[0].LastSeq, "the range keeps the dropped copies")
	require.Equal(t, [3]int64{650, 650, 650}, counts(t, dir))
	var copies int64
	require.NoError(t, openDuckDB(t).QueryRow(`SELECT count(*) FROM `+glob(dir)+` WHERE seq BETWEEN 601 AND 700`).Scan(&copies))
	require.Zero(t, copies, "the lowest sequence is kept")

	w := mustWriter(t, cfg)
	writeAll(t, w, entries)
	require.Equal(t, int64(750), w.Stats().Skipped)
	require.Equal(t, m.Files, checkDir(t, dir).Files)
}

// TestCompact_OpenPartitions: by default only partitions dated before
// yesterday (UTC) are closed; today's and yesterday's files are left as
// they are, as is a closed partition with fewer than MinFiles small
// files. A dry run reports the same merges and changes nothing.
func TestCompact_OpenPartitions(t *testing.T) {
	dir := t.TempDir()
	today := time.Now().UTC().Truncate(24 * time.Hour).Add(12 * time.Hour)
	var entries []schema.Entry
	for i := range 2000 {
		e := entryAt(fmt.Sprintf("h%d", i/4%2), fmt.Sprintf("s%d", i%7), strings.Repeat("x", 200))
		e.EntryID = strconv.Itoa(i)
		e.TS = today.AddDate(0, 0, -[]int{0, 1, 2, 5}[i%4]).Add(time.Duration(i) * time.Millisecond)
		if i%4 == 3 && e.Host == "h1" {
			continue // date-5/h1: no files
		}
		entries = append(entries, e)
	}
	last := entryAt("h1", "s0", "alone")
	last.TS = today.AddDate(0, 0, -5)
	entries = append(entries, last) // date-5/h1: one file
	writeAll(t, mustWriter(t, parquet.Config{Dir: dir, PartBytes: 16 << 10}), entries)
	before := checkDir(t, dir)

	dry, err := parquet.Compact(t.Context(), parquet.CompactConfig{Dir: dir, DryRun: true})
	require.NoError(t, err)
	require.Equal(t, before.Files, checkDir(t, dir).Files, "a dry run changes nothing")

	st := mustCompact(t, parquet.CompactConfig{Dir: dir})
	require.Equal(t, dry.Partitions, st.Partitions)
	require.Equal(t, dry.FilesIn, st.FilesIn)
	require.Equal(t, dry.RowsIn, st.RowsIn)
	require.Equal(t, len(dry.Merges), len(st.Merges))
	for i := range st.Merges {
		require.Equal(t, dry.Merges[i].Inputs, st.Merges[i].Inputs)
		require.Equal(t, dry.Merges[i].Output, st.Merges[i].Output)
	}
	var dates []string
	for _, mg := range st.Merges {
		dates = append(dates, mg.Partition.Date+"/"+mg.Partition.Host)
	}
	d := func(n int) string { return today.AddDate(0, 0, -n).Format(time.DateOnly) }
	require.ElementsMatch(t, []string{d(2) + "/h0", d(2) + "/h1", d(5) + "/h0"}, dates)

	after := checkDir(t, dir)
	kept := map[string]parquet.File{}
	for _, f := range after.Files {
		kept[f.Path] = f
	}
	for _, f := range before.Files {
		if p := f.Partition; p.Date == d(0) || p.Date == d(1) || p.Date == d(5) && p.Host == "h1" {
			require.Equal(t, f, kept[f.Path], "open partition or too few files: untouched")
		}
	}
	require.Equal(t, [3]int64{int64(len(entries)), int64(len(entries)), int64(len(entries))}, counts(t, dir))
}

// TestCompact_DamagedInput: a merge whose input is not what the manifest
// says (another size) is skipped and counted, its files left as they
// are; the other partitions are merged.
func TestCompact_DamagedInput(t *testing.T) {
	dir := t.TempDir()
	writeAll(t, mustWriter(t, crashConfig(dir)), genEntries(crashEntries))
	before, err := parquet.ReadManifest(dir)
	require.NoError(t, err)
	bad := before.Files[0]
	f, err := os.OpenFile(filepath.Join(dir, filepath.FromSlash(bad.Path)), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString("x")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	st := mustCompact(t, compactConfig(dir))
	require.Equal(t, 1, st.Skipped)
	require.Equal(t, 5, st.FilesOut)
	m := checkDir(t, dir)
	var kept int
	for _, f := range m.Files {
		if f.Partition == bad.Partition {
			require.NotContains(t, f.Path, "-c1.")
			kept++
		}
	}
	require.Greater(t, kept, 1, "the damaged partition's files are kept")
}

func TestCompactConfig_Validate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   parquet.CompactConfig
		field string
	}{
		{"NoDir", parquet.CompactConfig{}, "dir"},
		{"NegativeAge", parquet.CompactConfig{Dir: "d", MinAge: -time.Hour}, "min_age"},
		{"NegativeTarget", parquet.CompactConfig{Dir: "d", TargetBytes: -1}, "target_bytes"},
		{"OneFile", parquet.CompactConfig{Dir: "d", MinFiles: 1}, "min_files"},
		{"NegativeMemory", parquet.CompactConfig{Dir: "d", MemoryBytes: -1}, "memory_bytes"},
		{"Level", parquet.CompactConfig{Dir: "d", CompressionLevel: 9}, "compression_level"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parquet.Compact(t.Context(), tc.cfg)
			var ce *parquet.ConfigError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, tc.field, ce.Field)
			require.ErrorIs(t, err, parquet.ErrInvalidConfig)
		})
	}
	require.NoError(t, parquet.CompactConfig{Dir: "d"}.Validate())
}

// Environment of the compaction crash child: TestCompactCrashChild run
// again, compacting the directory and stopping dead (waiting for
// SIGKILL) at the given step of the given merge.
const (
	envCompactDir  = "EXPORT_COMPACT_CRASH_DIR"
	envCompactStep = "EXPORT_COMPACT_CRASH_STEP"
	envCompactAt   = "EXPORT_COMPACT_CRASH_AT"
)

// crashCompactConfig merges in passes (a reader never fits in one byte),
// so that every step, "pass" included, happens in every merge.
func crashCompactConfig(dir string) parquet.CompactConfig {
	cfg := compactConfig(dir)
	cfg.MemoryBytes = 1
	return cfg
}

// TestCompactCrashChild is the child of TestCompact_Crash.
func TestCompactCrashChild(t *testing.T) {
	dir := os.Getenv(envCompactDir)
	if dir == "" {
		t.Skip("the child process of TestCompact_Crash")
	}
	step := os.Getenv(envCompactStep)
	at, err := strconv.Atoi(os.Getenv(envCompactAt))
	require.NoError(t, err)
	seen := 0
	cfg := parquet.WithCompactHook(crashCompactConfig(dir), func(s string) {
		if s != step {
			return
		}
		if seen++; seen == at {
			fmt.Println(s)
			os.Stdout.Sync()
			select {} // until SIGKILL
		}
	})
	_, err = parquet.Compact(context.Background(), cfg)
	fmt.Fprintln(os.Stderr, "compact crash child: never reached", step, at, err)
	os.Exit(3)
}

// TestCompact_Crash kills a compaction with SIGKILL at each step of a
// merge (intermediate file written, merged file written, renamed,
// recorded in the manifest, inputs removed), then either opens the
// directory with a Writer and delivers every entry again, as a consumer
// whose acknowledgements were lost would, or compacts again: no
// temporary file is left, the files on disk are those listed, and every
// entry is in exactly one of them.
func TestCompact_Crash(t *testing.T) {
	for _, tc := range []struct {
		step string
		at   int
	}{
		{"pass", 1}, {"written", 1}, {"written", 3}, {"renamed", 1}, {"renamed", 3},
		{"recorded", 1}, {"recorded", 3}, {"removed", 1}, {"removed", 3},
	} {
		for _, next := range []string{"NewWriter", "Compact"} {
			t.Run(fmt.Sprintf("%s#%d/%s", tc.step, tc.at, next), func(t *testing.T) {
				dir := t.TempDir()
				entries := genEntries(crashEntries)
				writeAll(t, mustWriter(t, crashConfig(dir)), entries)
				before, err := parquet.ReadManifest(dir)
				require.NoError(t, err)
				killCompactAt(t, dir, tc.step, tc.at)

				// What the kill left, before recovery.
				tmps, parts := scan(t, dir)
				man, err := parquet.ReadManifest(dir)
				require.NoError(t, err)
				merged := 0
				for _, f := range man.Files {
					if strings.Contains(f.Path, "-c1.") {
						merged++
					}
				}
				switch tc.step {
				case "pass", "written":
					require.NotEmpty(t, tmps, "temporary files of the merge")
					require.Equal(t, tc.at-1, merged)
				case "renamed":
					require.Equal(t, tc.at-1, merged, "the merged file is not listed yet")
					require.Greater(t, len(parts), len(man.Files), "but it is on disk")
				case "recorded":
					require.Equal(t, tc.at, merged)
					require.Greater(t, len(parts), len(man.Files), "unlisted inputs are still on disk")
				case "removed":
					require.Equal(t, tc.at, merged)
					require.Len(t, parts, len(man.Files))
				}

				switch next {
				case "NewWriter":
					w := mustWriter(t, crashConfig(dir))
					checkDir(t, dir)
					writeAll(t, w, entries)
					require.Zero(t, w.Stats().Entries, "every entry is committed")
					require.Equal(t, int64(crashEntries), w.Stats().Skipped)
				case "Compact":
					st := mustCompact(t, compactConfig(dir))
					if tc.step != "removed" {
						require.Positive(t, st.Removed, "leftovers removed")
					}
					m := checkDir(t, dir)
					require.Len(t, m.Files, 6, "every partition merged")
				}
				checkDir(t, dir)
				require.Equal(t, [3]int64{crashEntries, crashEntries, crashEntries}, counts(t, dir))
				var rows int64
				for _, f := range before.Files {
					rows += f.Rows
				}
				require.Equal(t, int64(crashEntries), rows)
			})
		}
	}
}

// killCompactAt runs the compaction crash child on dir and kills it with
// SIGKILL once it reports the step.
func killCompactAt(t *testing.T, dir, step string, at int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCompactCrashChild$")
	cmd.Env = append(os.Environ(), envCompactDir+"="+dir, envCompactStep+"="+step, envCompactAt+"="+strconv.Itoa(at))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	r := bufio.NewReader(out)
	for {
		line, err := r.ReadString('\n')
		require.NoError(t, err, "the child must reach %s #%d", step, at)
		if line == step+"\n" {
			break
		}
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	err = cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	require.Equal(t, syscall.SIGKILL, exit.Sys().(syscall.WaitStatus).Signal())
}

// TestCompact_ConcurrentWriter runs a Writer committing small files into
// partitions that two compactors merge at the same time, over and over:
// no committed file is lost from the manifest, no entry is in two listed
// files, and a Writer opened afterwards skips every entry delivered again
// (the merged files keep the stream ranges).
func TestCompact_ConcurrentWriter(t *testing.T) {
	dir := t.TempDir()
	const n = 6000
	entries := genEntries(n)
	wcfg := parquet.Config{Dir: dir, PartBytes: 16 << 10, MemoryBytes: 64 << 10, RowGroupRows: 100}
	w := mustWriter(t, wcfg)
	ctx := t.Context()

	var done atomic.Bool
	var wg sync.WaitGroup
	var merges [2]int
	errs := make(chan error, 3)
	for i := range merges {
		wg.Go(func() {
			for !done.Load() {
				st, err := parquet.Compact(ctx, parquet.CompactConfig{Dir: dir, ClosedBefore: farFuture, RowGroupRows: 100, MinFiles: 3})
				if err != nil {
					errs <- err
					return
				}
				merges[i] += st.FilesOut
			}
		})
	}
	wg.Go(func() {
		defer done.Store(true)
		for i := range entries {
			if err := w.Write(ctx, &entries[i], uint64(i+1)); err != nil {
				errs <- err
				return
			}
		}
		if err := w.Close(ctx); err != nil {
			errs <- err
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Positive(t, merges[0]+merges[1], "compactions happened while the writer committed")
	t.Logf("files committed %d, merged files %d+%d", w.Stats().Files, merges[0], merges[1])

	checkDir(t, dir)
	require.Equal(t, [3]int64{n, n, n}, counts(t, dir), "every committed entry listed once")
	mustCompact(t, compactConfig(dir))
	m := checkDir(t, dir)
	require.Len(t, m.Files, 12, "6000 entries cross midnight: twelve partitions")
	require.Equal(t, [3]int64{n, n, n}, counts(t, dir))

	w2 := mustWriter(t, wcfg)
	writeAll(t, w2, entries)
	require.Equal(t, int64(n), w2.Stats().Skipped)
	require.Equal(t, m.Files, checkDir(t, dir).Files)
}

// TestCompact_RunningCompactionTemps: a Writer that opens while a
// compaction holds its lock leaves the compaction's temporary files
// alone; once the lock is free, the next open removes them.
func TestCompact_RunningCompactionTemps(t *testing.T) {
	dir := t.TempDir()
	writeAll(t, mustWriter(t, parquet.Config{Dir: dir}), genEntries(50))
	pdir := filepath.Join(dir, "format=codex", "date=2026-05-01", "host=host-1")
	tmp := filepath.Join(pdir, ".compact-part-1-9-c1.parquet.tmp")
	require.NoError(t, os.WriteFile(tmp, []byte("x"), 0o644))

	f, err := os.OpenFile(filepath.Join(dir, parquet.CompactLockName), os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	require.NoError(t, unix.Flock(int(f.Fd()), unix.LOCK_EX))
	w := mustWriter(t, parquet.Config{Dir: dir})
	require.Zero(t, w.Stats().Removed)
	require.FileExists(t, tmp, "a running compaction's")
	require.NoError(t, w.Close(t.Context()))
	require.NoError(t, f.Close()) // releases the lock

	w = mustWriter(t, parquet.Config{Dir: dir})
	require.Equal(t, int64(1), w.Stats().Removed)
	require.NoFileExists(t, tmp)
}

// TestCompact_BoundedMemory merges files holding far more rows than
// MemoryBytes: the merge runs in passes, and the live heap grows by what
// a merge of three small files costs (the zstd encoder's history, 32 MB,
// and parquet-go's page buffer pools: fixed costs) plus a few
// MemoryBytes, not by the rows merged. (Measured from 4 to 128 MB of
// text: 33 to 59 MB, noisy, not growing with the inputs.)
func TestCompact_BoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 64 MB of rows")
	}
	const limit = 4 << 20
	small, big := t.TempDir(), t.TempDir()
	_, smallFiles := writeRows(t, small, 3<<20)
	size, files := writeRows(t, big, 64<<20)
	require.Greater(t, files, 20)

	defer debug.SetGCPercent(debug.SetGCPercent(5))
	passes := 0
	compact := func(dir string) (parquet.CompactStats, int64) {
		cfg := parquet.WithCompactHook(parquet.CompactConfig{Dir: dir, ClosedBefore: farFuture, RowGroupRows: 1000, MemoryBytes: limit},
			func(s string) {
				if s == "pass" {
					passes++
				}
			})
		var st parquet.CompactStats
		growth := peakGrowth(func() { st = mustCompact(t, cfg) })
		return st, growth
	}
	st, fixed := compact(small)
	require.Equal(t, smallFiles, st.FilesIn)
	passes = 0
	st, growth := compact(big)
	t.Logf("%d MB of text in %d files, %d passes: heap grew by %.1f MB (%.1f MB merging %d small files)",
		size>>20, files, passes, float64(growth)/(1<<20), float64(fixed)/(1<<20), smallFiles)
	require.Equal(t, files, st.FilesIn)
	require.Equal(t, 1, st.FilesOut)
	require.Positive(t, passes, "more inputs than fit in memory: merged in passes")
	// Holding the rows would take their text and about as much again in
	// row structs, beside the fixed costs; merging holds a few
	// MemoryBytes (plus noise: garbage the sampler sees live in
	// parquet-go's pools).
	require.Less(t, growth, fixed+size, "bounded by MemoryBytes, not by the inputs")
	require.Equal(t, [3]int64{st.RowsIn, st.RowsIn, st.RowsIn}, counts(t, big))
}

// writeRows commits entries of one partition with about size bytes of
// text to dir, in files of 2 MiB of rows, made one at a time (the test
// holds none), and returns the text's size and the number of files.
func writeRows(t *testing.T, dir string, size int64) (int64, int) {
	w := mustWriter(t, parquet.Config{Dir: dir, PartBytes: 2 << 20, RowGroupRows: 1000})
	ctx := t.Context()
	var n int64
	for i := 0; n < size; i++ {
		e := entryAt("h", fmt.Sprintf("s%03d", i%97), fmt.Sprintf("%d %s", i, strings.Repeat(strconv.Itoa(i*7919), 120)))
		e.EntryID = strconv.Itoa(i)
		e.TS = e.TS.Add(time.Duration(i%5000) * time.Millisecond)
		n += int64(len(e.Text))
		require.NoError(t, w.Write(ctx, &e, uint64(i+1)))
	}
	require.NoError(t, w.Close(ctx))
	return n, len(w.Manifest())
}

// peakGrowth runs f and returns how far the heap grew above what it was
// before, sampled every millisecond.
func peakGrowth(f func()) int64 {
	runtime.GC()
	base, peak := heapBytes(), uint64(0)
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			peak = max(peak, heapBytes())
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	f()
	close(stop)
	<-sampled
	return int64(peak) - int64(base)
}

// heapBytes returns the bytes of heap objects, garbage not yet swept
// included.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// BenchmarkCompact merges the small files of a generated 32 MB corpus
// (Claude Code, pi, Codex; text kept, raw not), committed in parts of 1
// MiB of rows: read, k-way merge, Parquet encoding, zstd, fsync and the
// manifest. Bytes are those of the files merged; the cpu-s metrics count
// the process's CPU time during Compact (fsync waits, which dominate wall
// time on a busy disk, are not in it; copying the inputs for each round
// is not either).
func BenchmarkCompact(b *testing.B) {
	entries := generatedEntries(b, 32<<20)
	for i := range entries {
		entries[i].Raw = nil
	}
	src := b.TempDir()
	w, err := parquet.NewWriter(parquet.Config{Dir: src, PartBytes: 1 << 20})
	require.NoError(b, err)
	writeEntries(b, w, entries)
	var in int64
	for _, f := range w.Manifest() {
		in += f.Bytes
	}
	b.SetBytes(in)
	b.ReportAllocs()
	var st parquet.CompactStats
	var cpu time.Duration
	passes := 0
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := filepath.Join(b.TempDir(), "out")
		require.NoError(b, os.CopyFS(dir, os.DirFS(src)))
		b.StartTimer()
		cpu0 := cpuTime(b)
		st, err = parquet.Compact(b.Context(), parquet.WithCompactHook(parquet.CompactConfig{Dir: dir, ClosedBefore: farFuture},
			func(s string) {
				if s == "pass" {
					passes++
				}
			}))
		cpu += cpuTime(b) - cpu0
		require.NoError(b, err)
	}
	b.ReportMetric(float64(st.RowsIn)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(st.RowsIn)*float64(b.N)/cpu.Seconds(), "rows/cpu-s")
	b.ReportMetric(float64(in)*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
	b.ReportMetric(float64(st.FilesIn), "files-in")
	b.ReportMetric(float64(st.FilesOut), "files-out")
	b.ReportMetric(float64(passes)/float64(b.N), "passes")
	b.ReportMetric(float64(st.BytesOut)/float64(st.BytesIn), "out/in")
}
