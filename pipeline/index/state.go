package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sessionpipe/sessionpipe/pipeline/dirlock"
)

// Store is the persisted state of an [Aggregator] (and of the indexer
// around it): a pebble database in a directory that one process owns.
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
//
// Keys: 'm'+name meta; 's'+num session; 'S'+id+format+host session
// number (id and format length-prefixed);
// 'f'+kind+16 bytes fact; 'F'+host+0+path file turn state; 'c'+num+kind+16
// bytes contested-fact index; 't'+last activity+num and 'g'+slug+0+num
// session indexes; 'r'+hour+cell rollups; 'k'+num+ts+kind+fact turn
// ledger.
type Store struct {
	dir   string // the state directory, locked
	path  string // pebble's directory in it
	cfg   StoreConfig
	log   *slog.Logger
	db    *pebble.DB
	fault *storeFault
	lock  *dirlock.Lock
}

// StoreConfig configures [OpenStore].
type StoreConfig struct {
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

// DefaultStoreCacheBytes is the default block cache size.
const DefaultStoreCacheBytes = 32 << 20

// storeSubdir is pebble's directory in the state directory.
const storeSubdir = "state"

// OpenStore opens (or creates) the state in cfg.Dir.
//
// A state whose files are corrupt or missing (pebble refuses to open it,
// a table does not check out, a meta record does not read back) is moved
// aside, to <dir>/state.corrupt-<time>, logged at Error, and an empty
// state is opened in its place: the indexer rebuilds it from the stream.
// Any other failure (the directory held by another process, a disk that
// cannot be written) is returned; the error names the directory.
func OpenStore(cfg StoreConfig) (*Store, error) {
	if cfg.Dir == "" {
		return nil, &ConfigError{Field: "dir", Value: cfg.Dir, Err: ErrInvalidConfig}
	}
	lock, err := dirlock.Acquire(cfg.Dir, "indexer state")
	if err != nil {
		return nil, err
	}
	s := &Store{dir: cfg.Dir, path: filepath.Join(cfg.Dir, storeSubdir), cfg: cfg, log: discard(cfg.Logger), lock: lock}
	err = s.open()
	if errors.Is(err, ErrCorruptState) {
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
		size = DefaultStoreCacheBytes
	}
	cache := pebble.NewCache(size)
	defer cache.Unref()
	s.fault = &storeFault{dir: s.path, log: s.log.With(KeyComponent, "index.store")}
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
			err = fmt.Errorf("%w: open: %v", ErrCorruptState, r)
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
	err := s.scan([]byte{'m'}, func(_, _ []byte) bool { return true })
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
		err = &StoreError{Dir: s.path, Err: err}
	}
	if lerr := s.lock.Release(); err == nil {
		err = lerr
	}
	return err
}

// Dir returns the state directory.
func (s *Store) Dir() string { return s.dir }

// Err returns the store's failure (a *[StoreError]), nil if none.
func (s *Store) Err() error { return s.fault.get() }

// get returns a copy of the value of key, nil if none.
func (s *Store) get(key []byte) ([]byte, error) {
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
	out := bytes.Clone(v)
	if out == nil {
		out = []byte{}
	}
	return out, s.fault.check(closer.Close())
}

// Meta returns the stored value of a meta name, nil if none.
func (s *Store) Meta(name string) ([]byte, error) { return s.get(metaKey(name)) }

// newIter opens an iterator over [lower, upper), unless the store failed.
// Close it with closeIter.
func (s *Store) newIter(lower, upper []byte) (*pebble.Iterator, error) {
	if err := s.fault.get(); err != nil {
		return nil, err
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	return it, s.fault.check(err)
}

// closeIter closes an iterator and returns its error, or the store's
// failure.
func (s *Store) closeIter(it *pebble.Iterator) error {
	return s.fault.check(it.Close())
}

// scan calls fn for every key with prefix, in key order, until fn returns
// false. The slices are valid only during the call.
func (s *Store) scan(prefix []byte, fn func(k, v []byte) bool) error {
	it, err := s.newIter(prefix, prefixEnd(prefix))
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			s.closeIter(it)
			return s.fault.check(err)
		}
		if !fn(it.Key(), v) {
			break
		}
	}
	return s.closeIter(it)
}

// commit commits b with fsync. A commit that pebble could not write to
// its log is the store's failure, even though pebble returns nil for it.
func (s *Store) commit(b *pebble.Batch) error {
	if err := s.fault.get(); err != nil {
		return err
	}
	return s.fault.check(b.Commit(pebble.Sync))
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
	return s.fault.check(s.db.DeleteRange([]byte{0}, []byte{0xff}, pebble.Sync))
}

