package tail

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/dirlock"
	"github.com/sessionpipe/sessionpipe/pipeline/internal/retry"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

// Tailer follows the transcript files selected by globs and publishes
// their entries to JetStream. See the package documentation for what it
// guarantees.
type Tailer struct {
	cfg     Config
	log     *slog.Logger
	watches watchSet
	cp      *Checkpoints
	m       *Metrics

	// pubCtx is the context of every publish; it outlives the reading
	// context so that a graceful stop can wait for acknowledgements.
	pubCtx context.Context

	mu          sync.Mutex
	files       map[fileID]*file
	byPath      map[string]*file
	pending     []*file
	handles     handleList // the files with an open handle, least recently used first
	saved       map[fileID]FileState
	watched     map[string]bool                  // directories given a notification watch (or that failed to get one)
	scanning    bool                             // a rescan is walking the watches
	watchCounts []int64                          // files followed per watch, at the last rescan
	scanned     atomic.Bool                      // the first scan of the globs is done
	inflight    atomic.Int64                     // messages published and not completed, all files' inflight
	watcher     atomic.Pointer[fsnotify.Watcher] // while Run has one, for the watched-directories gauge

	lastSaved []FileState // as last written, sorted by path; owned by save's callers (loop, then Run)
	savedGen  uint64      // changes when lastSaved was taken
	// changes counts the changes of what checkpoints hold (offsets,
	// paths, formats, sizes, files found or forgotten), so that an idle
	// tailer's saves cost nothing.
	changes atomic.Uint64

	// docPaths is, by path, the digests last published of the document
	// there (see DocState): a document rewritten by renaming a new file
	// over it (another inode) starts from them. Guarded by mu.
	docPaths map[string]map[string]DocEntry
	// readAtFree and droppedAtFree are t.m.bytes and t.dropped when
	// memory was last given back to the OS; freeDue asks for it.
	readAtFree    int64
	droppedAtFree int64
	dropped       atomic.Int64 // decoders of idle files let go
	freeDue       atomic.Bool
	savedAt       map[fileID]int // index in lastSaved by identity (unique, as t.files is keyed by it)
	rejects       chan *bus.DeadLetter
	wake          chan struct{}
	rescanC       chan struct{}

	// dbs follows the agents' SQLite databases under the watches
	// (database.go).
	dbs *databases

	// leftOut holds the files under the watches left out by their names
	// (see watchSet.left), as the last rescan found them; a path in it
	// is true while the current rescan has seen it. Owned by rescan.
	leftOut map[string]bool
}

// New returns a Tailer for cfg. It opens the checkpoint store but reads
// nothing until [Tailer.Run].
func New(cfg Config) (*Tailer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	reg := cfg.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	m := newMetrics()
	if err := m.register(reg); err != nil {
		return nil, fmt.Errorf("register the tailer's metrics: %w", err)
	}
	cp, err := OpenCheckpoints(cfg.StateDir)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := &Tailer{
		cfg:     cfg,
		log:     log.With(KeyComponent, "tail"),
		watches: newWatchSet(cfg.Watch),
		cp:      cp,
		m:       m,
		files:   make(map[fileID]*file),
		byPath:  make(map[string]*file),
		watched: make(map[string]bool),
		rejects: make(chan *bus.DeadLetter, 1024),
		wake:    make(chan struct{}, 1),
		rescanC: make(chan struct{}, 1),
	}
	t.leftOut = make(map[string]bool)
	t.dbs = newDatabases(t)
	t.watches.left = t.noteLeftOut
	t.m.lag = t.lagBytes
	t.m.watchedDirs = t.watchedDirs
	t.m.watchFiles = t.watchFiles
	return t, nil
}

// noteLeftOut records a file under the watches that is not followed
// because of its name, logging it the first time it is seen.
func (t *Tailer) noteLeftOut(path string) {
	if isDatabaseName(filepath.Base(path)) {
		t.dbs.add(path) // polled, not tailed
		return
	}
	if _, ok := t.leftOut[path]; !ok {
		t.log.Info("not followed: its name is not a transcript's", KeyFile, path)
	}
	t.leftOut[path] = true
}

// Metrics returns the tailer's counters.
func (t *Tailer) Metrics() *Metrics { return t.m }

