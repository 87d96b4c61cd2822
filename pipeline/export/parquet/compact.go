package parquet

import (
	"bufio"
	"cmp"
	"container/heap"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/sessionpipe/sessionpipe/pipeline/export/internal/commit"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Log attribute keys of Compact, beside those of logkeys.go.
const (
	KeyPartition  = commit.KeyPartition // a partition's directory, relative to the output root
	KeyInputs     = "inputs"            // files merged into one
	KeyDuplicates = "duplicates"        // rows dropped as copies of an entry
)

// Defaults of a [CompactConfig]'s zero fields.
const (
	// DefaultCompactMinAge closes a partition one day after its date
	// ended: at any time of day D, partitions dated before D-1 are
	// closed, so yesterday's late entries are not fought over.
	DefaultCompactMinAge = 24 * time.Hour

	// DefaultCompactTargetBytes is the size merged files are made up to,
	// and below which a file is small enough to merge.
	DefaultCompactTargetBytes = 256 << 20

	// DefaultCompactMinFiles is the number of small files a closed
	// partition needs to be compacted.
	DefaultCompactMinFiles = 2

	// DefaultCompactMemoryBytes bounds what the files being read hold in
	// memory at once.
	DefaultCompactMemoryBytes = 64 << 20

	// DefaultCompactLockTimeout bounds each wait for the manifest lock,
	// which a Writer holds for milliseconds per commit.
	DefaultCompactLockTimeout = 30 * time.Second
)

// CompactConfig configures [Compact]. Zero fields take the defaults; the
// file format fields (RowGroupRows, PageBytes, CompressionLevel,
// WriterVersion) take the same defaults as a [Config]'s, so that merged
// files are written as the exporter writes its parts.
type CompactConfig struct {
	// Dir is the output root of a [Writer]. Required.
	Dir string

	// ClosedBefore, when set, closes the partitions whose date is before
	// its UTC date. When zero, a partition is closed once its day ended
	// MinAge ago.
	ClosedBefore time.Time

	// MinAge is how long after the end of its (UTC) day a partition is
	// closed, when ClosedBefore is zero. Entries of a closed partition
	// may still come (a host that was offline); they go to new files,
	// which a later compaction merges.
	MinAge time.Duration

	// TargetBytes is the size of the merged files: files smaller than it
	// are merged into files of up to about it (the sum of the inputs'
	// sizes; dropped duplicates and better compression make a merged file
	// smaller).
	TargetBytes int64

	// MinFiles is the number of files below TargetBytes a closed
	// partition needs before it is compacted (2 or more).
	MinFiles int

	// MemoryBytes bounds the memory used to read the files being merged:
	// their pages and buffered rows. When a merge has more inputs than
	// fit, they are merged in passes through temporary files. Writing
	// the merged file adds, as for a Writer, the compressed pages of one
	// row group.
	MemoryBytes int64

	RowGroupRows     int64      // rows per row group, as Config.RowGroupRows
	PageBytes        int        // as Config.PageBytes
	CompressionLevel zstd.Level // as Config.CompressionLevel
	WriterVersion    string     // as Config.WriterVersion

	// DryRun plans the merges and reports them (in the stats and the
	// log) without writing or removing anything.
	DryRun bool

	// LockTimeout bounds each wait for the manifest lock (default
	// [DefaultCompactLockTimeout]): a process that holds it longer (an
	// exporter stopped with SIGSTOP or hung on its disk in the middle of
	// a commit) makes Compact return a *[LockHeldError] naming it.
	// The compaction lock is waited for without limit (a second Compact
	// waits for the first), until ctx is done.
	LockTimeout time.Duration

	// Logger receives each merge at Info; nil discards.
	Logger *slog.Logger

	// hook, when set (by tests), is called at each step of a merge:
	// "pass" (an intermediate file of a merge in passes written),
	// "written" (the merged file written and synced), "renamed" (renamed
	// into place, directory synced, not yet recorded), "recorded"
	// (manifest switched), "removed" (inputs removed).
	hook func(step string)
}

// Validate reports the first invalid field as a *[ConfigError].
func (c CompactConfig) Validate() error {
	switch {
	case c.Dir == "":
		return &ConfigError{Field: "dir", Value: c.Dir, Err: ErrInvalidConfig, Why: "required"}
	case c.MinAge < 0:
		return &ConfigError{Field: "min_age", Value: c.MinAge, Err: ErrInvalidConfig, Why: "negative"}
	case c.TargetBytes < 0:
		return &ConfigError{Field: "target_bytes", Value: c.TargetBytes, Err: ErrInvalidConfig, Why: "negative"}
	case c.MinFiles < 0 || c.MinFiles == 1:
		return &ConfigError{Field: "min_files", Value: c.MinFiles, Err: ErrInvalidConfig, Why: "below 2"}
	case c.MemoryBytes < 0:
		return &ConfigError{Field: "memory_bytes", Value: c.MemoryBytes, Err: ErrInvalidConfig, Why: "negative"}
	case c.LockTimeout < 0:
		return &ConfigError{Field: "lock_timeout", Value: c.LockTimeout, Err: ErrInvalidConfig, Why: "negative"}
	}
	return c.format().Validate()
}

// withDefaults returns c with its zero fields set to the defaults.
func (c CompactConfig) withDefaults() CompactConfig {
	if c.MinAge == 0 {
		c.MinAge = DefaultCompactMinAge
	}
	if c.TargetBytes == 0 {
		c.TargetBytes = DefaultCompactTargetBytes
	}
	if c.MinFiles == 0 {
		c.MinFiles = DefaultCompactMinFiles
	}
	if c.MemoryBytes == 0 {
		c.MemoryBytes = DefaultCompactMemoryBytes
	}
	if c.LockTimeout == 0 {
		c.LockTimeout = DefaultCompactLockTimeout
	}
	f := c.format().withDefaults()
	c.RowGroupRows, c.PageBytes, c.CompressionLevel, c.WriterVersion = f.RowGroupRows, f.PageBytes, f.CompressionLevel, f.WriterVersion
	if c.Logger == nil {
		c.Logger = f.Logger
	}
	return c
}

// format returns the Writer configuration of the file format fields.
func (c CompactConfig) format() Config {
	return Config{Dir: c.Dir, RowGroupRows: c.RowGroupRows, PageBytes: c.PageBytes,
		CompressionLevel: c.CompressionLevel, WriterVersion: c.WriterVersion, Logger: c.Logger}
}

// closedBefore returns the first date (YYYY-MM-DD) that is not closed at
// now.
func (c CompactConfig) closedBefore(now time.Time) string {
	t := c.ClosedBefore
	if t.IsZero() {
		t = now.Add(-c.MinAge)
	}
	return t.UTC().Format(time.DateOnly)
}

// CompactStats counts what [Compact] did, or would do in a dry run.
type CompactStats struct {
	Partitions int   // partitions compacted
	FilesIn    int   // files merged
	FilesOut   int   // files they were merged into
	RowsIn     int64 // rows of the files merged
	RowsOut    int64 // rows of the merged files: RowsIn - Duplicates
	Duplicates int64 // rows dropped: an entry already in the partition under a lower sequence
	BytesIn    int64 // bytes of the files merged
	BytesOut   int64 // bytes of the merged files
	Removed    int64 // leftovers of interrupted commits or merges removed at start
	Skipped    int   // merges skipped: an input damaged, missing, of another schema, or no longer listed
	Merges     []Merge
}

// Merge is one merge [Compact] did, or would do in a dry run.
type Merge struct {
	Partition Partition
	Inputs    []string // paths relative to the output root, as in the manifest
	Output    string   // the merged file's path
	RowsIn    int64
	RowsOut   int64 // in a dry run, RowsIn
	BytesIn   int64
	BytesOut  int64 // in a dry run, 0
}

// ErrCompactInput is wrapped by the error logged for a merge skipped
// because of one of its inputs: missing, damaged (size or rows other than
// the manifest says, not sorted), or written with another schema version.
// Compact skips the merge, counts it in CompactStats.Skipped and goes on.
var ErrCompactInput = errors.New("export: compaction input unusable")

// Compact merges the small files of the closed partitions of the output
// root cfg.Dir into larger ones, and returns what it did. A partition is
// closed when its date is before cfg.ClosedBefore (by default, before
// yesterday, UTC); the partition of entries without ts is never closed.
// In each closed partition with at least cfg.MinFiles files below
// cfg.TargetBytes, those files are taken in stream order and merged in
// groups of up to cfg.TargetBytes.
//
// A merged file has the schema, encodings, compression, row group size
// and key-value metadata of a Writer's part; its rows are sorted by
// (session_id, ts, seq) and an entry that appears twice (a tailer re-sent
// it after the stream's duplicate window: the same key under two
// sequences) is kept once, with the lowest sequence. Duplicates are found
// among rows with the same session_id and ts, which both copies of an
// entry have. The merged file's stream range is the union of its inputs'
// (the sequences of dropped duplicates lie in it, so a Writer still skips
// them when they are delivered again), and it is named
// part-<first>-<last>-c<gen>.parquet, gen one more than its inputs'
// (a Writer's part is generation 0): no Writer nor another merge can
// produce that name.
//
// Inputs are read, not loaded: a k-way merge of their sorted rows, in
// passes through temporary files when more inputs than cfg.MemoryBytes
// allows are merged.
//
// Each merge commits as a Writer's part does (see the package
// documentation, "Commit protocol"): the merged file is written to a
// temporary file and synced; under the manifest lock, the manifest is
// read again, the inputs are checked to be still listed, the file is
// renamed into place, the directory synced and the manifest rewritten
// atomically with the inputs replaced by the merged file; then the
// inputs are removed. A crash at any point leaves every entry in exactly
// one listed file, and the next [NewWriter] or Compact removes what is
// left.
//
// Compact is safe beside a [Writer] committing to the same directory (it
// never takes the Writer's LOCK; both change the manifest only under the
// manifest lock, re-reading it first) and beside another Compact (it
// holds the compaction lock, _compact.lock, for its whole run: a second
// Compact waits for the first). A fleet-wide lease, for directories
// shared by several hosts, is the caller's.
//
// Compact returns at the first error of the file system or the manifest,
// when the manifest lock is held past cfg.LockTimeout (a *[LockHeldError]
// naming the holder), and when ctx is done; the stats then count the merges done. A merge
// skipped because of an unusable input is logged, counted in Skipped and
// not an error.
func Compact(ctx context.Context, cfg CompactConfig) (CompactStats, error) {
	var st CompactStats
	if err := cfg.Validate(); err != nil {
		return st, err
	}
	cfg = cfg.withDefaults()
	if info, err := os.Stat(cfg.Dir); err != nil {
		return st, fmt.Errorf("compact: %w", err)
	} else if !info.IsDir() {
		return st, fmt.Errorf("compact: %s is not a directory", cfg.Dir)
	}
	c := &compactor{cfg: cfg, log: cfg.Logger.With(KeyComponent, "export")}
	before := cfg.closedBefore(time.Now())

	if cfg.DryRun {
		m, err := ReadManifest(cfg.Dir)
		if err != nil {
			return st, err
		}
		for _, g := range planCompaction(m, before, cfg) {
			mg := g.merge()
			mg.RowsOut = mg.RowsIn
			st.add(mg)
			c.log.Info("would merge", KeyPartition, g.partition.Dir(), KeyInputs, len(g.files), KeyRows, mg.RowsIn, KeyBytes, mg.BytesIn, KeyFile, mg.Output)
		}
		return st, nil
	}

	cl, err := lockFile(ctx, cfg.Dir, CompactLockName, 0)
	if err != nil {
		return st, err
	}
	defer cl.unlock()
	m, err := c.clean(ctx, &st)
	if err != nil {
		return st, err
	}
	groups := planCompaction(m, before, cfg)
	if len(groups) == 0 {
		return st, nil
	}
	if c.enc, err = newEncoder(cfg.format().withDefaults()); err != nil {
		return st, err
	}
	for _, g := range groups {
		if err := ctx.Err(); err != nil {
			return st, context.Cause(ctx)
		}
		mg, err := c.merge(ctx, g)
		if errors.Is(err, ErrCompactInput) {
			st.Skipped++
			c.log.Warn("merge skipped", KeyPartition, g.partition.Dir(), KeyError, err.Error())
			continue
		}
		if err != nil {
			return st, err
		}
		st.add(mg)
		c.log.Info("merged", KeyPartition, g.partition.Dir(), KeyInputs, len(mg.Inputs), KeyFile, mg.Output,
			KeyRows, mg.RowsOut, KeyBytes, mg.BytesOut, KeyDuplicates, mg.RowsIn-mg.RowsOut)
	}
	return st, nil
}

// add counts mg.
func (st *CompactStats) add(mg Merge) {
	if n := len(st.Merges); n == 0 || st.Merges[n-1].Partition != mg.Partition {
		st.Partitions++
	}
	st.FilesIn += len(mg.Inputs)
	st.FilesOut++
	st.RowsIn += mg.RowsIn
	st.RowsOut += mg.RowsOut
	st.Duplicates += mg.RowsIn - mg.RowsOut
	st.BytesIn += mg.BytesIn
	st.BytesOut += mg.BytesOut
	st.Merges = append(st.Merges, mg)
}

// compactGroup is one planned merge: files of one partition, in stream order.
type compactGroup struct {
	partition Partition
	files     []File
}

// planCompaction returns the merges to do in m's closed partitions (dated before
// the date before), partition by partition.
func planCompaction(m *Manifest, before string, cfg CompactConfig) []compactGroup {
	small := make(map[Partition][]File)
	for _, f := range m.Files {
		if p := f.Partition; p.Date != "" && p.Date < before && f.Bytes < cfg.TargetBytes {
			small[p] = append(small[p], f)
		}
	}
	parts := make([]Partition, 0, len(small))
	for p, files := range small {
		if len(files) >= cfg.MinFiles {
			parts = append(parts, p)
		}
	}
	slices.SortFunc(parts, func(a, b Partition) int { return strings.Compare(a.Dir(), b.Dir()) })
	var groups []compactGroup
	for _, p := range parts {
		files := small[p]
		slices.SortFunc(files, func(a, b File) int { return cmp.Compare(a.FirstSeq, b.FirstSeq) })
		var g []File
		var size int64
		for _, f := range files {
			if len(g) > 0 && size+f.Bytes > cfg.TargetBytes {
				if len(g) > 1 {
					groups = append(groups, compactGroup{partition: p, files: g})
				}
				g, size = nil, 0
			}
			g = append(g, f)
			size += f.Bytes
		}
		if len(g) > 1 {
			groups = append(groups, compactGroup{partition: p, files: g})
		}
	}
	return groups
}

// merge returns g as a Merge: its inputs and the merged file's path.
func (g compactGroup) merge() Merge {
	mg := Merge{Partition: g.partition, Output: path.Join(g.partition.Dir(), g.name())}
	for _, f := range g.files {
		mg.Inputs = append(mg.Inputs, f.Path)
		mg.RowsIn += f.Rows
		mg.BytesIn += f.Bytes
	}
	return mg
}

// span returns the union of the inputs' stream ranges.
func (g compactGroup) span() (first, last uint64) {
	first = g.files[0].FirstSeq
	for _, f := range g.files {
		first = min(first, f.FirstSeq)
		last = max(last, f.LastSeq)
	}
	return first, last
}

// name returns the merged file's name: its stream range and a generation
// above its inputs'. Two files listed at once never have the same first
// sequence in one partition (each original part's range ends up in one
// listed file), a Writer names new parts from sequences above every
// listed one, and the generation tells the merged file from an input
// that spans the same range.
func (g compactGroup) name() string {
	first, last := g.span()
	gen := 0
	for _, f := range g.files {
		_, _, n, _ := parseDataName(path.Base(f.Path))
		gen = max(gen, n)
	}
	return fmt.Sprintf("part-%d-%d-c%d.parquet", first, last, gen+1)
}

// Temporary files of a compaction: ".compact-<name>.tmp" in the
// partition's directory, for the merged file and for the intermediate
// files of a merge in passes.
const compactTmpPrefix = commit.TmpPrefix + "compact-"

// isCompactTmp reports whether base is a temporary file of a compaction.
func isCompactTmp(base string) bool {
	return strings.HasPrefix(base, compactTmpPrefix) && strings.HasSuffix(base, commit.TmpSuffix)
}

func compactTmpName(name string) string { return compactTmpPrefix + name + commit.TmpSuffix }

// compactor runs the merges of one Compact.
type compactor struct {
	cfg CompactConfig
	log *slog.Logger
	enc *encoder
	buf *bufio.Writer
}

func (c *compactor) step(name string) {
	if c.cfg.hook != nil {
		c.cfg.hook(name)
	}
}

// clean removes, holding the compaction lock, what an interrupted merge
// or commit left: the compaction's temporary files, the manifest's, and
// Parquet files the manifest does not list (found by a walk before, and
// removed under, the manifest lock). The Writer's temporary files are
// left to the next NewWriter: a Writer may be writing them. It returns
// the manifest read under the lock; a directory without a manifest has
// nothing to compact.
func (c *compactor) clean(ctx context.Context, st *CompactStats) (*Manifest, error) {
	l, err := scanLeftovers(c.cfg.Dir, false, true)
	if err != nil {
		return nil, err
	}
	ml, err := c.lockManifest(ctx)
	if err != nil {
		return nil, err
	}
	defer ml.unlock()
	m, exists, err := readManifest(c.cfg.Dir)
	if err != nil {
		return nil, err
	}
	st.Removed, err = l.remove(c.cfg.Dir, m, exists, c.log)
	return m, err
}

// lockManifest takes the manifest lock, waiting at most LockTimeout.
func (c *compactor) lockManifest(ctx context.Context) (*fileLock, error) {
	return lockFile(ctx, c.cfg.Dir, ManifestLockName, c.cfg.LockTimeout)
}

// merge writes g's files as one merged file and commits it in their
// place.
func (c *compactor) merge(ctx context.Context, g compactGroup) (Merge, error) {
	root := c.cfg.Dir
	dir := g.partition.Path(root)
	mg, tmp, out, err := c.build(ctx, g, root)
	if err != nil {
		return mg, err
	}
	if err := c.switchFiles(ctx, tmp, g.files, out); err != nil {
		return mg, err
	}
	c.step("recorded")
	// The inputs are unlisted: removing them is tidying. Whoever cleans
	// up next removes what a crash here left.
	for _, f := range g.files {
		p := filepath.Join(root, filepath.FromSlash(f.Path))
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return mg, fmt.Errorf("remove merged input: %w", err)
		}
	}
	if err := commit.SyncDir(dir); err != nil {
		return mg, err
	}
	c.step("removed")
	return mg, nil
}

