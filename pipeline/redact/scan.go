package redact

import (
	"encoding/binary"
	"math/bits"
	"slices"
)

// The prefilter: two bytes of every anchor, lit[off:off+2] (all their
// cases when the anchor folds case), are set in a 64-Kbit table. With AVX2
// (pair_amd64.s) 32 positions at a time go through four nibble tables that
// let every such pair through, and a few others, which the table weeds
// out; elsewhere the table is looked up at each position. Only where a pair
// is set are the anchors that hold it compared, and only where an anchor is
// found does its matcher run.

// pairBits has bit (b0<<8|b1) set when some anchor holds the pair b0 b1 at
// its off; pairSlot maps such a pair to the list in slots of the indexes
// into anchors of the anchors that hold it, in order (slot 0: none), so
// that the scan loop does not hash.
var pairBits, pairSlot, slots = buildPairs()

// pairTables holds, for the first and the second byte of a pair, the
// buckets that allow each low and each high nibble (lo0, hi0, lo1, hi1),
// each 16-byte table twice for the two lanes of an AVX2 register.
type pairTables [4][32]byte

// pairNibbles spreads the pairs of pairBits over eight buckets: a pair
// passes when its four nibbles share a bucket. Pairs that were never put
// in pass too (a bucket allows every combination of the nibbles it
// holds), and are weeded out by pairBits.
var pairNibbles = buildNibbles(&pairBits)

func buildNibbles(pairs *[1024]uint64) (t pairTables) {
	var sets [8][4]uint16 // per bucket: nibble sets of lo0, hi0, lo1, hi1
	cost := func(s [4]uint16) int {
		n := 1
		for _, x := range s {
			n *= bits.OnesCount16(x)
		}
		return n
	}
	for p := range 65536 {
		if pairs[p>>6]&(1<<(p&63)) == 0 {
			continue
		}
		nib := [4]uint16{1 << (p >> 8 & 15), 1 << (p >> 12), 1 << (p & 15), 1 << (p >> 4 & 15)}
		best, bestCost := 0, -1
		for k := range sets {
			var s [4]uint16
			for i := range s {
				s[i] = sets[k][i] | nib[i]
			}
			if c := cost(s) - cost(sets[k]); bestCost < 0 || c < bestCost {
				best, bestCost = k, c
			}
		}
		for i := range nib {
			sets[best][i] |= nib[i]
		}
	}
	for k, s := range sets {
		for i, set := range s {
			for n := range 16 {
				if set&(1<<n) != 0 {
					t[i][n] |= 1 << k
					t[i][n+16] |= 1 << k
				}
			}
		}
	}
	return t
}

func buildPairs() (set [1024]uint64, slot [65536]uint8, lists [][]uint8) {
	lists = [][]uint8{nil}
	for i := range anchors {
		a := &anchors[i]
		for _, x := range variants(a.lit[a.off], a.fold) {
			for _, y := range variants(a.lit[a.off+1], a.fold) {
				p := uint16(x)<<8 | uint16(y)
				set[p>>6] |= 1 << (p & 63)
				if slot[p] == 0 {
					slot[p] = uint8(len(lists))
					lists = append(lists, nil)
				}
				lists[slot[p]] = append(lists[slot[p]], uint8(i))
			}
		}
	}
	return set, slot, lists
}

func variants(c byte, fold bool) []byte {
	if fold && 'a' <= c && c <= 'z' {
		return []byte{c, c - 'a' + 'A'}
	}
	return []byte{c}
}

// generic marks the kinds found by their context rather than their shape.
var generic = [NumKinds]bool{Password: true, Secret: true, URLPassword: true, BearerToken: true}

// span is a part of the input to replace by the marker of kind.
type span struct {
	start, end int
	kind       Kind
}

// find appends to out the secrets in b, in order and without overlap, and
// reports whether b holds any anchor at all (whether or not a secret
// followed it).
//
// A secret found by its context (a password, a URL's password, a bearer
// token) is searched for a known shape, which names it better: an OpenAI
// key assigned to OPENAI_API_KEY is an openai-key.
func (r *Redactor) find(b []byte, out []span) ([]span, bool) {
	n := len(out)
	out, anchored := r.scan(b, out)
	for i := n; i < len(out); i++ {
		s := out[i]
		if !generic[s.kind] {
			continue
		}
		var buf [4]span
		inner, _ := r.scan(b[s.start:s.end], buf[:0])
		switch len(inner) {
		case 0:
			continue
		case 1:
			// The whole value goes, under the shape's name: leaving a part
			// of it beside the marker would leave a value that a second
			// pass takes whole.
			out[i].kind = inner[0].kind
			continue
		}
		for j := range inner {
			inner[j].start += s.start
			inner[j].end += s.start
		}
		out = slices.Replace(out, i, i+1, inner...)
		i += len(inner) - 1
	}
	return out, anchored
}

