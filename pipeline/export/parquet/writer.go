package parquet

import (
	"bufio"
	"cmp"
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
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/dirlock"
	"github.com/sessionpipe/sessionpipe/pipeline/export/internal/commit"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Writer turns a stream of entries, each with its JetStream stream
// sequence, into committed Parquet files. It keeps one open part per
// partition and commits a part (see the package documentation, "Commit
// protocol") when it reaches Config.PartBytes, when it is older than
// Config.PartAge at a [Writer.CommitDue], when the buffered total would
// pass Config.MemoryBytes (the largest part first), and at [Writer.Flush]
// and [Writer.Close].
//
// The caller acknowledges messages only up to [Writer.Committed]. A
// Writer is not safe for concurrent use: one goroutine (the consumer's
// handler) drives it, or several under one lock. The one exception is
// [Commit.Run]: a commit taken out with [Writer.Begin] is written while
// the writer goes on taking entries, and recorded by [Writer.Finish].
type Writer struct {
	cfg  Config
	log  *slog.Logger
	lock *dirlock.Lock
	enc  *encoder
	buf  *bufio.Writer // between the encoder and the file, reused

	man      manifestCopy         // the manifest as last read or written
	high     map[Partition]uint64 // last committed sequence per partition
	parts    map[Partition]*part
	buffered int64  // bytes held by open parts
	handed   uint64 // highest sequence handed over
	// handedIdx is the index, in its message, of the last entry of
	// handed taken; advanced is the highest sequence Advance passed (its
	// message wholly handed over).
	handedIdx int
	advanced  uint64
	dirs      map[string]bool
	stats     Stats
	closed    bool
	failed    error // set by fail: the writer takes nothing more
	// waiting holds, by first sequence, the parts closed in Write whose
	// commit failed for their partition (see commit): tried again, before
	// the later parts of their partition, at each commit.
	waiting []*part
	// inflight is the commit taken out by Begin and not yet finished:
	// its parts are neither open nor waiting, and Committed stays below
	// them until Finish.
	inflight *Commit

	// remote is the manifest object when the output is in a bucket
	// (Config.Bucket); nil for a directory.
	remote *commit.RemoteManifest[File]

	// hook, when set (by tests), is called at each step of a commit:
	// "written" (temporary file synced), "renamed" (renamed, directory
	// synced), "recorded" (manifest written).
	hook func(step string)
}

// Stats counts what a [Writer] did since it was opened.
type Stats struct {
	Entries      int64 // entries taken into parts
	Skipped      int64 // entries skipped: already committed, or handed over twice
	Files        int64 // files committed
	Rows         int64 // rows in committed files
	Bytes        int64 // bytes of committed files
	EarlyCommits int64 // parts committed early to stay within MemoryBytes
	Removed      int64 // leftovers removed at open: temporary files and files the manifest does not list
	InvalidUTF8  int64 // entries written with invalid UTF-8 replaced (see ErrInvalidUTF8)
	// FailedCommits counts the parts whose commit failed for their
	// partition (a *PartitionError): each stays buffered and is tried
	// again at the next commit; the other partitions commit.
	FailedCommits int64
}

// NewWriter opens the output directory cfg.Dir (creating it), takes its
// lock, reads its manifest and removes what a crash left behind: temporary
// files, and Parquet files that were renamed into place but not yet
// recorded in the manifest (their entries were never acknowledged, so
// they are delivered again), or that a [Compact] merged into another. It
// does so under the manifest lock, waiting for a concurrent Compact to
// finish its manifest change; the temporary files of a Compact that is
// running are left to it. A directory without a manifest gets an
// empty one. It returns an error wrapping [dirlock.ErrHeld] if another
// Writer owns the directory, and one wrapping [ErrManifest] if the
// manifest is damaged, or missing while part files are there (a lost
// manifest): nothing is removed then.
func NewWriter(cfg Config) (*Writer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if cfg.Bucket != nil {
		return newRemoteWriter(cfg)
	}
	lock, err := dirlock.Acquire(cfg.Dir, "Parquet export")
	if err != nil {
		return nil, err
	}
	enc, err := newEncoder(cfg)
	if err != nil {
		lock.Release()
		return nil, err
	}
	w := &Writer{
		cfg:   cfg,
		log:   cfg.Logger.With(KeyComponent, "export"),
		lock:  lock,
		enc:   enc,
		parts: make(map[Partition]*part),
		dirs:  make(map[string]bool),
	}
	if err := w.open(); err != nil {
		lock.Release()
		return nil, err
	}
	return w, nil
}

// open reads the manifest and removes the leftovers of a crash (see
// Writer.recover), under the manifest lock: a [Compact] may run beside.
// The tree is walked before the lock is taken, so that the lock is held
// for the removals only; a compaction's temporary files are taken only
// if the compaction lock is free, and it is held until they are removed.
func (w *Writer) open() error {
	root := w.cfg.Dir
	cl, free, err := tryLockFile(root, CompactLockName)
	if err != nil {
		return err
	}
	defer cl.unlock()
	l, err := scanLeftovers(root, true, free)
	if err != nil {
		return err
	}
	ml, err := lockManifest(context.Background(), root)
	if err != nil {
		return err
	}
	defer ml.unlock()
	m, exists, err := readManifest(root)
	if err != nil {
		return err
	}
	w.man = manifestCopy{m: m}
	w.high = m.highest()
	if err := w.recover(l, exists); err != nil {
		return err
	}
	if !exists {
		// An empty manifest from the start: part files found later without
		// one are then not mistaken for a crash's leftovers.
		return w.man.add(w.cfg.Dir, m, nil, nil)
	}
	return nil
}

// Write takes the entry e with its stream sequence seq (1 or more) into
// its partition's open part. Entries must come in stream order. An entry
// whose sequence was handed over before, or that a committed file of its
// partition already holds (a redelivery after a restart), is skipped: the
// output stays exactly once.
//
// Before taking e, Write commits its part if e would push it past
// PartBytes, and the largest parts while e would push the buffered total
// past MemoryBytes. If such a commit fails, Write returns its error and e
// is not taken: the caller may retry or stop; what is buffered stays.
// Write copies what it keeps, so e may be reused after it returns.
//
// Write is [Writer.WriteIndex] for a message of one entry.
func (w *Writer) Write(ctx context.Context, e *schema.Entry, seq uint64) error {
	return w.WriteIndex(ctx, e, seq, 0)
}

// WriteIndex is [Writer.Write] for the entry at index idx (from 0) of a
// message that carries several (a batch message): the entries of a
// message share its sequence and come in order, and an entry is skipped
// when it, or the whole of its message ([Writer.Advance]), was handed
// over before (a handler retried after a failure in the middle of a
// message).
func (w *Writer) WriteIndex(ctx context.Context, e *schema.Entry, seq uint64, idx int) error {
	if w.closed {
		return ErrClosed
	}
	if w.failed != nil {
		return w.failed
	}
	if seq == 0 {
		return ErrInvalidSeq
	}
	// A message may carry many entries (a batch): they share its
	// sequence and come one after another. What was handed before it,
	// or the whole of it, is skipped.
	if seq < w.handed || seq == w.handed && idx <= w.handedIdx || seq <= w.advanced {
		w.stats.Skipped++
		return nil
	}
	p := PartitionOf(e)
	if seq <= w.high[p] {
		w.stats.Skipped++
		w.handed, w.handedIdx = seq, idx
		return nil
	}
	// A part is committed only at a message's boundary (it holds none
	// of seq's entries yet): a committed file holds all the entries of
	// its partition up to its last sequence, which is what a restart
	// skips on.
	pt := w.parts[p]
	est := entryBytes(e)
	if pt != nil && pt.n > 0 && pt.last < seq && pt.size()+est+pt.nextRowCost() > w.cfg.PartBytes {
		if err := w.commit(ctx, pt); err != nil {
			return err
		}
		pt = w.parts[p]
	}
	for {
		over := w.buffered - w.inflightBytes() + est + rowCost(pt) - w.cfg.MemoryBytes
		if over <= 0 || len(w.parts) == 0 {
			break
		}
		// Free a quarter of the budget beyond what this entry needs, in
		// one commit: one manifest change for several parts, and room
		// for the next entries.
		big := w.largestBefore(seq, over+w.cfg.MemoryBytes/4)
		if len(big) == 0 {
			break // every open part holds entries of this message: over budget by one message at most
		}
		if err := w.commit(ctx, big...); err != nil {
			return err
		}
		w.stats.EarlyCommits += int64(len(big))
		pt = w.parts[p]
	}
	if pt == nil {
		pt = newPart(p, time.Now())
		w.parts[p] = pt
	}
	est += pt.nextRowCost()
	invalid := pt.strs.invalid
	pt.add(e, seq, est)
	w.buffered += est
	if pt.strs.invalid != invalid {
		w.stats.InvalidUTF8++
		err := &EntryError{Path: e.Path, Line: e.Line, Offset: e.Offset, Seq: seq, Key: e.Key(), Err: ErrInvalidUTF8}
		if w.cfg.OnEntryError != nil {
			w.cfg.OnEntryError(err)
		} else {
			w.log.Warn("entry altered", KeyError, err.Error())
		}
	}
	w.handed, w.handedIdx = seq, idx
	w.stats.Entries++
	return nil
}

// Advance tells the writer that every message up to seq has been handed
// over, including messages that carry no entry (undecodable messages the
// consumer skipped, a gap): [Writer.Committed] may then pass them.
func (w *Writer) Advance(seq uint64) {
	if seq > w.handed {
		w.handed, w.handedIdx = seq, 0
	}
	w.advanced = max(w.advanced, seq)
}

// Committed returns the highest stream sequence S such that every entry
// handed over with a sequence up to S is in a committed file (or was
// skipped as already committed). The caller may acknowledge the messages
// up to S (AckAll on S); not one beyond. Several partitions interleave in
// the stream, so S is just below the first entry of the oldest open part.
func (w *Writer) Committed() uint64 {
	s := w.handed
	for _, pt := range w.parts {
		s = min(s, pt.first-1)
	}
	for _, pt := range w.waiting {
		s = min(s, pt.first-1)
	}
	if w.inflight != nil {
		for _, pt := range w.inflight.parts {
			s = min(s, pt.first-1)
		}
	}
	return s
}

// Buffered returns the bytes held by open and waiting parts and by the
// parts of a commit not yet finished, as counted against
// Config.MemoryBytes (the last apart, see there): the strings of their
// rows, their lists and structs, and the row chunks allocated. The arena blocks that hold the strings
// may add up to 64 KiB per open part beyond it (at most the larger of
// 4 KiB and the part's strings).
func (w *Writer) Buffered() int64 { return w.buffered }

// Stats returns the counters.
func (w *Writer) Stats() Stats { return w.stats }

// Manifest returns the committed files, in commit order, as the writer
// last read or wrote the manifest (at open and at each commit): a
// concurrent [Compact]'s change shows from the next commit on. The slice
// is the writer's own: do not modify it. A [Commit.Run] replaces it: do
// not call Manifest while one runs.
func (w *Writer) Manifest() []File { return w.man.m.Files }

// CommitDue commits every part opened Config.PartAge or longer before
// now, and the parts whose commit failed before. Call it periodically
// (every few seconds, or when the consumer's fetch comes back empty), so
// that a quiet partition is committed and acknowledged in time. The parts
// are recorded with one change of the manifest. A part that cannot be
// committed costs only its partition: the other parts are committed, it
// (and any later part of its partition) stays buffered and is tried again
// at the next commit, and a *[PartitionError] is returned for it (several
// joined), counted in Stats.FailedCommits.
func (w *Writer) CommitDue(ctx context.Context, now time.Time) error {
	c, err := w.Begin(now, false)
	if err != nil || c == nil {
		return err
	}
	c.Run(ctx)
	return w.Finish(c)
}

// due returns the parts a commit at now takes (all: every open and
// waiting part), by first sequence.
func (w *Writer) due(now time.Time, all bool) []*part {
	parts := w.sortedParts()
	if all {
		return parts
	}
	var due []*part
	for _, pt := range parts {
		if now.Sub(pt.opened) >= w.cfg.PartAge || slices.Contains(w.waiting, pt) {
			due = append(due, pt)
		}
	}
	return due
}

// Flush commits every open part, oldest first, with one change of the
// manifest. After it returns nil, [Writer.Committed] is the highest
// sequence handed over. A part that cannot be committed costs only its
// partition, as in CommitDue.
func (w *Writer) Flush(ctx context.Context) error {
	c, err := w.Begin(time.Time{}, true)
	if err != nil || c == nil {
		return err
	}
	c.Run(ctx)
	return w.Finish(c)
}

// Commit is a commit taken out of a [Writer] by [Writer.Begin]: its parts
// are written and recorded by [Commit.Run], which needs nothing the
// writer's other methods touch, so the caller runs it without the lock
// it drives the writer under, while entries go on into new parts. The
// writer learns the outcome at [Writer.Finish].
type Commit struct {
	w       *Writer
	parts   []*part        // by first sequence
	bytes   int64          // the parts' bytes, as counted in Writer.buffered
	waiting map[*part]bool // the parts that were waiting at Begin
	done    chan struct{}  // closed when Run returns

	// Run's outcome, for Finish.
	recorded []written
	errs     []error
	failures int64                // parts whose commit failed for their partition
	high     map[Partition]uint64 // the committed sequences the manifest now has
	stop     error                // the writer must stop (see Writer.fail)

	finished bool
	err      error
}

// Begin takes out of w the parts a [Writer.CommitDue] at now would
// commit (all: those a [Writer.Flush] would) as a [Commit], after
// finishing the commit still in flight, if any. It returns nil when no
// part is due. The caller must call [Commit.Run] once, from any
// goroutine, and then [Writer.Finish]; until Finish, [Writer.Committed]
// stays below the commit's parts, and a part that must be committed in
// Write (its size, the memory budget) waits for the commit to finish
// first, so that a partition's files are committed in stream order. So
// do Begin, CommitDue, Flush and Close, whatever their context: Run must
// not wait for them.
func (w *Writer) Begin(now time.Time, all bool) (*Commit, error) {
	if w.closed {
		return nil, ErrClosed
	}
	w.settle()
	if w.failed != nil {
		return nil, w.failed
	}
	parts := w.due(now, all)
	if len(parts) == 0 {
		return nil, nil
	}
	return w.begin(parts), nil
}

// begin takes parts, and the waiting parts of their partitions, out of w
// as the commit in flight.
func (w *Writer) begin(parts []*part) *Commit {
	parts = w.withWaiting(parts)
	c := &Commit{w: w, parts: parts, done: make(chan struct{})}
	for _, pt := range parts {
		c.bytes += pt.size()
		if w.parts[pt.partition] == pt {
			delete(w.parts, pt.partition)
		} else if i := slices.Index(w.waiting, pt); i >= 0 {
			w.waiting = slices.Delete(w.waiting, i, i+1)
			if c.waiting == nil {
				c.waiting = make(map[*part]bool)
			}
			c.waiting[pt] = true
		}
	}
	w.inflight = c
	return c
}

// inflightBytes returns the bytes of the parts in the commit in flight.
func (w *Writer) inflightBytes() int64 {
	if w.inflight == nil {
		return 0
	}
	return w.inflight.bytes
}

// settle waits for the commit in flight, if any, and finishes it. Its
// error is the caller's of Begin to report (Finish keeps it): here only
// its effect on the writer counts (the parts kept, a stop).
func (w *Writer) settle() {
	if c := w.inflight; c != nil {
		<-c.done
		w.Finish(c)
	}
}

// Finish waits for c's Run and applies its outcome to the writer: the
// recorded parts are dropped, the others are kept (open, or waiting for
// the next commit, ahead of their partition's later parts), and a
// manifest change whose fate is unknown stops the writer. It returns what
// [Writer.CommitDue] would have: nil, a *[PartitionError] per partition
// that could not be committed (joined), a cancellation as is, or the
// error that failed the whole commit. A commit finished already (by
// Begin or Write, which finish the one in flight first) returns the same
// again. Finish(nil) returns nil.
func (w *Writer) Finish(c *Commit) error {
	if c == nil {
		return nil
	}
	<-c.done
	if c.finished {
		return c.err
	}
	c.finished = true
	if w.inflight == c {
		w.inflight = nil
	}
	if c.stop != nil {
		w.fail(c.stop)
	}
	for p, s := range c.high {
		w.high[p] = max(w.high[p], s)
	}
	w.stats.FailedCommits += c.failures
	recorded := make(map[*part]bool, len(c.recorded))
	for _, wr := range c.recorded {
		pt, f := wr.pt, wr.file
		recorded[pt] = true
		w.buffered -= pt.size()
		w.stats.Files++
		w.stats.Rows += f.Rows
		w.stats.Bytes += f.Bytes
		w.log.Debug("committed", KeyFile, f.Path, KeyRows, f.Rows, KeyBytes, f.Bytes, KeyFirstSeq, f.FirstSeq, KeyLastSeq, f.LastSeq)
	}
	kept := false
	for _, pt := range c.parts {
		switch {
		case recorded[pt]:
		case !c.waiting[pt] && w.parts[pt.partition] == nil:
			w.parts[pt.partition] = pt // still open: it takes the next entries of its partition
		default:
			w.waiting = append(w.waiting, pt)
			kept = true
		}
	}
	if kept {
		slicesSortByFirst(w.waiting)
	}
	if len(c.errs) == 1 {
		c.err = c.errs[0] // a cancellation as is
	} else {
		c.err = errors.Join(c.errs...)
	}
	return c.err
}

// Close flushes the open parts (as on SIGTERM: commit what is open) and
// releases the output directory. It returns the first error; the lock is
// released even then, and entries of parts that could not be committed
// are not acknowledged, so they are delivered again to the next writer.
// To stop without committing, cancel ctx: Close then returns its cause.
func (w *Writer) Close(ctx context.Context) error {
	if w.closed {
		return nil
	}
	err := w.Flush(ctx)
	w.closed = true
	if e := w.lock.Release(); err == nil {
		err = e
	}
	return err
}

// rowCost returns what the next row of pt (nil: a new part) costs in
// chunk space.
func rowCost(pt *part) int64 {
	if pt == nil {
		return minRowChunk * rowSize
	}
	return pt.nextRowCost()
}

// largestBefore returns the open parts that hold no entry of seq or
// later, the largest first, as many as hold need bytes (all of them if
// they hold less).
func (w *Writer) largestBefore(seq uint64, need int64) []*part {
	var parts []*part
	for _, pt := range w.parts {
		if pt.last < seq {
			parts = append(parts, pt)
		}
	}
	slices.SortFunc(parts, func(a, b *part) int { return cmp.Compare(b.size(), a.size()) })
	for i, pt := range parts {
		if need -= pt.size(); need <= 0 {
			return parts[:i+1]
		}
	}
	return parts
}

// sortedParts returns the open and the waiting parts by first sequence:
// committing them in that order advances Committed soonest.
func (w *Writer) sortedParts() []*part {
	parts := make([]*part, 0, len(w.parts)+len(w.waiting))
	for _, pt := range w.parts {
		parts = append(parts, pt)
	}
	parts = append(parts, w.waiting...)
	slicesSortByFirst(parts)
	return parts
}

// commit commits parts (open parts closed in Write: one reached
// PartBytes, or the memory budget needs their room) with one change of
// the manifest, after the commit in flight, if any. When that fails for
// their partitions only (each a *[PartitionError]), the parts not
// committed wait for the next commit in w.waiting, and commit returns nil
// (logging why): Write goes on with the other partitions, and with new
// parts of theirs. The waiting parts stay in the memory budget; once they
// would hold more than three quarters of it, the error is returned
// instead (Write fails, the caller retries: nothing is taken that memory
// cannot hold).
func (w *Writer) commit(ctx context.Context, parts ...*part) error {
	w.settle()
	if w.failed != nil {
		return w.failed
	}
	parts = slices.DeleteFunc(slices.Clone(parts), func(pt *part) bool {
		return w.parts[pt.partition] != pt // committed or kept by the commit just finished
	})
	if len(parts) == 0 {
		return nil
	}
	slicesSortByFirst(parts)
	c := w.begin(parts)
	c.Run(ctx)
	err := w.Finish(c)
	if err == nil || ctx.Err() != nil || !commit.OnlyPartitionErrors(err) {
		return err
	}
	var held int64
	for _, o := range w.waiting {
		held += o.size()
	}
	for _, pt := range parts {
		if w.parts[pt.partition] == pt {
			held += pt.size() // not committed, still open
		}
	}
	if held > w.cfg.MemoryBytes/4*3 {
		return err
	}
	for _, pt := range parts {
		if w.parts[pt.partition] == pt {
			delete(w.parts, pt.partition)
			w.waiting = append(w.waiting, pt)
		}
	}
	slicesSortByFirst(w.waiting)
	w.log.Warn("partitions cannot be committed; their entries are kept and tried again at the next commit", KeyError, err.Error())
	return nil
}

// written is a part written to its temporary file, not yet recorded.
type written struct {
	pt   *part
	tmp  string // the temporary file, in the partition's directory
	dir  string // the partition's directory
	file File
}

// Run writes each of c's parts as a file and records them all with one
// change of the manifest: for each, a temporary file in the partition's
// directory, fsynced; then, under the manifest lock, each renamed to
// part-<first>-<last>.parquet, the directories fsynced (and the parents
// of new directories), and the manifest re-read and written atomically
// once. [Writer.Finish] then drops the parts. A periodic commit of many
// quiet partitions (a backfill of months of history closes hundreds at
// once) thus costs one manifest write, not one per file: the manifest
// grows with the files, and rewriting it per file made such a commit
// quadratic.
//
// A part that cannot be written or renamed into its directory (a file
// where the directory belongs) costs only its partition: the later parts
// of that partition in the batch are not committed either (a partition's
// files are committed in stream order: a restart skips what its
// committed files reach), the other parts are; each failure is a
// *[PartitionError], counted in Stats.FailedCommits, and the failed parts
// are kept (open or waiting), so Committed stays below them. Cancellation
// stops the batch (what was written is recorded) and is returned as is.
// A failure of the manifest fails the batch. On error no temporary file
// is left.
//
// Run touches only what Write, Committed and the other methods outside
// a commit leave alone (the encoder, the manifest, the directories
// created): it may run while they are called. Run(nil) does nothing.
func (c *Commit) Run(ctx context.Context) {
	if c == nil {
		return
	}
	defer close(c.done)
	w := c.w
	var batch []written
	failed := make(map[Partition]bool) // partitions with a part not committed
	if w.remote != nil {
		batch = c.upload(ctx)
	}
	for _, pt := range c.parts {
		if w.remote != nil {
			break // uploaded above
		}
		if err := ctx.Err(); err != nil {
			c.errs = append(c.errs, context.Cause(ctx))
			break
		}
		if failed[pt.partition] {
			continue
		}
		wr, err := w.writePart(ctx, pt)
		if err != nil {
			failed[pt.partition] = true
			c.errs = append(c.errs, c.partitionFailed(pt, err))
			continue
		}
		batch = append(batch, wr)
		w.step("written")
	}
	if len(batch) > 0 {
		done, err := c.record(ctx, batch)
		if len(done) > 0 {
			w.step("recorded")
		}
		c.recorded = done
		if err != nil {
			c.errs = append(c.errs, err)
		}
	}
}

// withWaiting returns parts with the waiting parts of their partitions
// added, by first sequence.
func (w *Writer) withWaiting(parts []*part) []*part {
	if len(w.waiting) == 0 {
		return parts
	}
	out := slices.Clone(parts)
	for _, o := range w.waiting {
		if !slices.Contains(out, o) && slices.ContainsFunc(parts, func(pt *part) bool { return pt.partition == o.partition }) {
			out = append(out, o)
		}
	}
	slicesSortByFirst(out)
	return out
}

// partitionFailed counts the failed commit of pt and describes it.
func (c *Commit) partitionFailed(pt *part, err error) error {
	c.failures++
	w := c.w
	return &PartitionError{Partition: pt.partition, Dir: filepath.Join(w.cfg.Dir, filepath.FromSlash(pt.partition.Dir())),
		FirstSeq: pt.first, LastSeq: pt.last, Err: err}
}

// writePart encodes pt into a synced temporary file in its partition's
// directory, and describes the file it becomes.
func (w *Writer) writePart(ctx context.Context, pt *part) (written, error) {
	rel := pt.partition.Dir()
	dir := filepath.Join(w.cfg.Dir, filepath.FromSlash(rel))
	if err := w.mkdir(rel); err != nil {
		return written{}, err
	}
	name := fmt.Sprintf("part-%d-%d.parquet", pt.first, pt.last)
	tmp := filepath.Join(dir, commit.TmpName(name))
	sum, n, err := w.writeTemp(tmp, pt, true)
	if err != nil {
		os.Remove(tmp)
		return written{}, err
	}
	f := File{
		Path:      path.Join(rel, name),
		Partition: pt.partition,
		Rows:      int64(pt.n),
		Bytes:     n,
		SHA256:    sum,
		FirstSeq:  pt.first,
		LastSeq:   pt.last,
		Committed: time.Now().UTC(),
	}
	if pt.minTS != 0 {
		f.MinTS = time.UnixMicro(pt.minTS).UTC()
		f.MaxTS = time.UnixMicro(pt.maxTS).UTC()
	}
	return written{pt: pt, tmp: tmp, dir: dir, file: f}, nil
}

// record renames the synced temporary files of batch to their names and
// adds them to the manifest, all under the manifest lock, re-reading the
// manifest first if another process replaced it (a compaction's change is
// kept). Holding the lock from the renames to the record means that
// whoever holds it sees no file renamed and not yet recorded: an unlisted
// Parquet file is then always a crash's leftover.
//
// It returns the files it recorded, in batch order. A rename that fails
// (the partition's directory moved away, or replaced by a file, since the
// file was written) costs that partition only: its files of the batch
// are not recorded (a *[PartitionError] is returned for it), the others
// are. On any other error it records none, and removes the files it
// renamed, still under the lock, so that readers globbing the directory
// never see a file beside the one a retry writes for the same part. The
// temporary files not renamed are removed. A manifest renamed into place
// but not synced ([ErrNotDurable]) lists the files: they stay, and the
// writer stops (see [Writer.failed]).
func (c *Commit) record(ctx context.Context, batch []written) (recorded []written, err error) {
	w := c.w
	if w.remote != nil {
		return c.recordRemote(ctx, batch)
	}
	renamed := make([]bool, len(batch))
	defer func() {
		for i, wr := range batch {
			if !renamed[i] {
				os.Remove(wr.tmp)
			}
		}
	}()
	ml, err := lockManifest(ctx, w.cfg.Dir)
	if err != nil {
		return nil, err
	}
	defer ml.unlock()
	m, data, reread, err := w.man.current(w.cfg.Dir)
	if err != nil {
		return nil, err
	}
	final := func(wr written) string { return filepath.Join(wr.dir, path.Base(wr.file.Path)) }
	var done []written
	unrename := func() {
		for _, wr := range done {
			os.Remove(final(wr))
		}
	}
	var errs []error
	failed := make(map[Partition]bool)
	dirs := make(map[string]bool)
	for i, wr := range batch {
		if failed[wr.pt.partition] {
			continue // after its partition's failed file
		}
		if err := os.Rename(wr.tmp, final(wr)); err != nil {
			failed[wr.pt.partition] = true
			errs = append(errs, c.partitionFailed(wr.pt, fmt.Errorf("rename %s: %w", wr.tmp, err)))
			continue
		}
		renamed[i] = true
		done = append(done, wr)
		dirs[wr.dir] = true
	}
	if len(done) == 0 {
		return nil, errors.Join(errs...)
	}
	for dir := range dirs {
		if err := commit.SyncDir(dir); err != nil {
			unrename()
			return nil, errors.Join(append(errs, err)...)
		}
	}
	w.step("renamed")
	files := make([]File, len(done))
	for i, wr := range done {
		files[i] = wr.file
	}
	if err := w.man.add(w.cfg.Dir, m, data, files); err != nil {
		if errors.Is(err, ErrNotDurable) {
			c.stop = err
		} else {
			unrename()
		}
		return nil, errors.Join(append(errs, err)...)
	}
	c.high = make(map[Partition]uint64)
	if reread {
		for p, s := range m.highest() { // what a compaction changed
			c.high[p] = max(c.high[p], s)
		}
	}
	for _, f := range files {
		c.high[f.Partition] = max(c.high[f.Partition], f.LastSeq)
	}
	return done, errors.Join(errs...)
}

// fail stops the writer after a change it cannot know the fate of: every
// later call returns err.
func (w *Writer) fail(err error) {
	w.failed = fmt.Errorf("writer stopped, restart to recover: %w", err)
	w.log.Error("manifest change not known to be durable: the writer stops; a restart recovers from what the disk holds", KeyError, err.Error())
}

// writeTemp encodes pt into the file tmp and fsyncs it, returning the
// file's sha256 and size.
func (w *Writer) writeTemp(tmp string, pt *part, sync bool) (string, int64, error) {
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return "", 0, fmt.Errorf("create %s: %w", tmp, err)
	}
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(f, h)}
	if w.buf == nil {
		w.buf = bufio.NewWriterSize(cw, 1<<20)
	} else {
		w.buf.Reset(cw)
	}
	bw := w.buf
	err = w.enc.encode(bw, pt)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil && sync {
		err = f.Sync()
	}
	if e := f.Close(); err == nil {
		err = e
	}
	if err != nil {
		return "", 0, fmt.Errorf("write %s: %w", tmp, err)
	}
	return hex.EncodeToString(h.Sum(nil)), cw.n, nil
}

// mkdir creates the partition directory rel (slash-separated, relative to
// the root) and fsyncs the parent of every directory it created, so that
// a committed file's path survives a crash.
func (w *Writer) mkdir(rel string) error { return commit.Mkdirs(w.cfg.Dir, rel, w.dirs) }

func (w *Writer) step(name string) {
	if w.hook != nil {
		w.hook(name)
	}
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