// build writes the merged file of g's files, found under root, to a
// synced temporary file in their partition's directory, and describes
// it.
func (c *compactor) build(ctx context.Context, g compactGroup, root string) (mg Merge, tmp string, out File, err error) {
	mg = g.merge()
	dir := g.partition.Path(root)
	name := path.Base(mg.Output)
	tmp = filepath.Join(dir, compactTmpName(name))
	first, last := g.span()
	meta := mergeMeta{partition: g.partition, first: first, last: last}

	// Check every input first (size, rows, schema), and estimate what its
	// reader costs; a merge opens its inputs only when it reads them.
	inputs := make([]mergeInput, 0, len(g.files))
	for _, f := range g.files {
		in := mergeInput{path: filepath.Join(root, filepath.FromSlash(f.Path)), bytes: f.Bytes, rows: f.Rows}
		s, err := openMergeSource(in, c.cfg)
		if err != nil {
			return mg, "", out, err
		}
		in.cost = s.cost
		s.close()
		inputs = append(inputs, in)
	}
	var temps []string // intermediate files, removed when merged or on error
	defer func() {
		for _, p := range temps {
			os.Remove(p)
		}
	}()
	// Merge in passes while the inputs' readers would not fit in memory:
	// the first ones that fit (two at least) into an intermediate file,
	// which goes last.
	for pass := 1; len(inputs) > 2 && inputsCost(inputs) > c.cfg.MemoryBytes; pass++ {
		k := 2
		for k < len(inputs) && inputsCost(inputs[:k+1]) <= c.cfg.MemoryBytes {
			k++
		}
		run := mergeInput{path: filepath.Join(dir, compactTmpName(fmt.Sprintf("pass%d-%s", pass, name))), temp: true}
		temps = append(temps, run.path)
		res, err := c.mergeInto(ctx, run.path, inputs[:k], meta)
		if err != nil {
			return mg, "", out, err
		}
		c.step("pass")
		run.bytes, run.rows = res.bytes, res.rows
		s, err := openMergeSource(run, c.cfg)
		if err != nil {
			return mg, "", out, err
		}
		run.cost = s.cost
		s.close()
		inputs = append(inputs[k:], run)
	}
	res, err := c.mergeInto(ctx, tmp, inputs, meta)
	if err != nil {
		os.Remove(tmp)
		return mg, "", out, err
	}
	c.step("written")
	mg.RowsOut, mg.BytesOut = res.rows, res.bytes
	out = File{
		Path:      mg.Output,
		Partition: g.partition,
		Rows:      res.rows,
		Bytes:     res.bytes,
		SHA256:    res.sum,
		FirstSeq:  first,
		LastSeq:   last,
	}
	if res.minTS != 0 {
		out.MinTS = time.UnixMicro(res.minTS).UTC()
		out.MaxTS = time.UnixMicro(res.maxTS).UTC()
	}
	return mg, tmp, out, nil
}

