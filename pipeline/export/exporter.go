package export

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/export/archive"
	"github.com/sessionpipe/sessionpipe/pipeline/export/internal/commit"
	"github.com/sessionpipe/sessionpipe/pipeline/export/objstore"
	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
)

// Exporter defaults.
const (
	// DefaultConsumerName is the exporter's durable consumer.
	DefaultConsumerName = "exporter"

	// DefaultCommitInterval is how often the exporter commits the parts
	// and segments that reached their age, and saves its position.
	DefaultCommitInterval = 5 * time.Second

	// DefaultCatchUpCommit is how often at most the exporter commits
	// what it holds on catching up with the stream, in the first part
	// age after it became active (see ExporterConfig.CatchUpCommit).
	DefaultCatchUpCommit = 10 * time.Second

	// StateName is the exporter's position file in the Parquet root.
	StateName = "_exporter.json"

	// OfflineStream is the stream name recorded in the position of an
	// output written by an offline export (ExporterConfig.Offline).
	OfflineStream = "offline"
)

// ExporterConfig configures an [Exporter].
type ExporterConfig struct {
	// JS is the JetStream context the stream is read through. Required.
	JS jetstream.JetStream

	// Stream names the stream and subject prefix (defaults apply).
	Stream bus.StreamConfig

	// Name is the durable consumer; default [DefaultConsumerName]. Two
	// exporters of one name run one at a time: the second stands by
	// (a lease in JetStream KV) and takes over when the first stops.
	Name string

	// Parquet configures the Parquet writer; Parquet.Dir is required.
	Parquet parquet.Config

	// Archive configures the archive of the original lines; an empty
	// Archive.Dir keeps no archive (raw chunks are then not consumed).
	Archive archive.ArchiveConfig

	// CommitInterval is how often parts and segments past their age are
	// committed and the position saved. Default [DefaultCommitInterval],
	// or a quarter of Parquet.PartAge when that is shorter.
	CommitInterval time.Duration

	// LeaseTTL bounds how long a stand-by waits after the active
	// exporter died. Default bus.DefaultLeaseTTL.
	LeaseTTL time.Duration

	// CatchUpCommit: in its first Parquet.PartAge after it became
	// active, the exporter commits everything it holds each time it has
	// caught up with the stream (no message left to receive), at most
	// once per CatchUpCommit: the end of a backfill is in Parquet (and
	// the archive) at once instead of a part age later, and what follows
	// within seconds. After that, parts close by age and size only.
	// Default [DefaultCatchUpCommit]; negative: never. The small files
	// this makes are merged by compaction like any others.
	CatchUpCommit time.Duration

	// PurgeArchived removes the original lines (the raw subject,
	// <prefix>.raw.>) from the stream once they are in committed archive
	// segments: after each commit that moved the committed sequence, the
	// raw messages up to it are deleted (see purgeArchived). The archive is then their only
	// copy; the entries stay in the stream (a rebuilt indexer or Parquet
	// output needs them, not the original lines). Needs an archive
	// (Archive.Dir). It does nothing while another durable consumer of
	// the stream reads the raw subject (another exporter, of another
	// name, that has not archived them yet): it logs that once and
	// counts it (sessionpipe_export_raw_purge_blocked).
	PurgeArchived bool

	// Offline marks the stream as a temporary one, made to export files
	// without a server (`sessionpipe export`): its identity is not kept,
	// and the stream must be created with FirstSeq past [HighestSeq] of
	// the output, so that what is added continues its sequences. A live
	// exporter refuses an output written offline, and the other way round.
	Offline bool

	// Registry receives the exporter's metrics (sessionpipe_export_*,
	// read from [Exporter.Stats] when scraped); nil means a registry of
	// its own. One registry takes one exporter: [NewExporter] fails on a
	// second.
	Registry *prometheus.Registry

	// Logger receives lifecycle events; nil discards them.
	Logger *slog.Logger
}

