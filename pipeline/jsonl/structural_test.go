package jsonl

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// indexResult is what indexing a whole input gives: the blocks with
// entries up to the first block that fails, and whether one failed.
type indexResult struct {
	blocks []indexedBlock
	bad    bool
}

// modelIndex indexes data a byte at a time with an explicit state machine,
// independently of the mask arithmetic of the indexers. The data is
// padded with spaces to whole blocks, as Scanner.refill does.
func modelIndex(data []byte) indexResult {
	padded := append([]byte(nil), data...)
	for len(padded)%blockBytes != 0 {
		padded = append(padded, ' ')
	}
	var (
		res        indexResult
		escapeNext bool // the previous byte is a backslash that escapes
		inString   bool
		prevScalar bool
		attn       bool // the open string holds a backslash or a byte above 0x7F
		digits     = map[int]bool{}
	)
	for start := 0; start < len(padded); start += blockBytes {
		var b indexedBlock
		bad := false
		for i := start; i < start+blockBytes; i++ {
			c := padded[i]
			bit := uint64(1) << (i - start)
			escaped := escapeNext
			escapeNext = !escaped && c == '\\'
			quote := c == '"' && !escaped
			if quote {
				inString = !inString
				if inString {
					attn = false
				}
			}
			if inString && (c == '\\' || c >= 0x80) {
				attn = true
			}
			if inString && c < 0x20 {
				bad = true
			}
			if escaped {
				switch c {
				case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				case 'u':
					for k := 1; k <= 4; k++ {
						digits[i+k] = true
					}
				default:
					bad = true
				}
			}
			if digits[i] && !isHex(c) {
				bad = true
			}
			op := strings.IndexByte("{}[]:,\x0c\x1a", c) >= 0
			ws := c == ' ' || c == '\t' || c == '\n' || c == '\r'
			scalar := !op && !ws && !quote
			if quote || (op || scalar && !prevScalar) && !inString {
				b.entries |= bit
			}
			if quote && !inString && attn {
				b.attn |= bit
			}
			prevScalar = scalar
		}
		if bad {
			res.bad = true
			return res
		}
		if b.entries != 0 {
			b.pos = start
			res.blocks = append(res.blocks, b)
		}
	}
	return res
}

// runIndexer indexes data as a Scanner does, with indexer, in windows of
// room blocks.
func runIndexer(data []byte, room int, indexer indexerFunc) indexResult {
	var res indexResult
	var st indexState
	out := make([]indexedBlock, room)
	pos := 0
	for pos < len(data) {
		rest := data[pos:]
		var tail *[blockBytes]byte
		if r := len(rest) % blockBytes; r != 0 {
			var t [blockBytes]byte
			copy(t[copy(t[:], rest[len(rest)-r:]):], spaces)
			tail = &t
		}
		read, wrote, bad := indexer(rest, tail, pos, &st, out)
		res.blocks = append(res.blocks, out[:wrote]...)
		if bad {
			res.bad = true
			return res
		}
		pos += min(read, len(rest))
	}
	return res
}

// indexerFunc is the signature of the indexers.
type indexerFunc func(p []byte, tail *[blockBytes]byte, base int, st *indexState, out []indexedBlock) (read, wrote int, bad bool)

// indexers returns the indexers that can run here, by name.
func indexers() map[string]indexerFunc {
	m := map[string]indexerFunc{"generic": indexBlocksGeneric}
	if hasAVX2 {
		m["avx2"] = indexer
	}
	return m
}

// randomJSONish returns n bytes biased towards what makes the indexer
// work: quotes, backslashes and escapes, control and high bytes,
// structural bytes, digits, literals and \u escapes.
func randomJSONish(rng *rand.Rand, n int) []byte {
	pieces := []string{`"`, `"`, `\`, `\\`, `\"`, `\n`, `\u00e9`, `\uD83D`, `\u12G4`, `\u`, "\x01", "\t", "\n", " ",
		"{", "}", "[", "]", ":", ",", "0", "-1.5e3", "true", "null", "x", "é", "\xff", "\x0c", "\x1a", "\x7f",
		"abcdefgh", "ijklmnopqrstuvwxyz0123456789", `{"k":"v"}`, `[1,2,"s"]`}
	var b []byte
	for len(b) < n {
		b = append(b, pieces[rng.IntN(len(pieces))]...)
	}
	return b[:n]
}