// mergeInput is a file to merge: an input of the merge, or an
// intermediate file of a merge in passes.
type mergeInput struct {
	path  string
	bytes int64 // its size and rows, as the manifest says
	rows  int64
	cost  int64 // what its reader holds, as estimated
	temp  bool  // an intermediate file: removed once merged
}

// inputsCost returns the memory the readers of ins hold, as estimated.
func inputsCost(ins []mergeInput) int64 {
	var n int64
	for _, in := range ins {
		n += in.cost
	}
	return n
}

// mergeInto opens ins and merges them into the file path (see
// compactor.write); intermediate files among ins are removed once
// merged.
func (c *compactor) mergeInto(ctx context.Context, path string, ins []mergeInput, meta mergeMeta) (mergeResult, error) {
	srcs := make([]*mergeSource, 0, len(ins))
	defer func() {
		for _, s := range srcs {
			s.close()
		}
	}()
	for _, in := range ins {
		s, err := openMergeSource(in, c.cfg)
		if err != nil {
			return mergeResult{}, err
		}
		srcs = append(srcs, s)
	}
	res, err := c.write(ctx, path, srcs, meta)
	if err != nil {
		return res, err
	}
	for _, s := range srcs {
		s.close()
		if s.temp {
			os.Remove(s.path)
		}
	}
	return res, nil
}