// Run follows the files until ctx ends. Stopping is two-phase: when ctx
// ends, reading stops at once; then Run waits up to Config.Drain (counted
// from the end of ctx, and bounding a read blocked on a full publish
// window too) for the acknowledgements of what was published, saves the
// checkpoints one last time and returns. Publishes still unacknowledged
// after the drain are abandoned: their lines are read and sent again
// after a restart, and the stream drops what it already had.
//
// Run owns the state directory while it runs (an OS lock, released when
// it returns or the process exits): it fails at once with an error
// wrapping dirlock.ErrHeld (a *dirlock.HeldError naming the holder) when
// another tailer, in this process or another, holds it.
//
// Run returns nil after a stop by ctx, or the error that made it stop
// (the state directory held or not writable, a bad checkpoint file,
// wrapping [ErrCheckpoint]). A Tailer runs once at a time.
func (t *Tailer) Run(ctx context.Context) error {
	lock, err := dirlock.Acquire(t.cfg.StateDir, "tailer checkpoints")
	if errors.Is(err, dirlock.ErrHeld) {
		return err // says who holds it
	}
	if err != nil {
		return fmt.Errorf("lock state directory %s: %w", t.cfg.StateDir, err)
	}
	defer lock.Release()
	drain := t.cfg.Drain
	states, err := t.cp.Load()
	if err != nil {
		return err
	}
	if err := t.dbs.load(); err != nil {
		return err
	}
	t.saved = make(map[fileID]FileState, len(states))
	t.docPaths = make(map[string]map[string]DocEntry)
	for _, s := range states {
		t.saved[fileID{Dev: s.Dev, Ino: s.Ino}] = s
		if s.Doc != nil {
			t.docPaths[s.Path] = s.Doc.Entries
		}
	}
	// Publishes outlive ctx by drain at most: a worker blocked on a full
	// publish window (JetStream down) must not hold the stop for longer.
	pubCtx, cancelPub := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelPub()
	t.pubCtx = pubCtx
	stopped := make(chan struct{})
	defer close(stopped)
	go func() {
		select {
		case <-ctx.Done():
		case <-stopped:
			return
		}
		timer := time.NewTimer(drain)
		defer timer.Stop()
		select {
		case <-timer.C:
			cancelPub()
		case <-stopped:
		}
	}()

	var watcher *fsnotify.Watcher
	if !t.cfg.Poll {
		if watcher, err = fsnotify.NewWatcher(); err != nil {
			t.log.Warn("file notifications unavailable, relying on rescans", KeyError, err)
			watcher = nil
		}
	}
	t.watcher.Store(watcher)
	t.log.Info("tailer starting", "watch", t.cfg.Watch, "state_dir", t.cfg.StateDir, "checkpointed_files", len(states),
		"notifications", watcher != nil, "rescan", t.cfg.RescanInterval)
	t.rescan(watcher)
	t.warnEmptyWatches()
	t.scanned.Store(true)

	var wg sync.WaitGroup
	for range t.cfg.Workers {
		wg.Go(func() { t.work(ctx) })
	}
	wg.Go(func() { t.loop(ctx, watcher) })
	wg.Go(func() { t.publishRejects(ctx) })
	wg.Go(func() { t.dbs.run(ctx) })
	wg.Wait()
	if watcher != nil {
		t.watcher.Store(nil)
		watcher.Close()
	}

	// Soft stop: reading has stopped; wait for what is in flight until
	// the drain, counted from the end of ctx, is over.
	if err := t.cfg.Publisher.Flush(pubCtx); err != nil {
		t.log.Warn("stopping before every entry was acknowledged; they will be sent again", KeyError, err)
	}
	cancelPub()
	t.closeHandles()
	if err := t.save(); err != nil {
		t.log.Error("saving checkpoints", KeyError, err)
		return err
	}
	t.log.Info("tailer stopped")
	return nil
}

