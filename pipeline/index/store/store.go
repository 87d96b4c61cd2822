package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sessionpipe/sessionpipe/pipeline/dirlock"
)

// Store is the persisted state of the indexer: a pebble database in a
// directory that one process owns, read and written as ordered keys and
// values. What the keys mean is its user's (pipeline/index).
//
// Why pebble: the state must outlive memory (tens of millions of API calls
// a year, each a fact that a resumed session may copy months later), be
// updated at the indexer's rate (hundreds of thousands of facts a second,
// mostly new keys, which bloom filters answer without a read) and be
// written atomically with the stream sequence it reflects. pebble is an
// embedded LSM store kept by CockroachDB: batched writes are cheap,
// reads go through a bounded block cache (memory does not grow with the
// history, as an mmap'ed B-tree's resident pages would), and a batch
// commits atomically with fsync.
type Store struct {
	dir   string // the state directory, locked
	path  string // pebble's directory in it
	cfg   Config
	log   *slog.Logger
	db    *pebble.DB
	fault *fault
	lock  *dirlock.Lock

	probeMu sync.Mutex
	probeIt *pebble.Iterator // Probe's, until the next commit
}

// Config configures [Open].
type Config struct {
	// Dir is the state directory; required. It is created if missing and
	// locked: a second process on it fails with dirlock.ErrHeld.
	Dir string

	// CacheBytes is the block cache's size. Default 32 MiB.
	CacheBytes int64

	// Logger receives the store's own messages at Debug (errors at
	// Error); nil discards them.
	Logger *slog.Logger

	// fs is the file system pebble uses; nil: the operating system's.
	// Tests inject failures through it.
	fs vfs.FS
}

// DefaultCacheBytes is the default block cache size.
const DefaultCacheBytes = 32 << 20

// subdir is pebble's directory in the state directory.
const subdir = "state"

// Open opens (or creates) the state in cfg.Dir.
//
// A state whose files are corrupt or missing (pebble refuses to open it,
// a table does not check out, a meta record does not read back) is moved
// aside, to <dir>/state.corrupt-<time>, logged at Error, and an empty
// state is opened in its place: the indexer rebuilds it from the stream.
// Any other failure (the directory held by another process, a disk that
// cannot be written) is returned; the error names the directory.
func Open(cfg Config) (*Store, error) {
	if cfg.Dir == "" {
		return nil, fmt.Errorf("%w: dir=", ErrInvalidConfig)
	}
	lock, err := dirlock.Acquire(cfg.Dir, "indexer state")
	if err != nil {
		return nil, err
	}
	s := &Store{dir: cfg.Dir, path: filepath.Join(cfg.Dir, subdir), cfg: cfg, log: discard(cfg.Logger), lock: lock}
	err = s.open()
	if errors.Is(err, ErrCorrupt) {
		err = s.discard(err)
	}
	if err != nil {
		lock.Release()
		return nil, err
	}
	return s, nil
}

// open opens pebble in s.path and checks that its tables and meta records
// read back.
func (s *Store) open() error {
	size := s.cfg.CacheBytes
	if size <= 0 {
		size = DefaultCacheBytes
	}
	cache := pebble.NewCache(size)
	defer cache.Unref()
	s.fault = &fault{dir: s.path, log: s.log.With(KeyComponent, "index.store")}
	l := pebbleLogger{log: s.log, fault: s.fault}
	opts := &pebble.Options{
		Cache:         cache,
		MemTableSize:  8 << 20,
		Logger:        l,
		EventListener: &pebble.EventListener{DataCorruption: l.dataCorruption},
		FS:            s.cfg.fs,
	}
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	db, err := openPebble(s.path, opts)
	if err != nil {
		return s.fault.set(brokenAsCorrupt(err))
	}
	s.db = db
	if err := s.probe(); err != nil {
		s.closeDB()
		return s.fault.set(err)
	}
	return nil
}

// filesBroken reports whether err, from opening pebble or reading its
// tables, says that the state's files are broken: corrupt, missing (a
// state directory that does not exist is created, not missing), or not
// what its manifest lists (a table of another size). Failures of the
// machine (permissions, a full disk, an I/O error: a system call's
// error) are not: moving the state aside would not help.
func filesBroken(err error) bool {
	switch {
	case pebble.IsCorruptionError(err), errors.Is(err, fs.ErrNotExist):
		return true
	case errors.As(err, new(*fs.PathError)), errors.As(err, new(*os.LinkError)), errors.As(err, new(*os.SyscallError)), errors.As(err, new(syscall.Errno)):
		return false
	}
	return true // pebble's own complaint about its files
}