// switchFiles commits the merged file: under the manifest lock, it reads
// the manifest again, checks that the inputs are still listed as they
// were, renames the synced temporary file tmp to out's path, syncs the
// directory and rewrites the manifest with the inputs replaced by out
// (added last, as the file committed last). On error tmp is removed, and
// so is the renamed file, under the lock, if the manifest was not
// changed: the inputs stay listed. A manifest renamed into place but not
// synced ([ErrNotDurable]) lists the merged file instead of the inputs:
// the merged file stays (the inputs, unlisted, are a leftover to remove;
// had the manifest's rename not survived a crash, the merged file would
// be the leftover and the inputs listed still).
func (c *compactor) switchFiles(ctx context.Context, tmp string, inputs []File, out File) (err error) {
	root := c.cfg.Dir
	final := filepath.Join(root, filepath.FromSlash(out.Path))
	ml, err := c.lockManifest(ctx)
	if err != nil {
		os.Remove(tmp)
		return err
	}
	defer ml.unlock()
	renamed := false
	defer func() { // before the unlock
		if err != nil {
			os.Remove(tmp)
			if renamed && !errors.Is(err, ErrNotDurable) {
				os.Remove(final)
			}
		}
	}()
	m, err := rereadManifest(root)
	if err != nil {
		return err
	}
	gone := make(map[string]string, len(inputs))
	for _, f := range inputs {
		gone[f.Path] = f.SHA256
	}
	files := make([]File, 0, len(m.Files)+1-len(inputs))
	for _, f := range m.Files {
		if sum, ok := gone[f.Path]; ok && sum == f.SHA256 {
			delete(gone, f.Path)
			continue
		}
		files = append(files, f)
	}
	if len(gone) > 0 {
		for p := range gone {
			return fmt.Errorf("%w: %s and %d other inputs no longer listed", ErrCompactInput, p, len(gone)-1)
		}
	}
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("rename %s: %w", tmp, err)
	}
	renamed = true
	if err := commit.SyncDir(filepath.Dir(final)); err != nil {
		return err
	}
	c.step("renamed")
	out.Committed = time.Now().UTC()
	m.Files = append(files, out)
	return m.write(root)
}