func TestIndexer_Model(t *testing.T) {
	require.Equal(t, strings.Repeat(" ", blockBytes), spaces)
	rng := rand.New(rand.NewPCG(1, 2))
	var inputs [][]byte
	for _, l := range corpusLines(t) {
		if len(l) < 1<<16 {
			inputs = append(inputs, l)
		}
	}
	for _, tc := range edgeCases {
		inputs = append(inputs, []byte(tc.in))
	}
	for range 3000 {
		inputs = append(inputs, randomJSONish(rng, rng.IntN(400)))
	}
	for name, ix := range indexers() {
		t.Run(name, func(t *testing.T) {
			for i, in := range inputs {
				want := modelIndex(in)
				for _, room := range []int{1, 2, window} {
					got := runIndexer(in, room, ix)
					if !equalIndex(want, got) {
						require.Equal(t, fmtIndex(want), fmtIndex(got), "input %d (room %d): %q", i, room, truncate(in))
					}
				}
			}
		})
	}
}

func equalIndex(a, b indexResult) bool {
	if a.bad != b.bad || len(a.blocks) != len(b.blocks) {
		return false
	}
	for i := range a.blocks {
		if a.blocks[i] != b.blocks[i] {
			return false
		}
	}
	return true
}

func fmtIndex(r indexResult) string {
	var b strings.Builder
	for _, blk := range r.blocks {
		fmt.Fprintf(&b, "@%d entries %064b attn %064b\n", blk.pos, blk.entries, blk.attn)
	}
	fmt.Fprintf(&b, "bad %v", r.bad)
	return b.String()
}

// TestScanner_IndexNoHandover checks that the indexed cursor walks valid
// lines to their end without handing over to the byte-by-byte cursor: a
// handover there would be correct but slow, and would hide a bug.
func TestScanner_IndexNoHandover(t *testing.T) {
	if !useIndex {
		t.Skip("no structural index on this platform")
	}
	var s Scanner
	check := func(line []byte) {
		t.Helper()
		s.Reset(line)
		n := 0
		for s.More() {
			toAny(&s)
			require.True(t, s.Finish())
			require.True(t, s.fast, "handed over after %s in %q", s.Span(), truncate(line))
			n++
		}
		require.NoError(t, s.Err())
	}
	for _, line := range corpusLines(t) {
		check(line)
	}
	for _, tc := range edgeCases {
		if _, err := decodeAll([]byte(tc.in)); err == nil && strings.TrimSpace(tc.in) != "" {
			check([]byte(tc.in))
		}
	}
	check([]byte(`[0,-0,1.5e+3,12345678901234567890,-1.0E-7,true,false,null,"x",{},[]]`))
	check([]byte("{\"a\" : [ 1 ,\t2 ] ,\n\"b\" :\r\"x\" } "))
}

func TestDigitsEnd(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", 0}, {"1", 1}, {"12345678", 8}, {"123456789", 9}, {"1234567,", 7}, {"12345678,9", 8},
		{"0123/", 4}, {"0123:", 4}, {"9\xb9", 1}, {"12\x80", 2}, {"1234567890123456x", 16}, {",", 0},
	} {
		got := digitsEnd([]byte(tc.in), 0)
		require.Equal(t, tc.want, got, "digitsEnd(%q)", tc.in)
		// Every start offset, against a byte loop.
		for i := range len(tc.in) {
			j := i
			for j < len(tc.in) && tc.in[j]-'0' < 10 {
				j++
			}
			require.Equal(t, j, digitsEnd([]byte(tc.in), i), "digitsEnd(%q, %d)", tc.in, i)
		}
	}
}