// prefixEnd returns the smallest key after every key with prefix p.
func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

func metaKey(name string) []byte { return append([]byte{'m'}, name...) }

func sessionNumKey(num uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{'s'}, num)
}

func factStoreKey(kind factKind, k factKey) []byte {
	b := make([]byte, 0, 18)
	b = append(b, 'f', byte(kind))
	b = binary.BigEndian.AppendUint64(b, k.hi)
	return binary.BigEndian.AppendUint64(b, k.lo)
}

func fileStoreKey(k fileKey) []byte {
	b := append([]byte{'F'}, k.host...)
	b = append(b, 0)
	return append(b, k.path...)
}

func contestedKey(num uint64, kind factKind, k factKey) []byte {
	b := make([]byte, 0, 26)
	b = append(b, 'c')
	b = binary.BigEndian.AppendUint64(b, num)
	b = append(b, byte(kind))
	b = binary.BigEndian.AppendUint64(b, k.hi)
	return binary.BigEndian.AppendUint64(b, k.lo)
}

// Meta names written by the Aggregator.
const (
	metaSeed    = "seed"
	metaNextNum = "next_session"
	metaLayout  = "layout"
)

// StoreLayout is the version of the store's key layout and fact
// identities, recorded in a new state. A state of another layout is not
// read (its keys would be misread): [New] refuses it with a
// *[LayoutError] and the indexer rebuilds it from the stream.
//
//   - 1 (states without the record): sessions keyed by format and id.
//   - 2: sessions keyed by format, host and id (the 'S' keys); the facts
//     of m4dtimes and Fluux include the host; session-scope alerts are
//     keyed by [SessionRef.Key].
const StoreLayout = 2

// readLayout returns the layout of a state holding a seed: 1 when it
// records none.
func readLayout(st *Store) (int, error) {
	v, err := st.Meta(metaLayout)
	if err != nil || v == nil {
		return 1, err
	}
	n, err := strconv.Atoi(string(v))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%w: layout %q", ErrCorruptState, v)
	}
	return n, nil
}

// attach makes the Aggregator a write-back cache over st, reading its
// seed and session counter, or writing them (and the layout) for a new
// state. A state of another layout is refused with a *LayoutError.
func (a *Aggregator) attach(st *Store, seed uint64) error {
	a.store = st
	v, err := st.Meta(metaSeed)
	if err != nil {
		return err
	}
	if v == nil {
		// A new state: record the seed before anything is keyed by it.
		b := st.db.NewBatch()
		b.Set(metaKey(metaSeed), []byte(strconv.FormatUint(a.key.seed, 10)), nil)
		b.Set(metaKey(metaNextNum), []byte("1"), nil)
		b.Set(metaKey(metaLayout), []byte(strconv.Itoa(StoreLayout)), nil)
		return st.commit(b)
	}
	if layout, err := readLayout(st); err != nil {
		return err
	} else if layout != StoreLayout {
		return &LayoutError{Have: layout, Want: StoreLayout}
	}
	stored, err := strconv.ParseUint(string(v), 10, 64)
	if err != nil || stored == 0 {
		return fmt.Errorf("%w: seed %q", ErrCorruptState, v)
	}
	if seed != 0 && seed != stored {
		return &ConfigError{Field: "seed", Value: seed, Err: fmt.Errorf("%w: the state was made with seed %d", ErrInvalidConfig, stored)}
	}
	a.key = newKeyer(stored)
	v, err = st.Meta(metaNextNum)
	if err != nil {
		return err
	}
	if a.nextNum, err = strconv.ParseUint(string(v), 10, 64); err != nil || a.nextNum == 0 {
		return fmt.Errorf("%w: next session number %q", ErrCorruptState, v)
	}
	return nil
}

// fail records the first store failure; the Aggregator stops applying
// and Commit returns it.
func (a *Aggregator) fail(err error) {
	if a.err == nil {
		if !errors.As(err, new(*StoreError)) { // which names the directory
			err = fmt.Errorf("index state: %w", err)
		}
		a.err = err
	}
}

// loadSession reads the session of k, nil if it has none.
func (a *Aggregator) loadSession(k sessionKey) *session {
	v, err := a.store.get(sessionIDKey(k))
	if err != nil || v == nil {
		if err != nil {
			a.fail(err)
		}
		return nil
	}
	num, err := strconv.ParseUint(string(v), 10, 64)
	if err != nil {
		a.fail(fmt.Errorf("%w: session number %q", ErrCorruptState, v))
		return nil
	}
	return a.sessionByNum(num)
}