// exporterState is what the exporter saves beside the manifest: the
// stream it exports and the highest sequence S such that every message
// up to S is committed (in a file, in a segment, or needing neither).
type exporterState struct {
	Stream    bus.StreamIdentity `json:"stream"`
	Committed uint64             `json:"committed"`
	// ArchiveFrom is the first sequence the archive could take when it
	// was started empty beside an output already exported up to
	// ArchiveFrom-1 (a new archive directory, an archive turned on
	// later); 0: the archive was there from the output's start. Below it
	// the stream's original lines are in no archive, and no purge of the
	// raw subject may take them.
	ArchiveFrom uint64 `json:"archive_from,omitempty"`
}

// Exporter consumes the stream and writes it as Parquet (every entry) and
// as the cold archive (every original line), exactly once: it resumes
// after the highest sequence all of whose messages are committed, and the
// writers skip what a committed file already holds. See the package
// documentation, "Exporter".
type Exporter struct {
	cfg ExporterConfig
	log *slog.Logger

	mu      sync.Mutex // the writers and the state, between the consumer and the commit loop
	w       *parquet.Writer
	a       *archive.ArchiveWriter
	state   exporterState
	saved   uint64 // state.Committed as last saved
	saveErr error

	flush    chan struct{}           // CommitNow's requests to the commit loop
	caught   chan struct{}           // apply's news that the consumer caught up with the stream
	stop     context.CancelCauseFunc // ends the active run; set before it starts
	stage    *bus.Stage              // the lease, the wait for the stream, the commit ticker, forged and gap counts
	consumer atomic.Pointer[bus.Consumer]
	yield    atomic.Pointer[func() bool] // see SetYield
	undec    atomic.Int64                // undecodable messages
	errs     atomic.Int64                // failed commits
	files    atomic.Int64
	rows     atomic.Int64
	bytes    atomic.Int64
	segments atomic.Int64
	rawBytes atomic.Int64
	arcBytes atomic.Int64
	comm     atomic.Uint64
	health   commitHealth // what the commits came to, for Health (health.go)

	// PurgeArchived: the raw messages received and not yet deleted
	// (ascending; x.mu held), up to which sequence they are gone, and
	// who kept them.
	rawSeqs      []uint64
	rawPrefix    string     // "<prefix>.raw.": the subjects of raw chunk messages
	purgeMu      sync.Mutex // one purge at a time
	purgedSeq    atomic.Uint64
	purgeBlocked atomic.Bool
	// subjectDue: raw messages no delete of this process takes may be
	// left (archived before it started, or dropped from rawSeqs): the
	// next purge purges the subject.
	subjectDue  atomic.Bool
	archived    atomic.Uint64 // the highest sequence in the archive's committed segments
	archiveFrom atomic.Uint64 // state.ArchiveFrom
	blockedBy   string        // the consumer last logged as blocking; purgeMu held
	purgeErr    string        // the failure last logged; purgeMu held
}