// mergeMeta is what a file's key-value metadata says beside the schema
// version and the writer.
type mergeMeta struct {
	partition   Partition
	first, last uint64
}

// mergeResult describes a file written by compactor.write.
type mergeResult struct {
	rows, bytes  int64
	sum          string
	minTS, maxTS int64
}

// write merges the rows of srcs, each sorted by (session_id, ts, seq),
// into the file path, sorted the same way, keeping the first row (lowest
// seq) of each key among the rows with the same session_id and ts, and
// syncs it.
func (c *compactor) write(ctx context.Context, path string, srcs []*mergeSource, meta mergeMeta) (mergeResult, error) {
	var res mergeResult
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return res, fmt.Errorf("create %s: %w", path, err)
	}
	defer f.Close()
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(f, h)}
	if c.buf == nil {
		c.buf = bufio.NewWriterSize(cw, 1<<20)
	} else {
		c.buf.Reset(cw)
	}
	enc := c.enc
	enc.pw = parquet.NewGenericWriter[row](c.buf, partWriterOptions(enc.cfg, enc.codec)...)
	defer func() { enc.pw = nil; clear(enc.batch); enc.batch = enc.batch[:0] }()
	for _, kv := range [...][2]string{
		{MetaSchemaVersion, strconv.Itoa(schema.Version)},
		{MetaFirstSeq, strconv.FormatUint(meta.first, 10)},
		{MetaLastSeq, strconv.FormatUint(meta.last, 10)},
		{MetaFormat, meta.partition.Format},
		{MetaDate, meta.partition.Date},
		{MetaHost, meta.partition.Host},
		{MetaWriter, enc.cfg.WriterVersion},
	} {
		enc.pw.SetKeyValueMetadata(kv[0], kv[1])
	}

	q := make(mergeQueue, 0, len(srcs))
	for _, s := range srcs {
		ok, err := s.next()
		if err != nil {
			return res, err
		}
		if ok {
			q = append(q, s)
		}
	}
	heap.Init(&q)
	// The keys of the rows written with the current (session_id, ts):
	// the copies of an entry are among them.
	var (
		session string
		ts      int64
		keys    = make(map[string]struct{})
		n       int
	)
	for len(q) > 0 {
		s := q[0]
		r := &s.buf[s.i]
		if r.SessionID != session || r.tsKey() != ts || res.rows == 0 {
			session, ts = r.SessionID, r.tsKey()
			clear(keys)
		}
		if _, dup := keys[r.Key]; !dup {
			keys[r.Key] = struct{}{}
			enc.batch = append(enc.batch, *r)
			res.rows++
			if ts := r.tsKey(); ts != 0 {
				if res.minTS == 0 || ts < res.minTS {
					res.minTS = ts
				}
				res.maxTS = max(res.maxTS, ts)
			}
			if len(enc.batch) == cap(enc.batch) {
				if err := enc.flush(); err != nil {
					return res, err
				}
			}
		}
		if n++; n%writeBatch == 0 {
			if err := ctx.Err(); err != nil {
				return res, context.Cause(ctx)
			}
		}
		s.i++
		ok, err := s.next()
		if err != nil {
			return res, err
		}
		if ok {
			heap.Fix(&q, 0)
		} else {
			heap.Pop(&q)
		}
	}
	if err := enc.flush(); err != nil {
		return res, err
	}
	if err := enc.pw.Close(); err != nil {
		return res, fmt.Errorf("close parquet writer: %w", err)
	}
	err = c.buf.Flush()
	if err == nil {
		err = f.Sync()
	}
	if e := f.Close(); err == nil {
		err = e
	}
	if err != nil {
		return res, fmt.Errorf("write %s: %w", path, err)
	}
	res.bytes, res.sum = cw.n, hex.EncodeToString(h.Sum(nil))
	return res, nil
}