// sessionByNum returns session num from the cache or the store. A
// number that the store does not hold is a corrupt state.
func (a *Aggregator) sessionByNum(num uint64) *session {
	if s := a.byNum[num]; s != nil {
		return s
	}
	v, err := a.store.get(sessionNumKey(num))
	if err == nil && v == nil {
		err = fmt.Errorf("%w: session %d missing", ErrCorruptState, num)
	}
	if err != nil {
		a.fail(err)
		return nil
	}
	s, err := decodeSession(v)
	if err != nil {
		a.fail(err)
		return nil
	}
	a.cacheSession(s)
	return s
}

// loadFile reads the turn state of a file, nil if it has none.
func (a *Aggregator) loadFile(k fileKey) *fileState {
	v, err := a.store.get(fileStoreKey(k))
	if err != nil || v == nil {
		if err != nil {
			a.fail(err)
		}
		return nil
	}
	fs, err := decodeFile(v, k)
	if err != nil {
		a.fail(err)
		return nil
	}
	a.files[k] = fs
	return fs
}

// forgetStoredFile forgets the turn state of a file that is not cached.
func (a *Aggregator) forgetStoredFile(k fileKey) {
	if fs := a.loadFile(k); fs != nil {
		a.setRole(fs, "")
	}
}

// load reads the fact of key, nil if the store has none.
func (fs *facts[C]) load(key factKey) *fact[C] {
	a := fs.a
	v, err := a.store.get(factStoreKey(fs.kind, key))
	if err != nil || v == nil {
		if err != nil {
			a.fail(err)
		}
		return nil
	}
	winner, stored, err := decodeFact(v, fs.codec)
	if err != nil {
		a.fail(err)
		return nil
	}
	f := &fact[C]{key: key, winner: winner, cands: make([]cand[C], len(stored))}
	for i := range stored {
		s := a.sessionByNum(stored[i].num)
		if s == nil {
			return nil // a.err is set
		}
		s.refs++
		f.cands[i] = cand[C]{s: s, at: stored[i].at, total: stored[i].total, c: stored[i].c}
	}
	fs.byKey[key] = f
	if len(f.cands) > 1 {
		fs.contested[f] = struct{}{}
	}
	return f
}

// loadContested brings the stored facts contested by session num into
// the cache, so that resolveAll sees them.
func (fs *facts[C]) loadContested(num uint64) {
	prefix := binary.BigEndian.AppendUint64([]byte{'c'}, num)
	prefix = append(prefix, byte(fs.kind))
	var keys []factKey
	err := fs.a.store.scan(prefix, func(k, _ []byte) bool {
		if len(k) != len(prefix)+16 {
			return true
		}
		keys = append(keys, factKey{binary.BigEndian.Uint64(k[len(prefix):]), binary.BigEndian.Uint64(k[len(prefix)+8:])})
		return true
	})
	if err != nil {
		fs.a.fail(err)
		return
	}
	for _, k := range keys {
		fs.get(k)
	}
}

// write adds the dirty facts to b and marks them clean.
func (fs *facts[C]) write(b *pebble.Batch, buf []byte) []byte {
	for _, f := range fs.dirty {
		buf = encodeFact(buf[:0], f, fs.codec)
		b.Set(factStoreKey(fs.kind, f.key), buf, nil)
		if len(f.cands) > 1 {
			for i := range f.cands {
				b.Set(contestedKey(f.cands[i].s.num, fs.kind, f.key), nil, nil)
			}
		}
		f.dirty = false
	}
	clear(fs.dirty)
	fs.dirty = fs.dirty[:0]
	return buf
}

// evict drops clean facts last used before generation gen from the
// cache, until at most keep remain.
func (fs *facts[C]) evict(before uint64, keep int) {
	if len(fs.byKey) <= keep {
		return
	}
	for k, f := range fs.byKey {
		if len(fs.byKey) <= keep {
			return
		}
		if f.dirty || f.used >= before {
			continue
		}
		for i := range f.cands {
			f.cands[i].s.refs--
		}
		delete(fs.byKey, k)
		delete(fs.contested, f)
	}
}

