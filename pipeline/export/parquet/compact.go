package parquet

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/sessionpipe/sessionpipe/pipeline/export/internal/commit"
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
	CompressionLevel zstd.Level // as Config.CompressionLevel; default DefaultCompactCompressionLevel
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
	if c.CompressionLevel == 0 {
		c.CompressionLevel = DefaultCompactCompressionLevel
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