// partWriterOptions returns the Parquet writer options of every file the
// package writes, parts (encoder.encode) and merged files alike, so that
// a merged file differs from a part in nothing but its rows:
// TestCompact_SameAsWriter checks that it is byte for byte the part a
// Writer writes from the same entries.
func partWriterOptions(cfg Config, codec *codec) []parquet.WriterOption {
	opts := []parquet.WriterOption{
		parquet.Compression(codec),
		parquet.MaxRowsPerRowGroup(cfg.RowGroupRows),
		parquet.PageBufferSize(cfg.PageBytes),
		parquet.DataPageStatistics(true),
		parquet.ColumnIndexSizeLimit(func([]string) int { return statsBytes }),
		parquet.CreatedBy(cfg.WriterVersion, "", ""),
		parquet.SortingWriterConfig(parquet.SortingColumns(
			parquet.Ascending("session_id"),
			parquet.NullsFirst(parquet.Ascending("ts")),
			parquet.Ascending("seq"),
		)),
	}
	for _, path := range blobColumns() {
		opts = append(opts, parquet.SkipPageBounds(path...), parquet.SkipPageStatistics(path...))
	}
	return opts
}

// mergeSource is a sorted Parquet file being merged: its rows are read a
// buffer at a time.
type mergeSource struct {
	path string
	temp bool // an intermediate file of a merge in passes
	f    *os.File
	r    *parquet.GenericReader[row]
	cost int64 // estimate of the memory its reader holds
	rows int64 // rows it must yield
	read int64 // rows read
	buf  []row
	i    int // next row of buf

	// The last row read, to check the order.
	session  string
	ts, seq  int64
	anything bool
}