// warnEmptyWatches logs the watches that matched no file at the first
// scan: a warning when there is not even a directory to wait on (a typo,
// or a tool not installed), else an Info.
func (t *Tailer) warnEmptyWatches() {
	t.mu.Lock()
	counts := slices.Clone(t.watchCounts)
	t.mu.Unlock()
	for i, w := range t.watches.watches {
		if i < len(counts) && counts[i] > 0 {
			continue
		}
		switch {
		case t.cfg.DefaultWatches:
			t.log.Debug("default location not found here", KeyWatch, w.given)
		case t.watches.waitsOn(i):
			t.log.Info("watch matches no file yet", KeyWatch, w.given)
		default:
			t.log.Warn("watch matches nothing and has no directory to wait on", KeyWatch, w.given)
		}
	}
}

// loop runs the periodic work and the file notifications until ctx ends.
func (t *Tailer) loop(ctx context.Context, watcher *fsnotify.Watcher) {
	rescan := time.NewTicker(t.cfg.RescanInterval)
	defer rescan.Stop()
	save := time.NewTicker(t.cfg.CheckpointInterval)
	defer save.Stop()
	idle := time.NewTicker(max(t.cfg.IdleTimeout/4, time.Second))
	defer idle.Stop()
	var retry backoff // of the saves, while they fail
	var events chan fsnotify.Event
	var errs chan error
	if watcher != nil {
		events, errs = watcher.Events, watcher.Errors
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-rescan.C:
			t.rescan(watcher)
		case <-t.rescanC:
			t.rescan(watcher)
		case now := <-save.C:
			t.freeMemory()
			if !retry.due(now) {
				continue
			}
			err := t.save()
			if err != nil {
				next := retry.failed(now, t.cfg.CheckpointInterval)
				t.log.Error("saving checkpoints", KeyError, err, "failures", retry.failures, "next_try", next.Sub(now).Round(time.Second))
			} else if retry.failures > 0 {
				t.log.Info("checkpoints saved again", "after_failures", retry.failures)
				retry = backoff{}
			}
		case <-idle.C:
			t.closeIdle()
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			t.event(watcher, ev)
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			// Overflowed queues lose events: a rescan finds what they said.
			t.log.Warn("file notification error, rescanning", KeyError, err)
			t.requestRescan()
		}
	}
}

// A burst after which memory is given back to the operating system at
// once: freeAfterBytes read, freeAfterDecoders decoders let go, or the
// decoder of a file with a line over hugeLine.
const (
	freeAfterBytes    = 64 << 20
	freeAfterDecoders = 1000
	hugeLine          = 16 << 20
)

// freeMemory gives the heap's free memory back to the operating system
// once a burst of reading (a backfill, a huge line) is over and the
// tailer is idle. The Go runtime returns it by itself, but over minutes:
// meanwhile a laptop tailer that read a 200 MB line or 20,000 files
// would hold hundreds of MB it no longer uses. It costs one garbage
// collection per burst, none while idle.
func (t *Tailer) freeMemory() {
	read, dropped := t.m.bytes.Load(), t.dropped.Load()
	due := read-t.readAtFree >= freeAfterBytes || dropped-t.droppedAtFree >= freeAfterDecoders || t.freeDue.Load()
	if !due || !t.Idle() {
		return
	}
	t.readAtFree, t.droppedAtFree = read, dropped
	t.freeDue.Store(false)
	debug.FreeOSMemory()
}

// maxSaveBackoff bounds the wait between two attempts to save the
// checkpoints while saving fails (a read-only or full state directory).
const maxSaveBackoff = time.Minute

// backoff spaces the retries of a failing periodic task: each failure
// doubles the wait, from the task's period up to maxSaveBackoff, so that
// a lasting failure is tried (and logged) a few times a minute, not
// every period.
type backoff struct {
	failures int
	next     time.Time // no attempt before it
}

// due reports whether an attempt may run at now.
func (b *backoff) due(now time.Time) bool { return !now.Before(b.next) }

// failed records a failure at now and returns when to try again.
func (b *backoff) failed(now time.Time, period time.Duration) time.Time {
	b.failures++
	b.next = now.Add(retry.Delay(b.failures, period, maxSaveBackoff))
	return b.next
}

