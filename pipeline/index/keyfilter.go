package index

// keyFilter is a Bloom filter of fact keys: it answers "maybe" for every
// key added, and "no" for all but about one in a hundred of the others.
// A facts cache over a state that held no fact when it was opened adds
// each fact it lets go of (the only way a fact leaves the cache): a fact
// looked up that is neither cached nor maybe in the filter was never
// stored, and the store need not be asked. In a backfill nearly every
// fact looked up is new, and each such lookup of the store, even through
// its bloom filters, cost about 3 µs (see store.Store.Probe).
//
// It grows as keys are added (a new level twice as large as the last,
// 16 bits per key: 2 MB per million keys, one in a few thousand false
// positives per level), up to maxFilterKeys; past that the cache drops it
// and asks the store again, so that its memory stays bounded (8 MB for
// each of the three kinds of fact).
type keyFilter struct {
	levels []filterLevel
	n      int // keys added
}

type filterLevel struct {
	bits []uint64
	mask uint64 // bit index mask: len(bits)*64 - 1
	n    int    // keys added to this level
	cap  int    // keys it takes before the next level
}

const (
	// filterHashes is the number of bits set per key: about the best for
	// 16 bits per key.
	filterHashes = 7
	// minFilterKeys is the first level's capacity.
	minFilterKeys = 1 << 16
	// maxFilterKeys bounds the keys a filter takes (8 MB of bits).
	maxFilterKeys = 4 << 20
)

// add adds k. It reports false, adding nothing, once the filter holds
// maxFilterKeys keys: the caller must drop it.
func (f *keyFilter) add(k factKey) bool {
	if f.n >= maxFilterKeys {
		return false
	}
	if len(f.levels) == 0 || f.levels[len(f.levels)-1].n >= f.levels[len(f.levels)-1].cap {
		c := minFilterKeys
		if len(f.levels) > 0 {
			c = 2 * f.levels[len(f.levels)-1].cap
		}
		words := 1
		for words*64 < c*10 { // a power of two of at least 10 bits per key: 16
			words *= 2
		}
		f.levels = append(f.levels, filterLevel{bits: make([]uint64, words), mask: uint64(words*64 - 1), cap: c})
	}
	l := &f.levels[len(f.levels)-1]
	h, d := k.hi, k.lo|1 // a fact key is a hash already: double hashing
	for range filterHashes {
		b := h & l.mask
		l.bits[b>>6] |= 1 << (b & 63)
		h += d
	}
	l.n++
	f.n++
	return true
}

// mayContain reports whether k may have been added: always when it was.
func (f *keyFilter) mayContain(k factKey) bool {
	for i := range f.levels {
		l := &f.levels[i]
		h, d := k.hi, k.lo|1
		all := true
		for range filterHashes {
			b := h & l.mask
			if l.bits[b>>6]&(1<<(b&63)) == 0 {
				all = false
				break
			}
			h += d
		}
		if all {
			return true
		}
	}
	return false
}