// Buffered rows of a mergeSource: as many as fit in mergeRowBytes, within
// these bounds.
const (
	mergeRowBytes   = 1 << 20
	minMergeRows    = 16
	maxMergeRows    = 1024
	mergeReadBuffer = 16 << 10 // read buffer of each column chunk
)

// openMergeSource opens the Parquet file of in, which must have the size
// and rows in says and the schema and schema version of this package. An
// unusable file is an error wrapping [ErrCompactInput].
func openMergeSource(in mergeInput, cfg CompactConfig) (*mergeSource, error) {
	f, err := os.Open(in.path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCompactInput, err)
	}
	s := &mergeSource{path: in.path, temp: in.temp, f: f, rows: in.rows}
	if err := s.open(in.bytes, cfg); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s: %v", ErrCompactInput, in.path, err)
	}
	return s, nil
}

// open checks the file against its size, rows, schema and schema
// version, estimates what its reader costs and opens the reader.
func (s *mergeSource) open(size int64, cfg CompactConfig) (err error) {
	info, err := s.f.Stat()
	if err != nil {
		return err
	}
	if info.Size() != size {
		return fmt.Errorf("%d bytes, the manifest says %d", info.Size(), size)
	}
	pf, err := parquet.OpenFile(s.f, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true),
		parquet.ReadBufferSize(mergeReadBuffer))
	if err != nil {
		return err
	}
	if v, _ := pf.Lookup(MetaSchemaVersion); v != strconv.Itoa(schema.Version) {
		return fmt.Errorf("schema version %q, not %d", v, schema.Version)
	}
	if !parquet.EqualNodes(pf.Schema(), partSchema) {
		return errors.New("not the schema of this writer")
	}
	if pf.NumRows() != s.rows {
		return fmt.Errorf("%d rows, the manifest says %d", pf.NumRows(), s.rows)
	}
	// Its reader holds, per column, a page and its compressed form; the
	// buffered rows add their size.
	md := pf.Metadata()
	avg := int64(unsafe.Sizeof(row{}))
	var pages []int64
	for _, rg := range md.RowGroups {
		if rg.NumRows > 0 {
			avg = max(avg, int64(unsafe.Sizeof(row{}))+rg.TotalByteSize/rg.NumRows)
		}
		if pages == nil {
			pages = make([]int64, len(rg.Columns))
		}
		for i, cc := range rg.Columns {
			if i < len(pages) {
				page := min(cc.MetaData.TotalUncompressedSize, int64(cfg.PageBytes)) + min(cc.MetaData.TotalCompressedSize, int64(cfg.PageBytes))
				pages[i] = max(pages[i], page)
			}
		}
	}
	n := min(max(mergeRowBytes/avg, minMergeRows), maxMergeRows)
	s.cost = n*avg + mergeReadBuffer*int64(len(pages))
	for _, p := range pages {
		s.cost += p
	}
	defer func() {
		if r := recover(); r != nil { // parquet-go panics on what it cannot convert
			err = fmt.Errorf("open reader: %v", r)
		}
	}()
	s.r = parquet.NewGenericReader[row](pf)
	s.buf = make([]row, 0, n)
	return nil
}