// event handles one file notification.
func (t *Tailer) event(watcher *fsnotify.Watcher, ev fsnotify.Event) {
	switch {
	case ev.Has(fsnotify.Create):
		info, err := os.Stat(ev.Name)
		if err != nil {
			return
		}
		if info.IsDir() {
			if t.watches.mayHold(ev.Name) {
				t.watch(watcher, ev.Name)
				t.requestRescan() // files created before the watch
			}
			return
		}
		if w := t.watches.match(ev.Name); w >= 0 && info.Mode().IsRegular() {
			t.found(ev.Name, info, w)
		}
	case ev.Has(fsnotify.Write):
		t.mu.Lock()
		f := t.byPath[ev.Name]
		if f != nil {
			t.schedule(f)
		}
		t.mu.Unlock()
		if w := t.watches.match(ev.Name); f == nil && w >= 0 {
			if info, err := os.Stat(ev.Name); err == nil && info.Mode().IsRegular() {
				t.found(ev.Name, info, w)
			}
		}
	case ev.Has(fsnotify.Rename), ev.Has(fsnotify.Remove):
		// Where did it go? The rescan tells (a rename keeps the inode).
		t.unwatch(watcher, ev.Name)
		t.requestRescan()
	}
}

func (t *Tailer) requestRescan() {
	select {
	case t.rescanC <- struct{}{}:
	default:
	}
}

// rescan walks the watches, picks up new, renamed and changed files, and
// notices the ones that are gone.
func (t *Tailer) rescan(watcher *fsnotify.Watcher) {
	t.mu.Lock()
	for _, f := range t.files {
		f.seen, f.seenAt, f.alias = false, false, ""
	}
	t.scanning = true
	t.mu.Unlock()
	t.watches.walk(
		func(path string, info fs.FileInfo, watch int) { t.found(path, info, watch) },
		func(dir string) { t.watch(watcher, dir) },
		func(err error) { t.log.Debug("rescan", KeyError, err) },
	)
	for path, seen := range t.leftOut {
		if !seen {
			delete(t.leftOut, path)
			continue
		}
		t.leftOut[path] = false
	}
	t.m.skippedNames.Store(int64(len(t.leftOut)))
	t.mu.Lock()
	defer t.mu.Unlock()
	t.scanning = false
	counts := make([]int64, len(t.watches.watches))
	var seen int64
	for id, f := range t.files {
		if f.seen {
			seen++
			switch {
			case f.alias == "":
			case f.seenAt:
				t.noteAlias(f, f.alias)
			default:
				// Its path leads to it no more: renamed.
				t.rename(f, f.alias, f.aliasWatch)
			}
			if f.watch >= 0 {
				counts[f.watch]++
			}
			continue
		}
		if !f.gone {
			f.gone = true
			t.log.Debug("file gone", KeyFile, f.path)
		}
		// Read what is left through the open handle (a deleted file
		// stays readable while open), then forget the file.
		if f.handle != nil && !f.busy {
			t.schedule(f)
			continue
		}
		if !f.busy && !f.queued && f.drained() {
			t.changes.Add(1)
			delete(t.files, id)
			if t.byPath[f.path] == f {
				delete(t.byPath, f.path)
			}
		}
	}
	t.m.files.Store(seen)
	t.watchCounts = counts
	t.m.rescans.Add(1)
}

// drained reports whether everything read of f is acknowledged.
func (f *file) drained() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inflight == 0
}

// found records a file seen at path, which watch matched.
//
// A file has one path: the one first seen, as long as it still leads to
// the file. Another name of it (a symbolic link to a watched directory
// inside another watched directory, a hard link) is an alias, logged
// once: entries keep the first path. A file seen only under another name
// was renamed: a rescan finds that when its path is not seen any more; a
// notification, by looking at the old path.
func (t *Tailer) found(path string, info fs.FileInfo, watch int) {
	id, ok := idOf(info)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.files[id]
	if f == nil {
		f = t.newFile(id, path, info)
		f.watch = watch
		t.files[id] = f
		t.changes.Add(1)
	}
	// A file seen gone, or under another name, may be another file that
	// got the inode of a deleted one: a read compares its first bytes
	// with the fingerprint (and reads it from the start if they differ),
	// even when its size happens to be the same.
	check := f.gone
	f.seen, f.gone = true, false
	if f.path == path {
		f.seenAt = true
	} else if t.scanning {
		f.alias, f.aliasWatch = path, watch
	} else if st, err := os.Stat(f.path); err == nil && sameFile(st, id) {
		t.noteAlias(f, path)
	} else {
		t.rename(f, path, watch)
		check = true
	}
	if f.path == path {
		if old := t.byPath[path]; old != f {
			if old != nil {
				old.gone = true // replaced by another file at the same path
			}
			t.byPath[path] = f
		}
	}
	// The modification time catches a rewrite to the same size when no
	// notification does (Poll mode, missed events).
	if info.Size() != f.size || !info.ModTime().Equal(f.mtime) || f.waiting || check {
		t.schedule(f)
	}
}

