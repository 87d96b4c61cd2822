package index

import (
	"cmp"
	"encoding/binary"
	"math"
	"path/filepath"
	"time"

	"github.com/zeebo/xxh3"
)

// factKey identifies a fact: the 128-bit XXH3 hash of its identity, seeded
// per Aggregator ([Config.Seed]), so that the maps hold no strings. Keys
// are deterministic for a given seed, which is what lets a persisted state
// be resumed. Two distinct facts collide with a probability of about
// n²/2¹²⁹, nil for any real corpus. The seed is no secret key: a writer of
// transcripts who wanted to hide usage could delete lines more simply than
// craft collisions.
type factKey struct{ hi, lo uint64 }

// keyer builds a fact's identity in a reused buffer and hashes it.
type keyer struct {
	buf  []byte
	seed uint64
}

func newKeyer(seed uint64) *keyer { return &keyer{seed: seed} }

// start begins a new identity.
func (k *keyer) start() *keyer {
	k.buf = k.buf[:0]
	return k
}

// string adds s, length first: ("ab","c") and ("a","bc") differ.
func (k *keyer) string(s string) {
	k.buf = binary.AppendUvarint(k.buf, uint64(len(s)))
	k.buf = append(k.buf, s...)
}

func (k *keyer) int(n int64) { k.buf = binary.LittleEndian.AppendUint64(k.buf, uint64(n)) }

func (k *keyer) sum() factKey {
	h := xxh3.Hash128Seed(k.buf, k.seed)
	return factKey{h.Hi, h.Lo}
}

// fileHash names a file for the last tie-break by its last two path
// elements ("<session-dir>/<file>.jsonl"): the same file gets the same
// hash whether it was read by a relative path offline or an absolute one
// live, and the state keeps 8 bytes instead of a path.
func fileHash(path string) uint64 {
	if path == "" {
		return 0
	}
	dir, name := filepath.Split(path)
	return xxh3.HashString(filepath.Base(filepath.Clean(dir)) + "/" + name)
}

// origin is where an occurrence was read, for the tie-breaks that must
// not depend on the order entries arrive in: a replay in a subagent file
// (a sidechain) ranks after the main transcript, a record of a background
// session (Claude Code "sessionKind":"bg", which replays the chain it was
// handed off or forked from) after one of the session it copies, then the
// earlier timestamp wins, then the session created first; when even that ties
// (two verbatim copies of a file), the position decides: agent id, line,
// object, then the file.
type origin struct {
	ts         stamp // zero when unknown
	line       int64
	file       uint64 // fileHash of the path
	agent      string
	object     int32
	sidechain  bool
	background bool
}

// compareOrigin orders two occurrences of one fact by what the
// occurrences themselves say (the session order is applied between the
// timestamp and the position by the caller): a main-transcript occurrence
// before a sidechain replay, one not of a background session before one
// of a background session, a known timestamp before an unknown one, the
// earlier before the later. It returns 0 when they tie on all of these.
func compareOrigin(x, y *origin) int {
	if x.sidechain != y.sidechain {
		if y.sidechain {
			return -1
		}
		return 1
	}
	if x.background != y.background {
		if y.background {
			return -1
		}
		return 1
	}
	if x.ts != y.ts {
		switch {
		case !x.ts.known():
			return 1
		case !y.ts.known():
			return -1
		}
		return x.ts.compare(y.ts)
	}
	return 0
}

// comparePosition is the last tie-break: it never returns 0 for two
// occurrences at different places.
func comparePosition(x, y *origin) int {
	if c := cmp.Compare(x.agent, y.agent); c != 0 {
		return c
	}
	if c := cmp.Compare(x.line, y.line); c != 0 {
		return c
	}
	if c := cmp.Compare(x.object, y.object); c != 0 {
		return c
	}
	return cmp.Compare(x.file, y.file)
}

// cand is one occurrence of a fact in a session, with what the fact adds
// to the session that wins it.
type cand[C any] struct {
	s     *session
	at    origin
	total int64 // usage total, for usage facts
	c     C
}

// fact is a countable thing and its occurrences; cands[winner] counts.
// It keeps the best occurrence of each session it occurs in.
type fact[C any] struct {
	key    factKey
	cands  []cand[C]
	winner int
	cached
}