// openPebble is pebble.Open, with a panic of pebble turned into an error
// (it panics on some files it cannot make sense of).
func openPebble(path string, opts *pebble.Options) (db *pebble.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: open: %v", ErrCorrupt, r)
		}
	}()
	return pebble.Open(path, opts)
}

// probe reads what a start reads: every table's properties (a missing or
// truncated table fails here) and the meta records.
func (s *Store) probe() error {
	if _, err := s.db.SSTables(pebble.WithProperties()); err != nil {
		return s.fault.check(brokenAsCorrupt(err))
	}
	err := s.Scan([]byte{metaPrefix}, func(_, _ []byte) bool { return true })
	if err == nil {
		err = s.fault.get()
	}
	return err
}

// discard moves a corrupt state aside and opens an empty one in its
// place.
func (s *Store) discard(cause error) error {
	aside := fmt.Sprintf("%s.corrupt-%s", s.path, time.Now().UTC().Format("20060102T150405.000000000Z"))
	if err := os.Rename(s.path, aside); err != nil {
		return fmt.Errorf("move corrupt indexer state aside: %w (%w)", err, cause)
	}
	s.log.Error("indexer state is corrupt: moved aside, starting an empty one (rebuilt from the stream)",
		KeyState, s.path, "moved_to", aside, KeyError, cause)
	return s.open()
}

// closeDB closes pebble, turning its panic into an error (a store that
// failed may hold what it cannot close cleanly).
func (s *Store) closeDB() (err error) {
	s.probeMu.Lock()
	defer s.probeMu.Unlock()
	s.closeProbeLocked()
	if s.db == nil {
		return nil
	}
	db := s.db
	s.db = nil
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("close: %v", r)
		}
	}()
	return db.Close()
}

// Close closes the database and gives the directory up. After a
// failure, it returns the failure.
func (s *Store) Close() error {
	err := s.closeDB()
	if ferr := s.fault.get(); ferr != nil {
		err = ferr
	} else if err != nil {
		err = &Error{Dir: s.path, Err: err}
	}
	if lerr := s.lock.Release(); err == nil {
		err = lerr
	}
	return err
}

// Dir returns the state directory.
func (s *Store) Dir() string { return s.dir }

// Err returns the store's failure (a *[Error]), nil if none.
func (s *Store) Err() error { return s.fault.get() }

// Get returns a copy of the value of key, nil if none (an empty value is
// a non-nil empty slice).
func (s *Store) Get(key []byte) ([]byte, error) {
	if err := s.fault.get(); err != nil {
		return nil, err
	}
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, s.fault.get()
	}
	if err != nil {
		return nil, s.fault.check(err)
	}
	return cloneValue(v), s.fault.check(closer.Close())
}

// cloneValue copies a value read: nil for none, a non-nil empty slice for
// an empty value.
func cloneValue(v []byte) []byte {
	if out := bytes.Clone(v); out != nil {
		return out
	}
	return []byte{}
}

// Probe is [Store.Get] for a key that is most likely absent: a new
// fact's, whose key is a hash, so that every table's range holds it. Get
// skips the bloom filters of the last level, where most of a state lives,
// and reads the data block the key would be in: the right trade for a key
// that is there, not for the new facts of a backfill, every one of which
// cost a block read (2 to 3 of a 1 GB run's 3 to 4 CPU-seconds of
// aggregation). Probe consults the last level's filters too, so that a
// miss reads no data block but for the filters' false positives. It
// seeks one iterator, kept from call to call until the next
// [Store.Commit] (which closes it, so that it pins no file a compaction
// made obsolete). Probe is safe for concurrent use.
func (s *Store) Probe(key []byte) ([]byte, error) {
	if err := s.fault.get(); err != nil {
		return nil, err
	}
	s.probeMu.Lock()
	defer s.probeMu.Unlock()
	if s.db == nil {
		return nil, ErrClosed
	}
	if s.probeIt == nil {
		it, err := s.db.NewIter(&pebble.IterOptions{UseL6Filters: true})
		if err != nil {
			return nil, s.fault.check(err)
		}
		s.probeIt = it
	}
	it := s.probeIt
	if !it.SeekPrefixGE(key) || !bytes.Equal(it.Key(), key) {
		if err := it.Error(); err != nil {
			s.closeProbeLocked()
			return nil, s.fault.check(err)
		}
		return nil, s.fault.get()
	}
	v, err := it.ValueAndErr()
	if err != nil {
		s.closeProbeLocked()
		return nil, s.fault.check(err)
	}
	return cloneValue(v), s.fault.get()
}