// rename makes path the path of f; t.mu must be held.
func (t *Tailer) rename(f *file, path string, watch int) {
	if t.byPath[f.path] == f {
		delete(t.byPath, f.path)
	}
	t.log.Info("file renamed", "from", f.path, "to", path)
	t.m.renames.Add(1)
	t.changes.Add(1)
	f.path, f.watch, f.aliasLogged = path, watch, false
	if old := t.byPath[path]; old != nil && old != f {
		old.gone = true
	}
	t.byPath[path] = f
	// A file seen gone, or under another name, may be another file that
	// got the inode of a deleted one: the next read compares its first
	// bytes with the fingerprint.
	t.schedule(f)
}

// noteAlias logs, once per file, that path is another name of f; t.mu
// must be held.
func (t *Tailer) noteAlias(f *file, path string) {
	if !f.aliasLogged {
		f.aliasLogged = true
		t.log.Info("file seen under another name; following it under its first", KeyFile, f.path, "alias", path)
	}
}

// sameFile reports whether info is of the file with identity id.
func sameFile(info fs.FileInfo, id fileID) bool {
	got, ok := idOf(info)
	return ok && got == id
}

// newFile creates the state of a file seen for the first time in this
// run, resuming from its checkpoint if it has one.
func (t *Tailer) newFile(id fileID, path string, info fs.FileInfo) *file {
	f := &file{id: id, path: path, meta: isMeta(path), size: -1, static: t.cfg.Static && !t.scanned.Load()}
	f.doc = !f.meta && isDoc(path)
	if s, ok := t.saved[id]; ok {
		if s.Doc != nil {
			f.docAcked, f.docs = s.Doc, s.Doc.Entries
		}
		f.fpSum, f.fpLen = s.Fingerprint, s.FingerprintLen
		f.format, f.skipped = s.Format, s.Skipped
		f.acked = mark{at: s.Offset, n: int32(s.CheckLen), sum: s.CheckSum,
			hAt: s.LineAt, hn: int32(s.LineCheckLen), hsum: s.LineCheckSum}
		f.resumeAt, f.loaded = s.Offset, true
		if f.skipped {
			// Look again only if it grew since it was judged.
			f.size = s.Size
			if info.Size() != s.Size {
				f.skipped = false
			}
		}
		return f
	}
	if t.cfg.FromEnd && !f.meta && !f.doc {
		end := lastLineEnd(path, info.Size())
		f.acked, f.resumeAt = mark{at: end}, end
	}
	t.log.Debug("new file", KeyFile, path, "size", info.Size())
	return f
}

// lastLineEnd returns the offset just past the last "\n" in the first
// size bytes of the file at path (0 if none or on error).
func lastLineEnd(path string, size int64) int64 {
	h, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer h.Close()
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		start := max(end-int64(len(buf)), 0)
		n, err := h.ReadAt(buf[:end-start], start)
		if err != nil && n < int(end-start) {
			return 0
		}
		for i := n - 1; i >= 0; i-- {
			if buf[i] == '\n' {
				return start + int64(i) + 1
			}
		}
		end = start
	}
	return 0
}