// partSchema is the schema of the files this package writes.
var partSchema = parquet.SchemaOf(row{})

// Schema returns the Parquet schema of the files this package writes: its
// columns, their types and their order.
func Schema() *parquet.Schema { return partSchema }

// next makes s.buf[s.i] the next row, reading a buffer's worth if
// needed, and reports whether there is one. A file not sorted, or with
// other than its rows, is an error wrapping [ErrCompactInput].
func (s *mergeSource) next() (bool, error) {
	if s.i == len(s.buf) {
		if s.r == nil {
			return false, nil
		}
		if s.read == s.rows {
			s.r.Close()
			s.r = nil
			return false, nil
		}
		// Never more rows than are left: parquet-go v0.32.0 reads every
		// column's next page header again for each row asked past the
		// end (a 504-row file read with a 1,024-row buffer allocated 15
		// MB). Zeroed rows: the reader allocates what the new rows point
		// to, so rows already handed to the writer's batch keep theirs.
		k := int(min(int64(cap(s.buf)), s.rows-s.read))
		clear(s.buf[:k])
		n, err := s.r.Read(s.buf[:k])
		s.buf, s.i = s.buf[:n], 0
		s.read += int64(n)
		if err != nil && !errors.Is(err, io.EOF) {
			return false, fmt.Errorf("%w: read %s: %v", ErrCompactInput, s.path, err)
		}
		if n == 0 {
			return false, fmt.Errorf("%w: %s: %d rows read, %d expected", ErrCompactInput, s.path, s.read, s.rows)
		}
	}
	r := &s.buf[s.i]
	if s.anything && compareRow(s.session, s.ts, s.seq, r) > 0 {
		return false, fmt.Errorf("%w: %s: not sorted by (session_id, ts, seq) at seq %d", ErrCompactInput, s.path, r.Seq)
	}
	s.session, s.ts, s.seq, s.anything = r.SessionID, r.tsKey(), r.Seq, true
	return true, nil
}

// compareRow compares (session, ts, seq) with r's, in the order of
// part.order.
func compareRow(session string, ts, seq int64, r *row) int {
	if c := strings.Compare(session, r.SessionID); c != 0 {
		return c
	}
	if c := cmp.Compare(ts, r.tsKey()); c != 0 {
		return c
	}
	return cmp.Compare(seq, r.Seq)
}

// close closes s. It is safe to call more than once.
func (s *mergeSource) close() {
	if s.f == nil {
		return
	}
	if s.r != nil {
		s.r.Close()
		s.r = nil
	}
	s.f.Close()
	s.f = nil
	s.buf = nil
}

// mergeQueue is a heap of sources by their current row.
type mergeQueue []*mergeSource

func (q mergeQueue) Len() int { return len(q) }
func (q mergeQueue) Less(i, j int) bool {
	a := &q[i].buf[q[i].i]
	return compareRow(a.SessionID, a.tsKey(), a.Seq, &q[j].buf[q[j].i]) < 0
}
func (q mergeQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *mergeQueue) Push(x any)   { *q = append(*q, x.(*mergeSource)) }
func (q *mergeQueue) Pop() any {
	old := *q
	s := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return s
}