// factWithOne is a fact with the room for its first occurrence, in one
// allocation: almost every fact has one occurrence, and a large history
// holds a million facts, which each collection of a live indexer marks
// (two objects per fact instead were 40% of the live objects of a 1 GB
// backfill's `run`).
type factWithOne[C any] struct {
	f     fact[C]
	first [1]cand[C]
}

// newFact returns a fact of key with n zero occurrences; the first, when
// n is 1, in the fact's own allocation (a second one moves them out).
func newFact[C any](key factKey, n int) *fact[C] {
	if n != 1 {
		return &fact[C]{key: key, cands: make([]cand[C], n)}
	}
	one := &factWithOne[C]{f: fact[C]{key: key}}
	one.f.cands = one.first[:]
	return &one.f
}

// sessionIndexMin is the number of occurrences from which a fact finds a
// session's through a map rather than by looking at each. An entry is in
// a handful of sessions (a resumed session's copies, a fork); a tree
// holding one entry in thousands of files made each occurrence look at
// all the others: 20,000 copies of a 36-entry session took `sessionpipe
// sessions` 372 s.
const sessionIndexMin = 16

// sessionsOf returns f's map from session to occurrence, made at its
// first use; nil below sessionIndexMin occurrences. The maps live beside
// the facts, not in them: a fact is one of about a million in a large
// history, and all but a few have one occurrence or two.
func (fs *facts[C]) sessionsOf(f *fact[C]) map[*session]int32 {
	if len(f.cands) < sessionIndexMin {
		return nil
	}
	m := fs.bySession[f]
	if m == nil {
		m = make(map[*session]int32, 2*len(f.cands))
		for i := range f.cands {
			m[f.cands[i].s] = int32(i)
		}
		if fs.bySession == nil {
			fs.bySession = make(map[*fact[C]]map[*session]int32)
		}
		fs.bySession[f] = m
	}
	return m
}

// find returns the index of s's occurrence of f, -1 if it has none.
func (fs *facts[C]) find(f *fact[C], s *session) int {
	if m := fs.sessionsOf(f); m != nil {
		if i, ok := m[s]; ok {
			return int(i)
		}
		return -1
	}
	for i := range f.cands {
		if f.cands[i].s == s {
			return i
		}
	}
	return -1
}

// cached is what the write-back cache of a stored Aggregator keeps for
// each object: whether it changed since the last commit, and the commit
// generation it was last used in (for eviction).
type cached struct {
	dirty bool
	used  uint64
}

// factKind names a kind of fact in the store.
type factKind byte

const (
	kindEntry    factKind = 'e'
	kindResponse factKind = 'r'
	kindUsage    factKind = 'u'
)

// facts is one kind of fact, with its contribution codec for the store.
type facts[C any] struct {
	kind  factKind
	a     *Aggregator
	byKey map[factKey]*fact[C]
	// contested holds the facts with occurrences in several sessions:
	// their winner depends on the session order, which may change.
	contested map[*fact[C]]struct{}
	// bySession finds a session's occurrence of a fact of many (see
	// sessionsOf).
	bySession map[*fact[C]]map[*session]int32
	dirty     []*fact[C]
	// gone, when set, holds every key this cache let go of, and the
	// store held none of this kind when it was opened: a key neither
	// cached nor maybe in it is new, and is not looked up (see
	// keyFilter). nil: every key not cached is looked up.
	gone *keyFilter
	// largest makes the occurrence with the largest total win (usage).
	largest bool
	apply   func(s *session, c *C, at *origin, key factKey, sign int64)
	codec   contribCodec[C]
}

func newFacts[C any](a *Aggregator, kind factKind, largest bool, apply func(*session, *C, *origin, factKey, int64), codec contribCodec[C]) *facts[C] {
	return &facts[C]{
		kind:      kind,
		a:         a,
		byKey:     make(map[factKey]*fact[C]),
		contested: make(map[*fact[C]]struct{}),
		largest:   largest,
		apply:     apply,
		codec:     codec,
	}
}

// get returns the fact of key from the cache or the store, nil if none.
func (fs *facts[C]) get(key factKey) *fact[C] {
	f := fs.byKey[key]
	if f == nil && fs.a.store != nil && (fs.gone == nil || fs.gone.mayContain(key)) {
		f = fs.load(key)
	}
	if f != nil {
		f.used = fs.a.gen
	}
	return f
}