// schedule queues f for reading; t.mu must be held.
func (t *Tailer) schedule(f *file) {
	if f.busy {
		f.again = true
		return
	}
	if f.queued {
		return
	}
	f.queued = true
	t.pending = append(t.pending, f)
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// work reads queued files until ctx ends.
func (t *Tailer) work(ctx context.Context) {
	w := &worker{rd: jsonl.NewReader(nil, jsonl.ReaderConfig{MaxLineBytes: t.cfg.MaxLineBytes})}
	for {
		t.mu.Lock()
		var f *file
		if len(t.pending) > 0 {
			f = t.pending[0]
			t.pending = t.pending[1:]
			f.queued, f.busy, f.again = false, true, false
		}
		more := len(t.pending) > 0
		t.mu.Unlock()
		if more {
			select { // let another worker take the next one
			case t.wake <- struct{}{}:
			default:
			}
		}
		if f == nil {
			select {
			case <-ctx.Done():
				return
			case <-t.wake:
				continue
			}
		}
		t.process(ctx, w, f)
		if ctx.Err() != nil {
			t.mu.Lock()
			f.busy = false
			t.mu.Unlock()
			return
		}
	}
}

// process reads f once through a cached handle.
func (t *Tailer) process(ctx context.Context, w *worker, f *file) {
	h, path, err := t.handle(f)
	if err == nil && h != nil {
		err = t.readFile(ctx, w, f, h, path)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	f.busy = false
	f.lastUse = time.Now()
	if f.handle != nil {
		t.handles.moveToBack(f)
	}
	if err != nil && ctx.Err() == nil {
		t.m.readErrors.Add(1)
		t.log.Warn("reading file", KeyFile, path, KeyError, err)
	}
	if f.again {
		t.schedule(f)
	}
	if f.gone && f.handle != nil && !f.again {
		// Everything left was read: let the deleted file go.
		t.closeHandle(f)
	}
	if t.handles.n > t.cfg.MaxOpenFiles && f.handle != nil && !f.queued {
		// Over the bound because the files opened lately were all busy
		// or queued when it was checked: this one is done, close it.
		t.closeHandle(f)
	}
}

// handle returns an open handle on f, opening it if needed; it verifies
// that the path still leads to the same file.
func (t *Tailer) handle(f *file) (*os.File, string, error) {
	t.mu.Lock()
	h, path := f.handle, f.path
	t.mu.Unlock()
	if h != nil {
		return h, path, nil
	}
	h, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, path, nil // gone; the rescan will tell where
		}
		return nil, path, err
	}
	info, err := h.Stat()
	if err == nil {
		if id, ok := idOf(info); ok && id != f.id {
			h.Close() // another file now has this path
			t.mu.Lock()
			f.gone = true
			t.mu.Unlock()
			t.requestRescan()
			return nil, path, nil
		}
	}
	t.mu.Lock()
	f.handle = h
	t.handles.pushBack(f)
	over := t.handles.n > t.cfg.MaxOpenFiles
	t.mu.Unlock()
	if over {
		t.closeLRU()
	}
	return h, path, nil
}

// closeLRU closes the least recently used idle handles until the open
// count is within the limit. It walks the open handles from the least
// recently used, not the files: a backfill of 20,000 files opened each
// past the limit, and scanning and sorting them all at every open made
// it quadratic (BenchmarkBackfillFiles: 1.7 ms of CPU per file).
func (t *Tailer) closeLRU() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for f := t.handles.head; f != nil && t.handles.n > t.cfg.MaxOpenFiles; {
		next := f.lruNext
		if !f.busy && !f.queued && !f.gone {
			t.closeHandle(f)
		}
		f = next
	}
}

// closeHandle closes the handle of f; t.mu must be held.
func (t *Tailer) closeHandle(f *file) {
	f.handle.Close()
	f.handle = nil
	t.handles.remove(f)
}

// closeIdle closes the handles of files unchanged for IdleTimeout.
// The decoder of such a file goes too: its parser's state (and the
// buffers a long line grew) is rebuilt by reading the file again from its
// start, publishing nothing already published, if it ever changes.
func (t *Tailer) closeIdle() {
	t.mu.Lock()
	defer t.mu.Unlock()
	cutoff := time.Now().Add(-t.cfg.IdleTimeout)
	for _, f := range t.files {
		if f.busy || f.queued || f.gone || !f.lastUse.Before(cutoff) {
			continue
		}
		if f.handle != nil {
			t.closeHandle(f)
		}
		if f.dec != nil {
			t.dropDecoder(f)
		}
	}
}

// dropDecoder lets the decoder of f go; the worker holding f, or t.mu
// with f held by none, must be held.
func (t *Tailer) dropDecoder(f *file) {
	f.dec = nil
	t.dropped.Add(1)
	if f.huge {
		f.huge = false
		t.freeDue.Store(true)
	}
}

func (t *Tailer) closeHandles() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for f := t.handles.head; f != nil; {
		next := f.lruNext
		t.closeHandle(f)
		f = next
	}
}

