package index

import (
	"encoding/binary"
	"hash/maphash"
	"time"
)

// factKey identifies a fact: two independently seeded 64-bit hashes
// (hash/maphash) of its identity, so that the map holds no strings. Two
// distinct facts collide with a probability of about n²/2¹²⁹, nil for any
// real corpus; the seeds are drawn per Aggregator, so inputs cannot be
// chosen to collide without knowing them.
type factKey struct{ hi, lo uint64 }

// keyer builds a fact's identity in a reused buffer and hashes it.
type keyer struct {
	buf    []byte
	hi, lo maphash.Seed
}

func newKeyer() *keyer { return &keyer{hi: maphash.MakeSeed(), lo: maphash.MakeSeed()} }

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
	return factKey{maphash.Bytes(k.hi, k.buf), maphash.Bytes(k.lo, k.buf)}
}

// cand is one occurrence of a fact in a session, with what the fact adds
// to the session that wins it.
type cand[C any] struct {
	s     *session
	ts    int64 // Unix nanoseconds; 0 when unknown
	total int64 // usage total, for usage facts
	c     C
}

// fact is a countable thing and its occurrences; cands[winner] counts.
type fact[C any] struct {
	cands  []cand[C]
	winner int
}

// facts is one kind of fact.
type facts[C any] struct {
	byKey     map[factKey]*fact[C]
	contested map[*fact[C]]struct{}
	// largest makes the occurrence with the largest total win (usage).
	largest bool
	apply   func(s *session, c *C, sign int64)
}

func newFacts[C any](largest bool, apply func(*session, *C, int64)) *facts[C] {
	return &facts[C]{
		byKey:     make(map[factKey]*fact[C]),
		contested: make(map[*fact[C]]struct{}),
		largest:   largest,
		apply:     apply,
	}
}

// add records an occurrence of the fact key in session s.
func (fs *facts[C]) add(key factKey, s *session, ts time.Time, total int64, c C) {
	nc := cand[C]{s: s, ts: unixNano(ts), total: total, c: c}
	f := fs.byKey[key]
	if f == nil {
		fs.byKey[key] = &fact[C]{cands: []cand[C]{nc}}
		fs.apply(s, &c, 1)
		return
	}
	for i := range f.cands {
		if f.cands[i].s != s {
			continue
		}
		// Another occurrence in the same session: keep the better one.
		if !fs.better(&nc, &f.cands[i]) {
			return
		}
		if i == f.winner {
			fs.apply(s, &f.cands[i].c, -1)
			f.cands[i] = nc
			fs.apply(s, &nc.c, 1)
		} else {
			f.cands[i] = nc
		}
		fs.resolve(f)
		return
	}
	f.cands = append(f.cands, nc)
	fs.contested[f] = struct{}{}
	fs.resolve(f)
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
	if best == f.winner {
		return
	}
	old := &f.cands[f.winner]
	fs.apply(old.s, &old.c, -1)
	f.winner = best
	nw := &f.cands[best]
	fs.apply(nw.s, &nw.c, 1)
}

// resolveAll re-resolves the facts with occurrences in several sessions;
// the session order they are tied by may have changed.
func (fs *facts[C]) resolveAll() {
	for f := range fs.contested {
		fs.resolve(f)
	}
}

// better reports whether occurrence x beats y: for usage the larger
// total, then the earlier timestamp, then the session created first.
func (fs *facts[C]) better(x, y *cand[C]) bool {
	if fs.largest && x.total != y.total {
		return x.total > y.total
	}
	if x.ts != y.ts {
		if x.ts == 0 || y.ts == 0 {
			return y.ts == 0
		}
		return x.ts < y.ts
	}
	return createdBefore(x.s, y.s)
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
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
}

// usageContrib is what an API call adds.
type usageContrib struct {
	input, output, cacheRead, cacheWrite int64
	cost                                 float64
	model                                string
	unpriced                             bool
}