// add records an occurrence of the fact key in session s.
func (fs *facts[C]) add(key factKey, s *session, at origin, total int64, c C) {
	nc := cand[C]{s: s, at: at, total: total, c: c}
	f := fs.get(key)
	if f == nil {
		f = newFact[C](key, 1)
		f.cands[0] = nc
		f.used = fs.a.gen
		fs.byKey[key] = f
		s.refs++
		fs.touch(f)
		fs.applyTo(s, &c, &at, key, 1)
		return
	}
	if i := fs.find(f, s); i >= 0 {
		// Another occurrence in the same session: keep the better one.
		if !fs.better(&nc, &f.cands[i]) {
			return
		}
		fs.touch(f)
		if i == f.winner {
			fs.applyTo(s, &f.cands[i].c, &f.cands[i].at, key, -1)
			f.cands[i] = nc
			fs.applyTo(s, &nc.c, &nc.at, key, 1)
		} else {
			f.cands[i] = nc
			fs.challenge(f, i)
		}
		return
	}
	fs.touch(f)
	s.refs++
	f.cands = append(f.cands, nc)
	if m := fs.bySession[f]; m != nil {
		m[s] = int32(len(f.cands) - 1)
	}
	fs.contested[f] = struct{}{}
	if len(f.cands) == 2 {
		fs.a.markContested(f.cands[0].s)
	}
	fs.a.markContested(s)
	fs.challenge(f, len(f.cands)-1)
}

// challenge makes occurrence i the winner of f if it beats the winner.
// The winner beat every other occurrence, the order being total, so the
// one that changed is the only one to compare: a whole pass (resolve) at
// each occurrence made a fact of n occurrences cost n² comparisons. A
// change in the session order, which can reorder the others, is settled
// by resolveAll before anything is read.
func (fs *facts[C]) challenge(f *fact[C], i int) {
	if i != f.winner && fs.better(&f.cands[i], &f.cands[f.winner]) {
		fs.crown(f, i)
	}
}

// crown makes occurrence i the winner of f, moving the contribution.
func (fs *facts[C]) crown(f *fact[C], i int) {
	fs.touch(f)
	old := &f.cands[f.winner]
	fs.applyTo(old.s, &old.c, &old.at, f.key, -1)
	f.winner = i
	nw := &f.cands[i]
	fs.applyTo(nw.s, &nw.c, &nw.at, f.key, 1)
}

// applyTo adds (sign 1) or removes (sign -1) what c counts to session s,
// which then has to be written at the next commit.
func (fs *facts[C]) applyTo(s *session, c *C, at *origin, key factKey, sign int64) {
	fs.a.touchSession(s)
	fs.apply(s, c, at, key, sign)
}

// touch marks f changed since the last commit.
func (fs *facts[C]) touch(f *fact[C]) {
	if fs.a.store != nil && !f.dirty {
		f.dirty = true
		fs.dirty = append(fs.dirty, f)
	}
}

// resolve makes the best occurrence of f its winner, moving the
// contribution if the winner changes.
func (fs *facts[C]) resolve(f *fact[C]) {
	best := f.winner
	for i := range f.cands {
		if i != best && fs.better(&f.cands[i], &f.cands[best]) {
			best = i
		}
	}
	if best != f.winner {
		fs.crown(f, best)
	}
}

// resolveAll re-resolves the cached facts with occurrences in several
// sessions, the session order they are tied by having changed for the
// sessions moved: all of them again when all is set.
func (fs *facts[C]) resolveAll(moved []*session, all bool) {
	for f := range fs.contested {
		if all {
			fs.resolve(f)
		} else {
			fs.resettle(f, moved)
		}
	}
}

// resettle makes f's winner the best occurrence again after the sessions
// moved may have changed places in the session order. The winner beat the
// others before; the order between two sessions that did not move is the
// same, so the winner still beats those, and only the moved sessions'
// occurrences need comparing with it, unless the winner's own session
// moved. A whole pass at every commit made the live indexer's settling
// cost the sum of every contested fact's occurrences: 62% of `run`'s CPU
// over 5,000 copies of one session.
func (fs *facts[C]) resettle(f *fact[C], moved []*session) {
	if f.cands[f.winner].s.reorder {
		fs.resolve(f)
		return
	}
	if m := fs.bySession[f]; m != nil && len(moved) < len(f.cands) {
		for _, s := range moved {
			if i, ok := m[s]; ok {
				fs.challenge(f, int(i))
			}
		}
		return
	}
	for i := range f.cands {
		if f.cands[i].s.reorder {
			fs.challenge(f, i)
		}
	}
}