// Commit writes every change since the last commit to the store, with
// the meta values given (name, value pairs: the stream sequence applied,
// say), in one atomic, synced batch. Before writing, it settles the facts
// whose winner may have moved because a session's place in the session
// order changed. Then it evicts from the cache what was not used lately,
// keeping about maxFacts facts.
//
// It returns the first failure of the store met since the last commit
// (the Aggregator stopped applying then: the caller must stop and resume
// from the last committed state) or of this commit.
func (a *Aggregator) Commit(meta map[string][]byte, maxFacts int) error {
	if a.store == nil {
		return errors.New("index: Commit on an Aggregator without a store")
	}
	if a.err != nil {
		return a.err
	}
	a.settle()
	if a.err != nil {
		return a.err
	}

	b := a.store.db.NewBatch()
	defer b.Close()
	var buf []byte
	buf = a.entries.write(b, buf)
	buf = a.responses.write(b, buf)
	buf = a.usage.write(b, buf)
	for _, s := range a.dirtyS {
		buf = encodeSession(buf[:0], s)
		b.Set(sessionNumKey(s.num), buf, nil)
		if !s.stored {
			b.Set(sessionIDKey(s.key()), []byte(strconv.FormatUint(s.num, 10)), nil)
		}
		if !s.stored || !s.indexedTS.Equal(s.lastTS) {
			if s.stored {
				b.Delete(recentKey(s.indexedTS, s.num), nil)
			}
			b.Set(recentKey(s.lastTS, s.num), nil, nil)
			s.indexedTS = s.lastTS
		}
		if s.slug.v != s.indexedSlug {
			if s.indexedSlug != "" {
				b.Delete(slugKey(s.indexedSlug, s.num), nil)
			}
			if s.slug.v != "" {
				b.Set(slugKey(s.slug.v, s.num), nil, nil)
			}
			s.indexedSlug = s.slug.v
		}
		s.dirty, s.reorder, s.stored = false, false, true
		if a.list != nil {
			a.list.put(s)
		}
	}
	clear(a.dirtyS)
	a.dirtyS = a.dirtyS[:0]
	for _, fs := range a.dirtyF {
		buf = encodeFile(buf[:0], fs)
		b.Set(fileStoreKey(fs.key), buf, nil)
		fs.dirty = false
	}
	clear(a.dirtyF)
	a.dirtyF = a.dirtyF[:0]
	buf = a.writeCells(b, buf)
	buf = a.writeLedger(b, buf)
	b.Set(metaKey(metaNextNum), []byte(strconv.FormatUint(a.nextNum, 10)), nil)
	for name, v := range meta {
		b.Set(metaKey(name), v, nil)
	}
	if err := a.store.commit(b); err != nil {
		a.fail(err)
		return a.err
	}
	for i := range a.cellsPending {
		a.cells.set(&a.cellsPending[i])
	}
	clear(a.cellsPending)
	a.cellsPending = a.cellsPending[:0]
	a.gen++
	a.evict(maxFacts)
	return nil
}

// settle brings in the stored contested facts of the sessions whose place
// in the session order changed, then re-resolves every cached contested
// fact: their winners are then those of the whole state.
func (a *Aggregator) settle() {
	if a.store != nil {
		for _, s := range a.dirtyS {
			if s.reorder && s.contested {
				a.entries.loadContested(s.num)
				a.responses.loadContested(s.num)
				a.usage.loadContested(s.num)
			}
		}
	}
	a.resolve()
}

// allSessions calls fn for every session: cached ones as cached (the
// freshest), the others decoded from the store.
func (a *Aggregator) allSessions(fn func(*session)) error {
	seen := make(map[uint64]bool, len(a.byNum))
	if a.store != nil {
		err := a.store.scan([]byte{'s'}, func(k, v []byte) bool {
			if len(k) != 9 {
				return true
			}
			num := binary.BigEndian.Uint64(k[1:])
			seen[num] = true
			if s := a.byNum[num]; s != nil {
				fn(s)
				return true
			}
			s, err := decodeSession(v)
			if err != nil {
				a.fail(err)
				return false
			}
			fn(s)
			return true
		})
		if err != nil {
			a.fail(err)
		}
		if a.err != nil {
			return a.err
		}
	}
	for num, s := range a.byNum {
		if !seen[num] {
			fn(s)
		}
	}
	return nil
}

// evict bounds the cache: facts not used in the last two commits go
// first when there are more than maxFacts; sessions and files go when
// clean, unused since the last commit and, for sessions, referenced by no
// cached fact.
func (a *Aggregator) evict(maxFacts int) {
	if maxFacts <= 0 {
		return
	}
	before := a.gen - min(a.gen, 2)
	per := maxFacts / 3
	a.entries.evict(before, per)
	a.responses.evict(before, per)
	a.usage.evict(before, per)
	if len(a.byNum) > maxFacts/8 {
		for num, s := range a.byNum {
			if s.refs == 0 && !s.dirty && s.used+1 < a.gen {
				delete(a.byNum, num)
				delete(a.sessions, s.key())
			}
		}
	}
	if len(a.files) > maxFacts/8 {
		for k, fs := range a.files {
			if !fs.dirty && fs.used+1 < a.gen {
				delete(a.files, k)
			}
		}
	}
	if len(a.rollups) > maxFacts/8 {
		a.evictCells()
	}
}

func discard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

var _ io.Closer = (*Store)(nil)
