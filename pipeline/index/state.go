package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/sessionpipe/sessionpipe/pipeline/index/store"
)

// The Aggregator's records in its [store.Store].
//
// Keys: 'm'+name meta; 's'+num session; 'S'+id+format+host session
// number (id and format length-prefixed);
// 'f'+kind+16 bytes fact; 'F'+host+0+path file turn state; 'c'+num+kind+16
// bytes contested-fact index; 't'+last activity+num and 'g'+slug+0+num
// session indexes; 'r'+hour+cell rollups; 'k'+num+ts+kind+fact turn
// ledger.

func metaKey(name string) []byte { return store.MetaKey(name) }

func prefixEnd(p []byte) []byte { return store.PrefixEnd(p) }

func sessionNumKey(num uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{'s'}, num)
}

// factPrefix starts the store keys of the facts of kind.
func factPrefix(kind factKind) []byte { return []byte{'f', byte(kind)} }

func factStoreKey(kind factKind, k factKey) []byte {
	b := append(make([]byte, 0, 18), factPrefix(kind)...)
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
func readLayout(st *store.Store) (int, error) {
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
func (a *Aggregator) attach(st *store.Store, seed uint64) error {
	a.store = st
	for _, track := range []func(*store.Store) error{a.entries.trackGone, a.responses.trackGone, a.usage.trackGone} {
		if err := track(st); err != nil {
			return err
		}
	}
	v, err := st.Meta(metaSeed)
	if err != nil {
		return err
	}
	if v == nil {
		// A new state: record the seed before anything is keyed by it.
		b := st.NewBatch()
		b.Set(metaKey(metaSeed), []byte(strconv.FormatUint(a.key.seed, 10)))
		b.Set(metaKey(metaNextNum), []byte("1"))
		b.Set(metaKey(metaLayout), []byte(strconv.Itoa(StoreLayout)))
		return st.Commit(b)
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
		if !errors.As(err, new(*store.Error)) { // which names the directory
			err = fmt.Errorf("index state: %w", err)
		}
		a.err = err
	}
}

// loadSession reads the session of k, nil if it has none.
func (a *Aggregator) loadSession(k sessionKey) *session {
	v, err := a.store.Get(sessionIDKey(k))
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
	v, err := a.store.Get(sessionNumKey(num))
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
	v, err := a.store.Get(fileStoreKey(k))
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

// trackGone has fs keep the keys it lets go of (facts.gone) when st
// holds no fact of its kind (a new state, a rebuild, the first backfill):
// the facts looked up that the cache never let go of are then not looked
// up in the store.
func (fs *facts[C]) trackGone(st *store.Store) error {
	none := true
	err := st.Scan(factPrefix(fs.kind), func(_, _ []byte) bool { none = false; return false })
	if err == nil && none {
		fs.gone = new(keyFilter)
	}
	return err
}

// load reads the fact of key, nil if the store has none. Most facts
// looked up are new (a backfill's, a live session's next lines), so the
// store is probed for an absent key (store.Store.Probe).
func (fs *facts[C]) load(key factKey) *fact[C] {
	a := fs.a
	v, err := a.store.Probe(factStoreKey(fs.kind, key))
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
	f := newFact[C](key, len(stored))
	f.winner = winner
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
		for i := range f.cands {
			a.markContested(f.cands[i].s)
		}
	}
	return f
}

// loadContested brings the stored facts contested by session num into
// the cache, so that resolveAll sees them.
func (fs *facts[C]) loadContested(num uint64) {
	prefix := binary.BigEndian.AppendUint64([]byte{'c'}, num)
	prefix = append(prefix, byte(fs.kind))
	var keys []factKey
	err := fs.a.store.Scan(prefix, func(k, _ []byte) bool {
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
func (fs *facts[C]) write(b *store.Batch, buf []byte) []byte {
	for _, f := range fs.dirty {
		buf = encodeFact(buf[:0], f, fs.codec)
		b.Set(factStoreKey(fs.kind, f.key), buf)
		if len(f.cands) > 1 {
			for i := range f.cands {
				b.Set(contestedKey(f.cands[i].s.num, fs.kind, f.key), nil)
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
		if fs.gone != nil && !fs.gone.add(k) {
			fs.gone = nil // too many to keep: the store is asked again
		}
		for i := range f.cands {
			f.cands[i].s.refs--
		}
		delete(fs.byKey, k)
		delete(fs.contested, f)
		delete(fs.bySession, f)
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

	b := a.store.NewBatch()
	defer b.Close()
	var buf []byte
	buf = a.entries.write(b, buf)
	buf = a.responses.write(b, buf)
	buf = a.usage.write(b, buf)
	for _, s := range a.dirtyS {
		buf = encodeSession(buf[:0], s)
		b.Set(sessionNumKey(s.num), buf)
		if !s.stored {
			b.Set(sessionIDKey(s.key()), []byte(strconv.FormatUint(s.num, 10)))
		}
		if !s.stored || !s.indexedTS.Equal(s.lastTS) {
			if s.stored {
				b.Delete(recentKey(s.indexedTS, s.num))
			}
			b.Set(recentKey(s.lastTS, s.num), nil)
			s.indexedTS = s.lastTS
		}
		if s.slug.v != s.indexedSlug {
			if s.indexedSlug != "" {
				b.Delete(slugKey(s.indexedSlug, s.num))
			}
			if s.slug.v != "" {
				b.Set(slugKey(s.slug.v, s.num), nil)
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
		b.Set(fileStoreKey(fs.key), buf)
		fs.dirty = false
	}
	clear(a.dirtyF)
	a.dirtyF = a.dirtyF[:0]
	buf = a.writeCells(b, buf)
	buf = a.writeLedger(b, buf)
	b.Set(metaKey(metaNextNum), []byte(strconv.FormatUint(a.nextNum, 10)))
	for name, v := range meta {
		b.Set(metaKey(name), v)
	}
	if err := a.store.Commit(b); err != nil {
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
		err := a.store.Scan([]byte{'s'}, func(k, v []byte) bool {
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