// NewExporter checks cfg. It touches neither the stream nor the
// directories: [Exporter.Run] does.
func NewExporter(cfg ExporterConfig) (*Exporter, error) {
	if cfg.JS == nil {
		return nil, &parquet.ConfigError{Field: "js", Value: nil, Err: parquet.ErrInvalidConfig, Why: "required"}
	}
	if err := cfg.Parquet.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.Stream.Validate(); err != nil {
		return nil, err
	}
	cfg.Stream = cfg.Stream.WithDefaults()
	if cfg.Name == "" {
		cfg.Name = DefaultConsumerName
	}
	if cfg.CommitInterval <= 0 {
		// Often enough that a part is committed soon after its age.
		cfg.CommitInterval = DefaultCommitInterval
		if age := cfg.Parquet.PartAge; age > 0 {
			cfg.CommitInterval = min(cfg.CommitInterval, max(age/4, 50*time.Millisecond))
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Parquet.Logger == nil {
		cfg.Parquet.Logger = cfg.Logger
	}
	if cfg.Archive.Logger == nil {
		cfg.Archive.Logger = cfg.Logger
	}
	if cfg.Archive.SegmentAge == 0 {
		cfg.Archive.SegmentAge = cfg.Parquet.PartAge
	}
	if cfg.CatchUpCommit == 0 {
		cfg.CatchUpCommit = DefaultCatchUpCommit
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	x := &Exporter{cfg: cfg, log: cfg.Logger.With(parquet.KeyComponent, "exporter"), flush: make(chan struct{}, 1), caught: make(chan struct{}, 1)}
	x.subjectDue.Store(true) // what was archived before this process started
	x.rawPrefix = strings.TrimSuffix(bus.RawFilter(cfg.Stream.Prefix), ">")
	stage, err := bus.NewStage(bus.StageConfig{
		JS: cfg.JS, Stream: cfg.Stream, Role: "exporter", Consumer: cfg.Name, LeaseTTL: cfg.LeaseTTL,
		CommitInterval: cfg.CommitInterval, Logger: x.log, LeaseLogger: cfg.Logger, GapLevel: slog.LevelError,
		GapMessage: "entries gone from the stream before they were exported (stream limits too tight for the exporter's lag)",
	})
	if err != nil {
		return nil, err
	}
	x.stage = stage
	if err := x.register(cfg.Registry); err != nil {
		return nil, err
	}
	return x, nil
}

// Run exports until ctx ends: it waits for the consumer's lease, opens
// the Parquet root and the archive (their locks held while active),
// checks that they were exported from this stream, and consumes from
// the committed position. When ctx ends it commits what is open (as on
// SIGTERM), saves the position and returns nil. It returns an error
// wrapping [ErrNotDurable] when a change of the Parquet manifest could
// not be synced: restart it (a supervisor, or the operator), and the
// restarted exporter recovers from what the disk holds.
func (x *Exporter) Run(ctx context.Context) error {
	return x.stage.Run(ctx, func(held context.Context) error {
		err := x.activeRun(held)
		switch {
		case ctx.Err() != nil && errors.Is(err, parquet.ErrConflict):
			// Stopping: what the last commit held was not listed (another
			// writer listed it, or will): nothing acknowledged, nothing lost.
			x.log.Warn("the last commit lost to another writer on the bucket prefix", parquet.KeyError, err.Error())
			return nil
		case ctx.Err() == nil && errors.Is(err, parquet.ErrConflict):
			// Another writer on the bucket prefix won a commit: resume from
			// the manifest as it now is.
			x.log.Warn("another writer committed to the bucket prefix; reopening from its manifest", parquet.KeyError, err.Error())
			return bus.StandBy(err, nil)
		}
		return err
	})
}

// activeRun opens the writers, consumes until ctx ends, then commits and
// closes them.
func (x *Exporter) activeRun(ctx context.Context) (err error) {
	if err := x.open(ctx); err != nil {
		return err
	}
	defer func() {
		// Commit what is open even though ctx ended: a stop is not a
		// crash. Bounded, so that a dead disk does not hang the stop.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if cerr := x.close(cctx); err == nil {
			err = cerr
		}
	}()
	x.mu.Lock()
	start := x.state.Committed + 1
	x.mu.Unlock()
	c, err := bus.NewConsumer(x.cfg.JS, bus.ConsumerConfig{
		Name: x.cfg.Name, Stream: x.cfg.Stream, StartSeq: start, Raw: x.a != nil, Logger: x.cfg.Logger,
		Yield: func() bool {
			f := x.yield.Load()
			return f != nil && (*f)()
		},
	})
	if err != nil {
		return err
	}
	x.consumer.Store(c)
	x.log.Info("exporter active", "consumer", x.cfg.Name, "resume_seq", start, "parquet", x.cfg.Parquet.Dir, "archive", x.cfg.Archive.Dir)
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	x.stop = cancel
	err = x.stage.Consume(runCtx, c, x.apply, x.commitLoop)
	cancel(nil)
	if cause := context.Cause(runCtx); errors.Is(cause, parquet.ErrNotDurable) || errors.Is(cause, parquet.ErrConflict) {
		return cause // the Parquet writer stopped: a restart recovers
	}
	if ctx.Err() != nil {
		err = nil
	}
	return err
}

// stopIfFailed ends the active run when err says the Parquet writer
// stopped ([ErrNotDurable]): retrying could list a file twice, and
// running on without exporting would hide it.
func (x *Exporter) stopIfFailed(err error) {
	if (errors.Is(err, parquet.ErrNotDurable) || errors.Is(err, parquet.ErrConflict)) && x.stop != nil {
		x.stop(err)
	}
}

// open opens the writers and reads and checks the saved position.
func (x *Exporter) open(ctx context.Context) error {
	st, err := readStateOf(ctx, x.cfg.Parquet)
	if err != nil {
		return err
	}
	var id bus.StreamIdentity
	if x.cfg.Offline {
		if !st.Stream.IsZero() && st.Stream.Name != OfflineStream {
			return fmt.Errorf("%s is the output of a live exporter (stream %s): export offline to another directory", x.cfg.Parquet.Dir, st.Stream)
		}
		s, err := x.cfg.JS.Stream(ctx, x.cfg.Stream.Name)
		if err != nil {
			return err
		}
		id = bus.StreamIdentity{Name: OfflineStream}
		st.Committed = max(st.Committed, s.CachedInfo().Config.FirstSeq-min(s.CachedInfo().Config.FirstSeq, 1))
		return x.openWriters(ctx, id, st)
	}
	if st.Stream.Name == OfflineStream {
		return fmt.Errorf("%s was written by an offline 'sessionpipe export': a live exporter needs a directory of its own", x.cfg.Parquet.Dir)
	}
	if st.Stream.Name != "" && st.Stream.Name != x.cfg.Stream.Name {
		err = &bus.StreamMismatchError{Saved: st.Stream, Current: bus.StreamIdentity{Name: x.cfg.Stream.Name}}
	} else {
		id, err = x.stage.WaitStream(ctx, st.Stream) // the stream is made by the services: wait for it
	}
	if errors.Is(err, bus.ErrStreamMismatch) {
		return fmt.Errorf("%w: %s was exported from another incarnation of the stream; its sequences start over, and exporting into it would skip or overwrite files: export to a new -out directory (and archive), or move this one aside", err, x.cfg.Parquet.Dir)
	}
	if err != nil {
		return err
	}
	return x.openWriters(ctx, id, st)
}

// openWriters opens the Parquet and archive writers and sets the
// position.
func (x *Exporter) openWriters(ctx context.Context, id bus.StreamIdentity, st exporterState) error {
	w, err := parquet.NewWriter(x.cfg.Parquet)
	if err != nil {
		return err
	}
	var a *archive.ArchiveWriter
	if x.cfg.Archive.Dir != "" {
		if a, err = archive.NewArchiveWriter(x.cfg.Archive); err != nil {
			w.Close(ctx)
			return err
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.w, x.a = w, a
	x.state = exporterState{Stream: id, Committed: st.Committed, ArchiveFrom: st.ArchiveFrom}
	if a != nil && len(a.Segments()) == 0 && st.Committed > 0 && st.ArchiveFrom == 0 {
		x.state.ArchiveFrom = st.Committed + 1
	}
	x.archiveFrom.Store(x.state.ArchiveFrom)
	x.saved = st.Committed
	x.comm.Store(st.Committed)
	if st.Stream.IsZero() || x.cfg.Offline || x.state.ArchiveFrom != st.ArchiveFrom {
		return x.saveLocked(true)
	}
	return nil
}

// HighestSeq returns the highest stream sequence the output directories
// hold or have passed: an offline export continues after it.
func HighestSeq(parquetDir, archiveDir string) (uint64, error) {
	return HighestSeqOf(context.Background(), parquet.Config{Dir: parquetDir}, archive.ArchiveConfig{Dir: archiveDir})
}

// HighestSeqOf is [HighestSeq] for outputs that may be in buckets
// (Config.Bucket, ArchiveConfig.Bucket); an empty archive Dir and no
// Bucket: no archive.
func HighestSeqOf(ctx context.Context, pq parquet.Config, arc archive.ArchiveConfig) (uint64, error) {
	st, err := readStateOf(ctx, pq)
	if err != nil {
		return 0, err
	}
	high := st.Committed
	var m *parquet.Manifest
	if pq.Bucket != nil {
		m, err = parquet.ReadBucketManifest(ctx, pq.Bucket)
	} else {
		m, err = parquet.ReadManifest(pq.Dir)
	}
	if err != nil {
		return 0, err
	}
	for _, f := range m.Files {
		high = max(high, f.LastSeq)
	}
	if arc.Dir != "" || arc.Bucket != nil {
		var segs []archive.Segment
		if arc.Bucket != nil {
			segs, err = archive.ReadBucketArchiveManifest(ctx, arc.Bucket)
		} else {
			segs, err = archive.ReadArchiveManifest(arc.Dir)
		}
		if err != nil {
			return 0, err
		}
		for _, s := range segs {
			high = max(high, s.LastSeq)
		}
	}
	return high, nil
}

// apply takes one batch into the writers.
func (x *Exporter) apply(ctx context.Context, b *bus.Batch) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	for i := range b.Entries {
		d := &b.Entries[i]
		if !x.stage.Matches(d) {
			continue
		}
		if err := x.w.WriteIndex(ctx, &d.Entry, d.Seq, d.Index); err != nil {
			x.errs.Add(1)
			x.noteCommitLocked(ctx, err)
			x.stopIfFailed(err)
			return err
		}
	}
	for i := range b.Raw {
		d := &b.Raw[i]
		if !x.stage.MatchesRaw(d) {
			continue
		}
		if err := x.a.Write(ctx, &d.Chunk, d.Seq); err != nil {
			x.errs.Add(1)
			x.noteCommitLocked(ctx, err)
			x.stopIfFailed(err)
			return err
		}
		if x.cfg.PurgeArchived && strings.HasPrefix(d.Subject, x.rawPrefix) && (len(x.rawSeqs) == 0 || d.Seq > x.rawSeqs[len(x.rawSeqs)-1]) {
			// A message of its own (not a batch's block), archived: it
			// can go once its segment is committed. A redelivered one
			// (below the last) is in the list already.
			if len(x.rawSeqs) >= maxRawSeqs {
				// Deletes keep failing: the subject's purge takes them.
				x.rawSeqs = x.rawSeqs[:0]
				x.subjectDue.Store(true)
			}
			x.rawSeqs = append(x.rawSeqs, d.Seq)
		}
	}
	x.undec.Add(int64(len(b.Undecodable)))
	x.stage.NoteGap(b.Gap)
	x.w.Advance(b.Last)
	if x.a != nil {
		x.a.Advance(b.Last)
	}
	x.countLocked()
	if b.Pending == 0 {
		select { // the commit loop decides whether to commit
		case x.caught <- struct{}{}:
		default:
		}
	}
	return x.saveLocked(false)
}

// commitLoop commits what reached its age and saves the position, every
// CommitInterval (the stage's ticks), until ctx ends.
func (x *Exporter) commitLoop(ctx context.Context, tick <-chan time.Time) {
	age := x.cfg.Parquet.PartAge
	if age <= 0 {
		age = parquet.DefaultPartAge
	}
	warmUntil := time.Now().Add(age)
	var lastCatchUp time.Time
	caughtUp := false // caught up since the last catch-up commit
	// catchUp commits everything on catching up, in the warm-up, at most
	// once per CatchUpCommit; it reports whether it did.
	catchUp := func(now time.Time) bool {
		if !caughtUp || x.cfg.CatchUpCommit < 0 || now.After(warmUntil) || now.Sub(lastCatchUp) < x.cfg.CatchUpCommit {
			return false
		}
		caughtUp, lastCatchUp = false, now
		x.commit(ctx, now, true)
		return true
	}
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick:
			if !catchUp(now) {
				x.commit(ctx, now, false)
			}
		case <-x.caught:
			caughtUp = true
			catchUp(time.Now())
		case <-x.flush:
			x.commit(ctx, time.Now(), true)
		}
	}
}

// CommitNow asks the active exporter to commit every open file and
// segment at once, whatever their age (a one-shot run that wants its
// output now). It does not wait.
func (x *Exporter) CommitNow() {
	select {
	case x.flush <- struct{}{}:
	default:
	}
}

// commit commits the parts and segments past their age (all of them,
// with all) and saves the position. The Parquet files are written
// without x.mu: the consumer goes on applying batches into new parts
// meanwhile (the writer keeps the acknowledged position below the parts
// in flight), so that encoding and syncing the files overlaps decoding
// the next messages instead of stopping them.
func (x *Exporter) commit(ctx context.Context, now time.Time, all bool) {
	x.mu.Lock()
	c, err := x.w.Begin(now, all)
	x.mu.Unlock()
	c.Run(ctx)
	x.mu.Lock()
	if e := x.w.Finish(c); err == nil {
		err = e
	}
	if err == nil && x.a != nil {
		if all {
			err = x.a.Flush(ctx)
		} else {
			err = x.a.CommitDue(ctx, now)
		}
	}
	x.countLocked()
	if err == nil {
		err = x.saveLocked(false)
	}
	x.noteCommitLocked(ctx, err)
	x.mu.Unlock()
	x.stopIfFailed(err)
	if err != nil && ctx.Err() == nil {
		x.errs.Add(1)
		x.log.Error("exporter commit failed; retrying", parquet.KeyError, err)
	}
	if err == nil {
		x.purgeArchived(ctx)
	}
}

// SetYield has the exporter wait before each pull request while yield
// returns true (for at most ten seconds at a time): `sessionpipe run`
// gives the two cores it shares to the tailer and the indexer while the
// tailer is reading (-live-first). It may be called while the exporter
// runs.
func (x *Exporter) SetYield(yield func() bool) {
	x.yield.Store(&yield)
}

// purgeArchived removes the raw messages up to the committed sequence
// from the stream (ExporterConfig.PurgeArchived). The raw messages this
// process archived are deleted one by one: the server rewrites a message
// block as soon as half of it is deleted, so the disk is given back at
// once (a purge of the subject leaves that to the store's next sync, up
// to two minutes later, and `sessionpipe run -once` exits before). Those
// archived before it started, or while another consumer kept them, go
// with one purge of the subject. A failure is logged and left for the
// next commit: the original lines then stay in the stream a little
// longer, nothing is lost.
func (x *Exporter) purgeArchived(ctx context.Context) {
	if !x.cfg.PurgeArchived || x.cfg.Archive.Dir == "" || ctx.Err() != nil {
		return
	}
	x.purgeMu.Lock()
	defer x.purgeMu.Unlock()
	upTo := x.comm.Load()
	if upTo <= x.purgedSeq.Load() {
		return
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	warn := func(err error) {
		if parent.Err() != nil {
			// Stopping: what is left goes at the next start (subjectDue).
			x.log.Debug("purge of the original lines interrupted", parquet.KeyError, err)
			return
		}
		if err.Error() != x.purgeErr { // once per kind of failure, not at every commit
			x.log.Warn("original lines not purged from the stream; retrying at each commit", parquet.KeyError, err)
		}
		x.purgeErr = err.Error()
	}
	s, err := x.cfg.JS.Stream(ctx, x.cfg.Stream.Name)
	if err != nil {
		warn(err)
		return
	}
	other, err := x.otherRawReader(ctx, s)
	if err != nil {
		warn(err)
		return
	}
	x.purgeBlocked.Store(other != "")
	if other != "" {
		if other != x.blockedBy {
			x.log.Warn("original lines kept in the stream: another durable consumer reads them", "consumer", other)
		}
		x.blockedBy = other
		x.mu.Lock()
		n, _ := slices.BinarySearch(x.rawSeqs, upTo+1)
		x.rawSeqs = append(x.rawSeqs[:0], x.rawSeqs[n:]...) // those up to upTo: the subject's purge takes them once unblocked
		x.mu.Unlock()
		x.subjectDue.Store(true)
		return
	}
	x.blockedBy = ""
	x.mu.Lock()
	n, _ := slices.BinarySearch(x.rawSeqs, upTo+1)
	seqs := slices.Clone(x.rawSeqs[:n])
	x.mu.Unlock()
	for i, seq := range seqs {
		if err := s.DeleteMsg(ctx, seq); err != nil && !msgGone(err) {
			warn(err)
			x.dropRawSeqs(seqs[:i])
			return
		}
	}
	x.dropRawSeqs(seqs)
	if x.subjectDue.Swap(false) {
		// What no delete of this process takes: archived before it
		// started, or while the deletes could not be made. Never past
		// what the archive's committed segments hold, and not at all
		// when the archive started after the output (the lines before
		// it are in no archive, and a purge has no lower bound).
		if bound := min(upTo, x.archived.Load()); bound > 0 && x.archiveFrom.Load() == 0 {
			if err := s.Purge(ctx, jetstream.WithPurgeSubject(bus.RawFilter(x.cfg.Stream.Prefix)), jetstream.WithPurgeSequence(bound+1)); err != nil {
				x.subjectDue.Store(true)
				warn(err)
				return
			}
		}
	}
	x.purgedSeq.Store(upTo)
	x.purgeErr = ""
	x.log.Debug("original lines purged from the stream", "up_to", upTo, "messages", len(seqs))
}

// msgGone reports whether err, from deleting a stream message, says that
// the message is not in the stream any more: deleted already (a delete
// whose reply was lost to a stop, the stream's limits). The server
// answers a delete of a missing message with "sequence not found"
// (10043), or, when the message's whole block was removed, with a failed
// delete (10057) saying "no message found"; nats.go does not wrap either
// but writes it into its message (jetstream's deleteMsg). TestMsgGone
// pins both against the embedded server, so that an upgrade changing
// them fails there.
func msgGone(err error) bool {
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return true
	}
	if !errors.Is(err, jetstream.ErrMsgDeleteUnsuccessful) {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "err_code=10043") || // sequence not found
		strings.Contains(msg, "err_code=10057") && strings.Contains(msg, "description=no message found") // its whole block is gone
}

// maxRawSeqs bounds the sequences of archived raw messages an exporter
// keeps to delete (8 MiB): past it, when deletes keep failing, the next
// purge purges the subject instead.
const maxRawSeqs = 1 << 20

// dropRawSeqs takes the sequences of deleted raw messages, a prefix of
// x.rawSeqs, off the list.
func (x *Exporter) dropRawSeqs(seqs []uint64) {
	if len(seqs) == 0 {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	n, _ := slices.BinarySearch(x.rawSeqs, seqs[len(seqs)-1]+1)
	x.rawSeqs = append(x.rawSeqs[:0], x.rawSeqs[n:]...)
}

// otherRawReader returns the name of a durable consumer of s, other
// than this exporter's, whose filter takes raw messages; "" if none. It
// reads the listing to its end: nats.go's lister blocks on a consumer
// not taken.
func (x *Exporter) otherRawReader(ctx context.Context, s jetstream.Stream) (string, error) {
	raw := bus.RawFilter(x.cfg.Stream.Prefix)
	list := s.ListConsumers(ctx)
	other := ""
	for info := range list.Info() {
		cfg := info.Config
		if other != "" || info.Name == x.cfg.Name || cfg.Durable == "" {
			continue // found, this exporter, or an ephemeral reader (it goes away on its own)
		}
		filters := cfg.FilterSubjects
		if cfg.FilterSubject != "" {
			filters = append(filters, cfg.FilterSubject)
		}
		if len(filters) == 0 || slices.ContainsFunc(filters, func(f string) bool { return server.SubjectsCollide(f, raw) }) {
			other = info.Name // it reads everything, or the raw subject
		}
	}
	return other, list.Err()
}

// close commits everything open, saves the position and closes the
// writers.
func (x *Exporter) close(ctx context.Context) error {
	if err := x.closeWriters(ctx); err != nil {
		return err
	}
	if !x.cfg.Offline { // an offline export's stream is removed next
		x.purgeArchived(ctx)
	}
	return nil
}

// closeWriters commits everything open, saves the position and closes
// the writers.
func (x *Exporter) closeWriters(ctx context.Context) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	var errs []error
	if x.w != nil {
		errs = append(errs, x.w.Close(ctx))
	}
	if x.a != nil {
		errs = append(errs, x.a.Close(ctx))
	}
	x.countLocked()
	errs = append(errs, x.saveLocked(true))
	x.w, x.a = nil, nil
	return errors.Join(errs...)
}

// committed returns the highest sequence all of whose messages are in
// committed files and segments; x.mu held.
func (x *Exporter) committedLocked() uint64 {
	s := x.w.Committed()
	if x.a != nil {
		s = min(s, x.a.Committed())
	}
	return max(s, x.state.Committed)
}

// countLocked refreshes the counters from the writers; x.mu held.
func (x *Exporter) countLocked() {
	if x.w == nil {
		return
	}
	ws := x.w.Stats()
	x.files.Store(ws.Files)
	x.rows.Store(ws.Rows)
	x.bytes.Store(ws.Bytes)
	if x.a != nil {
		x.archived.Store(x.a.Highest())
		as := x.a.Stats()
		x.segments.Store(as.Segments)
		x.rawBytes.Store(as.RawBytes)
		x.arcBytes.Store(as.Bytes)
	}
}

// saveLocked saves the position when it moved (or always, with force);
// x.mu held. The position may lag the manifests (a crash in between):
// resuming before committed messages is safe, the writers skip them.
func (x *Exporter) saveLocked(force bool) error {
	if x.w == nil {
		return nil
	}
	x.state.Committed = x.committedLocked()
	x.comm.Store(x.state.Committed)
	if !force && x.state.Committed == x.saved {
		return nil
	}
	data, err := json.Marshal(&x.state)
	if err != nil {
		return err
	}
	if b := x.cfg.Parquet.Bucket; b != nil {
		// After the manifests: a position never runs ahead of them.
		ctx, cancel := context.WithTimeout(context.Background(), commit.RemoteOpTimeout)
		defer cancel()
		if _, err := b.Put(ctx, StateName, append(data, '\n'), objstore.Cond{}); err != nil {
			return fmt.Errorf("save position: %w", err)
		}
	} else if err := commit.WriteFileAtomic(x.cfg.Parquet.Dir, StateName, append(data, '\n')); err != nil {
		return err
	}
	x.saved = x.state.Committed
	return nil
}

// readStateOf reads the saved position of the output cfg describes, a
// directory or a bucket; none yields the zero state.
func readStateOf(ctx context.Context, cfg parquet.Config) (exporterState, error) {
	if cfg.Bucket == nil {
		return readState(cfg.Dir)
	}
	var st exporterState
	data, _, err := cfg.Bucket.Get(ctx, StateName)
	if errors.Is(err, objstore.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("read position: %w", err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("%w: %s: %v", parquet.ErrManifest, cfg.Bucket.ObjectURL(StateName), err)
	}
	return st, nil
}

// readState reads the saved position; none yields the zero state.
func readState(dir string) (exporterState, error) {
	var st exporterState
	data, err := os.ReadFile(filepath.Join(dir, StateName))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("%w: %s: %v", parquet.ErrManifest, filepath.Join(dir, StateName), err)
	}
	return st, nil
}

// ExporterStats are an exporter's counters.
type ExporterStats struct {
	Active        bool   // holds the lease (else stands by)
	Committed     uint64 // every message up to it is committed
	Files         int64  // Parquet files committed by this process
	Rows          int64
	Bytes         int64
	Segments      int64 // archive segments committed by this process
	RawBytes      int64 // original bytes in them
	ArchiveBytes  int64 // their size
	Pending       uint64
	Forged        int64
	GapMessages   int64
	Undecodable   int64
	CommitErrors  int64
	PurgedSeq     uint64 // raw messages up to it purged (ExporterConfig.PurgeArchived)
	PurgeBlocked  bool   // another durable consumer reads raw messages: none purged
	ConsumerStats bus.ConsumerStats
}

// Stats returns the counters.
func (x *Exporter) Stats() ExporterStats {
	s := ExporterStats{
		Active: x.stage.Active(), Committed: x.comm.Load(), Files: x.files.Load(), Rows: x.rows.Load(), Bytes: x.bytes.Load(),
		Segments: x.segments.Load(), RawBytes: x.rawBytes.Load(), ArchiveBytes: x.arcBytes.Load(),
		Forged: int64(x.stage.Forged()), GapMessages: int64(x.stage.GapMessages()), Undecodable: x.undec.Load(), CommitErrors: x.errs.Load(),
		PurgedSeq: x.purgedSeq.Load(), PurgeBlocked: x.purgeBlocked.Load(),
	}
	if c := x.consumer.Load(); c != nil {
		s.ConsumerStats = c.Stats()
		s.Pending = s.ConsumerStats.Pending
	}
	return s
}