// watch adds a notification watch on dir. Failures (inotify limits) are
// logged once; rescans cover for them.
func (t *Tailer) watch(watcher *fsnotify.Watcher, dir string) {
	if watcher == nil {
		return
	}
	t.mu.Lock()
	done := t.watched[dir]
	t.watched[dir] = true
	t.mu.Unlock()
	if done {
		return // watched, or failed once: not tried again until it is gone
	}
	if err := watcher.Add(dir); err != nil && t.m.watchErrors.Add(1) == 1 {
		t.log.Warn("cannot watch directory, relying on rescans", "dir", dir, KeyError, err)
	}
}

// watchFiles returns how many files each watch followed at the last
// rescan.
func (t *Tailer) watchFiles() []WatchFiles {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]WatchFiles, len(t.watches.watches))
	for i, w := range t.watches.watches {
		out[i].Watch = w.given
		if i < len(t.watchCounts) {
			out[i].Files = t.watchCounts[i]
		}
	}
	return out
}

// watchedDirs is the number of directories the watcher holds, which also
// drops the watch of a directory deleted or moved.
func (t *Tailer) watchedDirs() int64 {
	if w := t.watcher.Load(); w != nil {
		return int64(len(w.WatchList()))
	}
	return 0
}

// unwatch forgets the watches of path and of the directories under it,
// which was removed or renamed, so that a directory made again at the
// same path is watched again. A removed directory's watch is gone
// already; a renamed one's would report its events under the old name
// (the rescan watches the new one).
func (t *Tailer) unwatch(watcher *fsnotify.Watcher, path string) {
	if watcher == nil {
		return
	}
	var gone []string
	t.mu.Lock()
	if t.watched[path] { // else a file, or a directory the globs never reached
		for dir := range t.watched {
			if dir == path || strings.HasPrefix(dir, path+string(filepath.Separator)) {
				delete(t.watched, dir)
				gone = append(gone, dir)
			}
		}
	}
	t.mu.Unlock()
	for _, dir := range gone {
		_ = watcher.Remove(dir) // not watched any more when it was deleted
	}
}

// openHandles returns the number of open file handles.
func (t *Tailer) openHandles() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.handles.n
}

// lagBytes is the number of bytes of followed files not yet acknowledged.
func (t *Tailer) lagBytes() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	var lag int64
	for _, f := range t.files {
		if f.meta || f.size <= 0 {
			continue
		}
		f.mu.Lock()
		if !f.skipped && f.size > f.acked.at {
			lag += f.size - f.acked.at
		}
		f.mu.Unlock()
	}
	return lag
}

// save writes the checkpoints of every known file.
// Nothing is written when no state changed since the last save: an idle
// tailer does no I/O.
func (t *Tailer) save() error {
	gen := t.changes.Load()
	if t.lastSaved != nil && gen == t.savedGen {
		return nil // nothing that a checkpoint holds changed
	}
	t.mu.Lock()
	states := make([]FileState, 0, len(t.files))
	for _, f := range t.files {
		if s, ok := f.state(); ok {
			states = append(states, s)
		}
	}
	t.mu.Unlock()
	if t.lastSaved != nil && t.unchanged(states) {
		t.savedGen = gen
		return nil
	}
	slices.SortFunc(states, func(a, b FileState) int { return strings.Compare(a.Path, b.Path) })
	if err := t.cp.Save(states); err != nil {
		return err
	}
	t.lastSaved, t.savedGen = states, gen
	clear(t.savedAt)
	if t.savedAt == nil {
		t.savedAt = make(map[fileID]int, len(states))
	}
	for i := range states {
		t.savedAt[fileID{Dev: states[i].Dev, Ino: states[i].Ino}] = i
	}
	return nil
}

// unchanged reports whether states, in any order, are the ones last
// saved. Idle hosts call save every interval with thousands of files:
// this costs a map lookup per file, where sorting would cost a dozen
// string comparisons.
func (t *Tailer) unchanged(states []FileState) bool {
	if len(states) != len(t.lastSaved) {
		return false
	}
	for i := range states {
		j, ok := t.savedAt[fileID{Dev: states[i].Dev, Ino: states[i].Ino}]
		if !ok || t.lastSaved[j] != states[i] {
			return false
		}
	}
	return true
}