// anchoredEscaped reports whether the escaped content b of a JSON string
// holds an anchor that may lead to a secret once b is unescaped: a
// literal, and for a key's name one that names a secret and is followed
// by what may unescape to an assignment operator.
func (r *Redactor) anchoredEscaped(b []byte) bool {
	for i := nextPair(b, 0); i >= 0; i = nextPair(b, i+1) {
		p := uint16(b[i])<<8 | uint16(b[i+1])
		for _, ai := range slots[pairSlot[p]] {
			a := &anchors[ai]
			if j := i - a.off; a.at(b, j) && (a.named == nil || a.named(b, j) && mayAssign(b, j)) {
				return true
			}
		}
	}
	return false
}

// mayAssign reports whether the key around the anchor at, in escaped JSON
// string content, may be followed by an assignment once unescaped:
// between the key and "=" or ":" only what unescapes to the quotes,
// backslashes and blanks [assignment] skips (\", \\, ', `, a space, \t).
// A key run too long to tell is taken as possible.
func mayAssign(b []byte, at int) bool {
	ks, ke := keyAround(b, at)
	if ks < 0 {
		return true
	}
	for p := ke; p < len(b) && p < ke+64; p++ {
		switch b[p] {
		case '=', ':':
			return true
		case '\\', '"', '\'', '`', ' ', '\t':
		case 't':
			if b[p-1] != '\\' {
				return false
			}
		default:
			return false
		}
	}
	return false
}

// scan is find without the naming of generic secrets.
func (r *Redactor) scan(b []byte, out []span) ([]span, bool) {
	last := 0
	anchored := false
	for i := nextPair(b, 0); i >= 0; i = nextPair(b, i+1) {
		p := uint16(b[i])<<8 | uint16(b[i+1])
		for _, ai := range slots[pairSlot[p]] {
			a := &anchors[ai]
			j := i - a.off
			if j < last || !a.at(b, j) || a.named != nil && !a.named(b, j) {
				continue
			}
			anchored = true
			s, e, k, ok := a.m(b, j)
			if !ok || s < last || r.off[k] {
				continue
			}
			out = append(out, span{start: s, end: e, kind: k})
			last = e
			break
		}
	}
	return out, anchored
}

// nextPairPortable is nextPair in Go: four positions a step, each looked
// up in pairBits.
func nextPairPortable(b []byte, from int) int {
	if from < 0 {
		return -1
	}
	n := len(b) - 1
	j := from
	for ; j+4 <= n; j += 4 {
		x := binary.BigEndian.Uint32(b[j:])
		y := uint16(x >> 8)
		z := uint16(x)
		w := uint16(x >> 16)
		if pairBits[w>>6]&(1<<(w&63)) != 0 {
			return j
		}
		if pairBits[y>>6]&(1<<(y&63)) != 0 {
			return j + 1
		}
		if pairBits[z>>6]&(1<<(z&63)) != 0 {
			return j + 2
		}
		v := z<<8 | uint16(b[j+4])
		if pairBits[v>>6]&(1<<(v&63)) != 0 {
			return j + 3
		}
	}
	for ; j < n; j++ {
		p := uint16(b[j])<<8 | uint16(b[j+1])
		if pairBits[p>>6]&(1<<(p&63)) != 0 {
			return j
		}
	}
	return -1
}

// replace returns b with each span replaced by its marker, counting them in
// st.
func replace(dst, b []byte, spans []span, st *Stats) []byte {
	at := 0
	for _, s := range spans {
		dst = append(dst, b[at:s.start]...)
		dst = append(dst, markers[s.kind]...)
		st.found(s.kind)
		at = s.end
	}
	return append(dst, b[at:]...)
}

// grown is the capacity for the redacted copy of n bytes with spans.
func grown(n int, spans []span) int {
	for _, s := range spans {
		n += len(markers[s.kind]) - (s.end - s.start)
	}
	return max(n, 0)
}