// better reports whether occurrence x beats y. The order is total and
// depends only on the occurrences and their sessions, never on which
// arrived first: for usage the larger total (a streamed response grows);
// then [compareOrigin] (main transcript before a sidechain replay, the
// earlier timestamp); then the session created first; then the position.
func (fs *facts[C]) better(x, y *cand[C]) bool {
	if fs.largest && x.total != y.total {
		return x.total > y.total
	}
	if c := compareOrigin(&x.at, &y.at); c != 0 {
		return c < 0
	}
	if x.s != y.s {
		return createdBefore(x.s, y.s)
	}
	return comparePosition(&x.at, &y.at) < 0
}

// stamp is a timestamp as the aggregates keep it: seconds and
// nanoseconds since 0001-01-01T00:00:00Z (time.Time's own origin), so
// that every time a timestamp can name orders and round-trips, 1970 and
// 9999 included (Unix nanoseconds name 1677-09-21 to 2262-04-11 only,
// and 0 was taken for "none"). The zero stamp is no timestamp, as the
// zero time.Time is.
type stamp struct {
	sec  int64
	nsec int32
}

// unixToInternal is the number of seconds from 0001-01-01T00:00:00Z to
// the Unix epoch.
const unixToInternal int64 = 62135596800

// stampOf returns the stamp of t; the zero time gives the zero stamp.
func stampOf(t time.Time) stamp {
	if t.IsZero() {
		return stamp{}
	}
	return stamp{sec: t.Unix() + unixToInternal, nsec: int32(t.Nanosecond())}
}

// known reports whether s is a timestamp.
func (s stamp) known() bool { return s != stamp{} }

// time returns s as a UTC time; the zero time when s is not known.
func (s stamp) time() time.Time {
	if !s.known() {
		return time.Time{}
	}
	return time.Unix(s.sec-unixToInternal, int64(s.nsec)).UTC()
}

// unix returns s in Unix seconds (rounded down).
func (s stamp) unix() int64 { return s.sec - unixToInternal }

// compare orders two stamps by time.
func (s stamp) compare(o stamp) int {
	if c := cmp.Compare(s.sec, o.sec); c != 0 {
		return c
	}
	return cmp.Compare(s.nsec, o.nsec)
}

// nano returns s in Unix nanoseconds computed as time.Time.UnixNano does
// (wrapping outside 1677–2262), 0 when s is not known. It is what fact
// keys are hashed with, now as before stamps: a state written before
// keeps its keys. Never compare or store it as a time.
func (s stamp) nano() int64 {
	if !s.known() {
		return 0
	}
	return s.unix()*1e9 + int64(s.nsec)
}

// Bounds of the times Unix nanoseconds name.
var (
	minNanoTime = time.Unix(0, math.MinInt64)
	maxNanoTime = time.Unix(0, math.MaxInt64)
)

// sortNano returns t in Unix nanoseconds for orders kept as one int64
// (listing keys, cursors, the last-activity index): saturated outside
// 1677–2262 instead of wrapping, 0 for the zero time. Times beyond the
// bounds tie, and their sessions are ordered by number.
func sortNano(t time.Time) int64 {
	switch {
	case t.IsZero():
		return 0
	case t.Before(minNanoTime):
		return math.MinInt64
	case t.After(maxNanoTime):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// entryContrib is what a counted entry adds: a real user input (and
// whether it starts a turn), tool calls, tool errors, a compaction.
type entryContrib struct {
	toolCalls  int32
	toolErrors int32
	user       bool
	turn       bool
	compaction bool
	// prompt is the head of a turn's prompt, kept for the turn ledger
	// (Config.Turns) only.
	prompt string
}

// usageContrib is what an API call adds.
type usageContrib struct {
	input, output, cacheRead, cacheWrite int64
	cost                                 int64 // nano-dollars
	model                                string
	// project is the call's working directory: its entry's, else its
	// session's when the call was first seen. It is fixed with the
	// occurrence so that removing it takes it from the rollup cell it
	// was added to.
	project  string
	unpriced bool
	// labels are the labels of the call's entry, fixed with the
	// occurrence for the same reason.
	labels labelSet
	// source is where the call's price came from (price.Source*), "" when
	// unpriced or priced by a Pricer that does not tell.
	source string
}