// closeProbe closes Probe's iterator, if open: the next Probe sees the
// state as it is then.
func (s *Store) closeProbe() {
	s.probeMu.Lock()
	defer s.probeMu.Unlock()
	s.closeProbeLocked()
}

func (s *Store) closeProbeLocked() {
	if s.probeIt != nil {
		s.probeIt.Close() // its error is a read's, reported by the read
		s.probeIt = nil
	}
}

// metaPrefix starts the keys of the meta records ([MetaKey]).
const metaPrefix = 'm'

// MetaKey is the key of the meta record name: 'm'+name.
func MetaKey(name string) []byte { return append([]byte{metaPrefix}, name...) }

// Meta returns the stored value of a meta name, nil if none.
func (s *Store) Meta(name string) ([]byte, error) { return s.Get(MetaKey(name)) }

// Iter iterates over the keys of a range, in order. Its slices are valid
// until it moves. Close it.
type Iter struct {
	it *pebble.Iterator
	s  *Store
}

// NewIter opens an iterator over [lower, upper) (nil: unbounded), unless
// the store failed.
func (s *Store) NewIter(lower, upper []byte) (*Iter, error) {
	if err := s.fault.get(); err != nil {
		return nil, err
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, s.fault.check(err)
	}
	return &Iter{it: it, s: s}, nil
}

// First moves to the first key; false if there is none.
func (i *Iter) First() bool { return i.it.First() }

// Last moves to the last key; false if there is none.
func (i *Iter) Last() bool { return i.it.Last() }

// Next moves to the next key; false past the last.
func (i *Iter) Next() bool { return i.it.Next() }

// Prev moves to the previous key; false before the first.
func (i *Iter) Prev() bool { return i.it.Prev() }

// Key is the current key.
func (i *Iter) Key() []byte { return i.it.Key() }

// Value is the current value, or the failure to read it.
func (i *Iter) Value() ([]byte, error) {
	v, err := i.it.ValueAndErr()
	return v, i.s.fault.check(err)
}

// Err returns the iterator's error (a move that returned false may have
// met one), or the store's failure; nil if none.
func (i *Iter) Err() error { return i.s.fault.check(i.it.Error()) }

// Close closes the iterator and returns its error, or the store's
// failure.
func (i *Iter) Close() error { return i.s.fault.check(i.it.Close()) }

// Scan calls fn for every key with prefix, in key order, until fn returns
// false. The slices are valid only during the call.
func (s *Store) Scan(prefix []byte, fn func(k, v []byte) bool) error {
	it, err := s.NewIter(prefix, PrefixEnd(prefix))
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.Value()
		if err != nil {
			it.Close()
			return err
		}
		if !fn(it.Key(), v) {
			break
		}
	}
	return it.Close()
}

// Batch collects writes that [Store.Commit] applies at once. Close it.
type Batch struct {
	b   *pebble.Batch
	err error // the first write the batch refused
}

// NewBatch starts a batch.
func (s *Store) NewBatch() *Batch { return &Batch{b: s.db.NewBatch()} }

// Set sets key to value (copied).
func (b *Batch) Set(key, value []byte) {
	if err := b.b.Set(key, value, nil); err != nil && b.err == nil {
		b.err = err
	}
}

// Delete deletes key.
func (b *Batch) Delete(key []byte) {
	if err := b.b.Delete(key, nil); err != nil && b.err == nil {
		b.err = err
	}
}

// Close releases the batch.
func (b *Batch) Close() error { return b.b.Close() }

// Commit commits b with fsync. A commit that pebble could not write to
// its log is the store's failure, even though pebble returns nil for it.
// A batch that refused a write is not committed: Commit returns that
// error.
func (s *Store) Commit(b *Batch) error {
	if err := s.fault.get(); err != nil {
		return err
	}
	if b.err != nil {
		return fmt.Errorf("batch: %w", b.err)
	}
	defer s.closeProbe() // Probe sees the commit
	return s.fault.check(b.b.Commit(pebble.Sync))
}

// Reset deletes every record: the state starts over (another stream, a
// corrupt record). A state whose files are corrupt is moved aside instead
// (to <dir>/state.corrupt-<time>) and an empty one opened in its place;
// one that failed otherwise (a full disk) returns its failure.
func (s *Store) Reset() error {
	if err := s.fault.get(); err != nil {
		if !s.fault.corrupt() {
			return err
		}
		s.closeDB()
		return s.discard(err)
	}
	defer s.closeProbe()
	return s.fault.check(s.db.DeleteRange([]byte{0}, []byte{0xff}, pebble.Sync))
}

// PrefixEnd returns the smallest key after every key with prefix p (nil:
// none, p is all 0xff).
func PrefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

func discard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

var _ io.Closer = (*Store)(nil)
