package jsonl

import (
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The indexed cursor must be indistinguishable from the byte-by-byte one:
// the same results, offsets, spans, keys and errors after every call,
// whatever the input and whatever the caller asks. These tests drive two
// Scanners, one of each, with the same calls and compare everything.

// cursors runs f once for every string scanner available here (the
// assembly and the portable one), with two Scanners: one walking the
// structural index, one walking the bytes.
func cursors(t *testing.T, f func(t *testing.T, indexed, bytewise *Scanner)) {
	t.Helper()
	savedAVX2, savedIndex := hasAVX2, useIndex
	t.Cleanup(func() { hasAVX2, useIndex = savedAVX2, savedIndex })
	for _, avx2 := range []bool{true, false} {
		if avx2 && !savedAVX2 {
			continue
		}
		t.Run(fmt.Sprintf("avx2=%v", avx2), func(t *testing.T) {
			hasAVX2 = avx2
			var indexed, bytewise Scanner
			f(t, &indexed, &bytewise)
		})
	}
}

// reset resets s on data, walking the index or not.
func reset(s *Scanner, data []byte, index bool) {
	saved := useIndex
	useIndex = index
	s.Reset(data)
	useIndex = saved
}

// The calls a driver makes.
const (
	opMore = iota
	opFinish
	opPeek
	opEnterObject
	opEnterArray
	opNextField
	opNextElem
	opValue
	opSkip
	numOps
)

// step makes call op on s and describes its result and the state after
// it.
func step(s *Scanner, op int) string {
	var r string
	switch op {
	case opMore:
		r = fmt.Sprint("More ", s.More())
	case opFinish:
		r = fmt.Sprint("Finish ", s.Finish())
	case opPeek:
		r = fmt.Sprint("Peek ", s.Peek())
	case opEnterObject:
		r = fmt.Sprint("EnterObject ", s.EnterObject())
	case opEnterArray:
		r = fmt.Sprint("EnterArray ", s.EnterArray())
	case opNextField:
		ok := s.NextField()
		r = fmt.Sprint("NextField ", ok)
		if ok {
			r += fmt.Sprintf(" %q cap %d", s.Key(), cap(s.Key()))
		}
	case opNextElem:
		r = fmt.Sprint("NextElem ", s.NextElem())
	case opValue:
		v := s.Value()
		r = fmt.Sprintf("Value %v %s esc=%v plain=%v cap %d", v.Kind(), short(v.Raw()), v.Escaped(), v.Plain(), cap(v.Raw()))
	case opSkip:
		s.Skip()
		r = "Skip"
	}
	return fmt.Sprintf("%s | offset %d depth %d span %d cap %d err %v", r, s.Offset(), s.Depth(), len(s.Span()), cap(s.Span()), s.Err())
}

// short describes b: quoted if short, else by length and checksum.
func short(b []byte) string {
	if len(b) <= 64 {
		return fmt.Sprintf("%q", b)
	}
	h := crc32.ChecksumIEEE(b)
	return fmt.Sprintf("%q…(%d bytes, crc %08x)", b[:32], len(b), h)
}

// driver chooses calls: mostly the ones a parser would make where the
// cursor is, sometimes any call at all.
type driver struct {
	rng   *rand.Rand
	stack []bool // true for an array, as the driver saw them entered
}

func (d *driver) next() int {
	if d.rng.IntN(20) == 0 {
		return d.rng.IntN(numOps)
	}
	if len(d.stack) == 0 {
		return []int{opMore, opMore, opEnterObject, opEnterArray, opValue, opSkip, opFinish, opPeek}[d.rng.IntN(8)]
	}
	if d.stack[len(d.stack)-1] {
		return []int{opNextElem, opNextElem, opNextElem, opValue, opSkip, opEnterObject, opEnterArray, opPeek, opFinish}[d.rng.IntN(9)]
	}
	return []int{opNextField, opNextField, opNextField, opValue, opValue, opSkip, opEnterObject, opEnterArray, opPeek, opFinish}[d.rng.IntN(10)]
}

// saw updates the driver's view after a call and its result.
func (d *driver) saw(op int, s *Scanner) {
	for len(d.stack) > s.Depth() {
		d.stack = d.stack[:len(d.stack)-1]
	}
	switch {
	case op == opEnterObject && len(d.stack) < s.Depth():
		d.stack = append(d.stack, false)
	case op == opEnterArray && len(d.stack) < s.Depth():
		d.stack = append(d.stack, true)
	}
}

// compareWalk drives indexed and bytewise with the same calls on data and
// requires the same result after each.
func compareWalk(t testing.TB, indexed, bytewise *Scanner, data []byte, rng *rand.Rand, calls int) {
	t.Helper()
	reset(indexed, data, true)
	reset(bytewise, data, false)
	d := driver{rng: rng}
	var trace []string
	for range calls {
		op := d.next()
		want := step(bytewise, op)
		got := step(indexed, op)
		trace = append(trace, want)
		if got != want {
			require.Equal(t, want, got, "input %q\ncalls so far:\n%s", truncate(data), strings.Join(trace, "\n"))
		}
		d.saw(op, bytewise)
		if bytewise.Err() != nil && rng.IntN(4) == 0 {
			break
		}
	}
}

// compareFull walks the whole of data with toAny on both Scanners and
// compares the values and the errors.
func compareFull(t testing.TB, indexed, bytewise *Scanner, data []byte) {
	t.Helper()
	walk := func(s *Scanner, index bool) (out []any, tail string) {
		reset(s, data, index)
		for s.More() {
			out = append(out, toAny(s))
		}
		return out, fmt.Sprintf("offset %d err %v", s.Offset(), s.Err())
	}
	want, wantTail := walk(bytewise, false)
	got, gotTail := walk(indexed, true)
	require.Equal(t, wantTail, gotTail, "input %q", truncate(data))
	require.Equal(t, want, got, "input %q", truncate(data))
}

// equivInputs returns inputs that exercise the index: the corpus, the
// edge cases, and variations on them.
func equivInputs(tb testing.TB, rng *rand.Rand) [][]byte {
	var in [][]byte
	lines := corpusLines(tb)
	in = append(in, lines...)
	for _, tc := range edgeCases {
		in = append(in, []byte(tc.in))
	}
	// Damaged corpus lines: a byte changed, inserted or cut, at random
	// places, so that errors fall everywhere, in every kind of block.
	damage := []byte{'"', '\\', '{', '}', '[', ']', ':', ',', 'x', '0', '-', ' ', '\n', 0, 0x1f, 0x80, 'u', 't'}
	for range 1500 {
		l := lines[rng.IntN(len(lines))]
		if len(l) > 20000 {
			continue
		}
		b := append([]byte(nil), l...)
		i := rng.IntN(len(b) + 1)
		switch rng.IntN(3) {
		case 0:
			if i < len(b) {
				b[i] = damage[rng.IntN(len(damage))]
			}
		case 1:
			b = append(b[:i], append([]byte{damage[rng.IntN(len(damage))]}, b[i:]...)...)
		default:
			b = b[:i]
		}
		in = append(in, b)
	}
	// Structural bytes swapped for others: mismatched brackets, misplaced
	// colons and commas inside skipped values.
	structural := []byte("{}[]:,\"")
	for range 1500 {
		l := lines[rng.IntN(len(lines))]
		if len(l) > 20000 {
			continue
		}
		b := append([]byte(nil), l...)
		for range 1 + rng.IntN(2) {
			i := rng.IntN(len(b))
			for tries := 0; tries < 50 && strings.IndexByte("{}[]:,", b[i]) < 0; tries++ {
				i = rng.IntN(len(b))
			}
			b[i] = structural[rng.IntN(len(structural))]
		}
		in = append(in, b)
	}
	for _, s := range []string{`[1}`, `{"a":[1,2}}`, `{"a":{"b":1]]`, `{"a":[{"b":1}}]}`, `[[1],{"a":[2}]]`, `{"a":[]}}`, `{"a":{}]}`, `[{]`, `[{"a":1,]]`, `{"a":[1,]}`, `{"a":{"b":1,}}`, `{"a":[1:2]}`, `{"a":{"b" 1}}`, `{"a":{"b":1 "c":2}}`, `{"a":{1:2}}`, `{"a":["b":1]}`} {
		in = append(in, []byte(s))
	}
	// Random JSON-ish bytes, mostly invalid.
	for range 1500 {
		in = append(in, randomJSONish(rng, rng.IntN(300)))
	}
	// Valid documents built to stress the index: many windows, deep
	// nesting inside skipped values, every length around block edges.
	var many strings.Builder
	many.WriteString(`{"a":[`)
	for i := range 5000 {
		if i > 0 {
			many.WriteByte(',')
		}
		fmt.Fprintf(&many, `{"k%d":[%d,true,null,"s\"%d"]}`, i, i, i)
	}
	many.WriteString(`],"z":1}`)
	in = append(in, []byte(many.String()))
	for _, n := range []int{60, 62, 63, 64, 65, 70, 100} {
		in = append(in, []byte(strings.Repeat("[", n)+`{"a":1}`+strings.Repeat("]", n)))
		in = append(in, []byte(`{"x":`+strings.Repeat("[", n)+strings.Repeat("]", n)+`,"y":2}`))
	}
	for n := 0; n < 140; n++ {
		in = append(in, []byte(`{"k":"`+strings.Repeat("a", n)+`","n":12345678901,"t":true}`))
		in = append(in, []byte(`{"k":"`+strings.Repeat("é", n/2)+`\n","n":-1.5e-3}  `))
		in = append(in, []byte(strings.Repeat(" ", n)+`[1,2]`+strings.Repeat(" ", n%7)))
	}
	return in
}

func TestScanner_IndexedMatchesBytewise(t *testing.T) {
	cursors(t, func(t *testing.T, indexed, bytewise *Scanner) {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, data := range equivInputs(t, rng) {
			compareFull(t, indexed, bytewise, data)
			compareWalk(t, indexed, bytewise, data, rng, 60)
			compareWalk(t, indexed, bytewise, data, rng, 300)
		}
	})
}

// TestScanner_DepthInsideSkip checks the nesting limit where it is met
// inside a value skipped by the index, at every depth around it.
func TestScanner_DepthInsideSkip(t *testing.T) {
	cursors(t, func(t *testing.T, indexed, bytewise *Scanner) {
		for _, inner := range []int{1, 2, 10, 62, 63, 64} {
			for _, total := range []int{MaxDepth - 1, MaxDepth, MaxDepth + 1} {
				data := []byte(strings.Repeat("[", total) + strings.Repeat("]", total))
				outer := total - inner
				var results [2]string
				for i, s := range []*Scanner{bytewise, indexed} {
					reset(s, data, i == 1)
					for range outer {
						s.EnterArray()
						s.NextElem()
					}
					s.Skip()
					s.Finish()
					results[i] = fmt.Sprintf("depth %d offset %d err %v", s.Depth(), s.Offset(), s.Err())
				}
				require.Equal(t, results[0], results[1], "inner %d total %d", inner, total)
				if total > MaxDepth {
					require.Contains(t, results[0], "exceeded max depth")
				}
			}
		}
	})
}
