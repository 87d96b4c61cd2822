package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// toAny reads the value due next into the shape encoding/json produces
// with UseNumber: map[string]any, []any, string, json.Number, bool, nil.
func toAny(s *Scanner) any {
	switch s.Peek() {
	case Object:
		m := map[string]any{}
		s.EnterObject()
		for s.NextField() {
			k := string(s.Key())
			m[k] = toAny(s)
		}
		return m
	case Array:
		a := []any{}
		s.EnterArray()
		for s.NextElem() {
			a = append(a, toAny(s))
		}
		return a
	}
	v := s.Value()
	switch v.Kind() {
	case String:
		return v.String()
	case Number:
		return json.Number(v.Raw())
	case Bool:
		b, _ := v.Bool()
		return b
	case Null:
		return nil
	}
	return fmt.Sprintf("invalid value (err %v)", s.Err())
}

// scanAll reads every top-level value of data with a Scanner.
func scanAll(data []byte) ([]any, error) {
	var s Scanner
	s.Reset(data)
	var out []any
	for s.More() {
		v := toAny(&s)
		if s.Err() != nil {
			break
		}
		out = append(out, v)
	}
	return out, s.Err()
}

// decodeAll reads every top-level value of data with encoding/json.
func decodeAll(data []byte) ([]any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var out []any
	for {
		var v any
		err := d.Decode(&v)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
}

// checkDifferential asserts that Scanner and encoding/json agree on data:
// the same values, and an error from both or neither.
func checkDifferential(t testing.TB, data []byte) {
	t.Helper()
	got, gotErr := scanAll(data)
	want, wantErr := decodeAll(data)
	if wantErr != nil && errors.Is(wantErr, io.ErrUnexpectedEOF) {
		// The stream decoder reports truncation as io.ErrUnexpectedEOF.
		wantErr = fmt.Errorf("truncated: %w", wantErr)
	}
	require.Equal(t, wantErr != nil, gotErr != nil, "error mismatch on %q: scanner %v, encoding/json %v", truncate(data), gotErr, wantErr)
	require.Equal(t, want, got, "values differ on %q", truncate(data))
	if gotErr != nil {
		var se *SyntaxError
		require.ErrorAs(t, gotErr, &se)
		require.GreaterOrEqual(t, se.Offset, 0)
		require.LessOrEqual(t, se.Offset, len(data))
	}
}

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// corpusLines returns every line of every transcript under testdata.
func corpusLines(tb testing.TB) [][]byte {
	tb.Helper()
	var lines [][]byte
	err := filepath.WalkDir("../../testdata", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for line := range bytes.Lines(data) {
			lines = append(lines, bytes.TrimRight(line, "\r\n"))
		}
		return nil
	})
	require.NoError(tb, err)
	require.NotEmpty(tb, lines)
	return lines
}

func TestScanner_DifferentialCorpus(t *testing.T) {
	lines := corpusLines(t)
	for _, line := range lines {
		checkDifferential(t, line)
	}
	t.Logf("%d corpus lines agree with encoding/json", len(lines))
}

var edgeCases = []struct {
	name string
	in   string
}{
	{"Empty", ``},
	{"Space", `   `},
	{"EmptyObject", `{}`},
	{"EmptyArray", `[]`},
	{"Nested", `{"a":{"b":[1,2,{"c":null}],"d":[]},"e":{}}`},
	{"Whitespace", " { \"a\" : [ 1 , 2 ] , \"b\" :\t\"x\" } "},
	{"Escapes", `{"s":"a\"b\\c\/d\be\ff\ng\rh\ti"}`},
	{"Unicode", `{"s":"\u00e9\u4e2d\ud83d\ude00 caf\u00e9"}`},
	{"SurrogatePair", `{"s":"\ud83d\ude00"}`},
	{"LoneHighSurrogate", `{"s":"\ud83d x"}`},
	{"LoneLowSurrogate", `{"s":"\ude00"}`},
	{"HighThenBadLow", `{"s":"\ud83d\u0041"}`},
	{"HighSurrogateAtEnd", `{"s":"\ud83d"}`},
	{"InvalidUTF8", "{\"s\":\"a\xffb\xc3\"}"},
	{"InvalidUTF8Escaped", "{\"s\":\"\\n\xff\xfe\"}"},
	{"RawUTF8", `{"s":"日本語 ✓ 😀"}`},
	{"EscapedKey", `{"ty\u0070e":"user"}`},
	{"Numbers", `[0,-0,1,-1,12.5,-0.25,1e10,1E+2,2e-3,123456789012345678901234567890]`},
	{"TwoObjects", `{"a":1}{"b":2}`},
	{"TwoObjectsSpace", `{"a":1} {"b":[2]}`},
	{"TrailingGarbage", `{"a":1}x`},
	{"Literals", `[true,false,null]`},
	{"TruncatedObject", `{"a":1`},
	{"TruncatedString", `{"a":"abc`},
	{"TruncatedEscape", `{"a":"abc\`},
	{"TruncatedUnicode", `{"a":"\u12`},
	{"BadUnicode", `{"a":"\u12x4"}`},
	{"BadEscape", `{"a":"\x"}`},
	{"ControlChar", "{\"a\":\"a\x01b\"}"},
	{"RawNewlineInString", "{\"a\":\"a\nb\"}"},
	{"RawTabInString", "{\"a\":\"a\tb\"}"},
	{"DEL", "{\"a\":\"\x7f\"}"},
	{"MissingColon", `{"a" 1}`},
	{"MissingComma", `{"a":1 "b":2}`},
	{"TrailingComma", `{"a":1,}`},
	{"TrailingCommaArray", `[1,]`},
	{"LeadingComma", `[,1]`},
	{"UnquotedKey", `{a:1}`},
	{"SingleQuotes", `{'a':1}`},
	{"BadLiteral", `[tru]`},
	{"BadLiteral2", `[nul]`},
	{"TruncatedLiteral", `[fals`},
	{"LeadingZero", `[01]`},
	{"BareMinus", `[-]`},
	{"BadFraction", `[1.]`},
	{"BadExponent", `[1e]`},
	{"BadExponentSign", `[1e+]`},
	{"Plus", `[+1]`},
	{"Hex", `[0x10]`},
	{"NaN", `[NaN]`},
	{"CloseMismatch", `{"a":[1}`},
	{"CloseMismatch2", `[{"a":1]`},
	{"ExtraClose", `{"a":1}}`},
	{"ScalarTop", `"just a string"`},
	{"NumberTop", `42`},
	{"NestedEmpty", `[[[[]]],{"a":{"b":{}}}]`},
	{"KeyNotString", `{1:2}`},
	{"LongString", `{"a":"` + strings.Repeat("abcdefgh\\n\\\"", 1000) + `"}`},
	{"QuoteAtWordBoundary", `{"abcdef":"0123456"}`},
	{"BackslashRun", `{"a":"\\\\\\\"\\"}`},
	{"NulByte", "{\"a\":\"\x00\"}"},
	{"NulOutside", "{\"a\":1}\x00"},
}

func TestScanner_DifferentialEdgeCases(t *testing.T) {
	for _, tc := range edgeCases {
		t.Run(tc.name, func(t *testing.T) {
			checkDifferential(t, []byte(tc.in))
		})
	}
}

func TestScanner_Depth(t *testing.T) {
	for _, n := range []int{1, 63, 64, 65, 1000, MaxDepth, MaxDepth + 1} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			in := []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
			_, err := scanAll(in)
			if n > MaxDepth {
				require.ErrorIs(t, err, ErrTooDeep)
			} else {
				require.NoError(t, err)
			}
			// Skipped rather than walked.
			var s Scanner
			s.Reset(in)
			require.True(t, s.More())
			s.Skip()
			if n > MaxDepth {
				require.ErrorIs(t, s.Err(), ErrTooDeep)
			} else {
				require.NoError(t, s.Err())
			}
		})
	}
}

func TestScanner_EarlyExitValidates(t *testing.T) {
	var s Scanner
	s.Reset([]byte(`{"type":"user","message":{"content":[1,2,{"x":"y"}],"id":"m"},"tail":[1,2 3]}`))
	require.True(t, s.More())
	require.True(t, s.EnterObject())
	require.True(t, s.NextField())
	require.Equal(t, "type", string(s.Key()))
	require.True(t, s.Value().Equal("user"))
	require.True(t, s.NextField())
	require.True(t, s.EnterObject()) // message: left open
	require.False(t, s.Finish())
	var se *SyntaxError
	require.ErrorAs(t, s.Err(), &se)
	require.Equal(t, strings.Index(`{"type":"user","message":{"content":[1,2,{"x":"y"}],"id":"m"},"tail":[1,2 3]}`, " 3")+1, se.Offset)
}

func TestScanner_Misuse(t *testing.T) {
	var s Scanner
	s.Reset([]byte(`[1,2]`))
	require.True(t, s.EnterArray())
	require.False(t, s.NextField())
	require.ErrorIs(t, s.Err(), ErrMisuse)
}

func TestScanner_Span(t *testing.T) {
	var s Scanner
	in := []byte(` {"a":1}  {"b":[2,3]} `)
	s.Reset(in)
	var spans []string
	for s.More() {
		s.EnterObject()
		s.NextField()
		require.True(t, s.Finish())
		spans = append(spans, string(s.Span()))
	}
	require.NoError(t, s.Err())
	require.Equal(t, []string{`{"a":1}`, `{"b":[2,3]}`}, spans)
}

func TestValue_Int(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"-0", 0, true},
		{"42", 42, true},
		{"-42", -42, true},
		{"9223372036854775807", 9223372036854775807, true},
		{"-9223372036854775808", -9223372036854775808, true},
		{"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false},
		{"99999999999999999999", 0, false},
		{"1.5", 0, false},
		{"1e3", 0, false},
		{`"1"`, 0, false},
	}
	for _, tc := range tests {
		var s Scanner
		s.Reset([]byte(tc.in))
		v := s.Value()
		got, ok := v.Int()
		require.Equal(t, tc.ok, ok, "Int(%s) ok", tc.in)
		require.Equal(t, tc.want, got, "Int(%s)", tc.in)
	}
}

func TestValue_Equal(t *testing.T) {
	var s Scanner
	s.Reset([]byte(`["user","us\u0065r","x\n"]`))
	s.EnterArray()
	s.NextElem()
	require.True(t, s.Value().Equal("user"))
	s.NextElem()
	v := s.Value()
	require.True(t, v.Escaped())
	require.True(t, v.Equal("user"))
	require.False(t, v.Equal("usex"))
	s.NextElem()
	require.True(t, s.Value().Equal("x\n"))
}

// Equal compares the decoded text, as String returns it: invalid UTF-8
// decodes to U+FFFD, with or without escapes elsewhere in the string, and
// on both cursors (the long line goes through the structural index).
func TestValue_Equal_InvalidUTF8(t *testing.T) {
	long := strings.Repeat("L", 200)
	for _, pad := range []string{"", strings.Repeat(" ", 100)} {
		in := []byte(`[` + pad + `"a\xffb","a\xffb\n","` + long + `\xff"]`)
		in = bytes.ReplaceAll(in, []byte(`\xff`), []byte("\xff"))
		want := []string{"a\ufffdb", "a\ufffdb\n", long + "\ufffd"}
		for i, v := range elems(t, in, len(want)) {
			w := want[i]
			require.Equal(t, w, v.String(), "element %d", i)
			require.True(t, v.Equal(w), "element %d", i)
			require.False(t, v.Equal(strings.Replace(w, "\ufffd", "\xff", 1)), "element %d: raw bytes must not match", i)
		}
	}
}

// elems returns the first n elements of the array that in holds.
func elems(t *testing.T, in []byte, n int) []Value {
	t.Helper()
	var s Scanner
	s.Reset(in)
	require.True(t, s.EnterArray())
	vs := make([]Value, n)
	for i := range vs {
		require.True(t, s.NextElem(), "element %d", i)
		vs[i] = s.Value()
	}
	return vs
}

func TestValue_Plain(t *testing.T) {
	// Long enough for the structural index on amd64, and read by both
	// cursors: the indexed one first, the byte-by-byte one after the
	// invalid tail hands over.
	pad := strings.Repeat("p", 70)
	line := `["plain` + pad + `","caf\u00e9","café` + pad + `","bad \xff","\"q\"",12,null,"ok` + pad + `"`
	cases := []struct {
		kind  Kind
		plain bool
	}{{String, true}, {String, false}, {String, true}, {String, false}, {String, false}, {Number, false}, {Null, false}, {String, true}}
	for _, tail := range []string{"]", "],x"} { // the second is invalid at the end
		in := []byte(strings.Replace(line+tail, `\xff`, "\xff", 1))
		for i, v := range elems(t, in, len(cases)) {
			tc := cases[i]
			require.Equal(t, tc.kind, v.Kind(), "element %d", i)
			require.Equal(t, tc.plain, v.Plain(), "element %d: %s", i, v.Raw())
			if tc.plain {
				require.Equal(t, string(v.Raw()), v.String())
			}
		}
	}
}

func TestScanner_NoAllocs(t *testing.T) {
	lines := corpusLines(t)
	var s Scanner
	allocs := testing.AllocsPerRun(5, func() {
		for _, line := range lines {
			s.Reset(line)
			for s.More() {
				walkNoAlloc(&s)
			}
		}
	})
	require.Zero(t, allocs)
}

// walkNoAlloc visits every value without keeping anything.
func walkNoAlloc(s *Scanner) {
	switch s.Peek() {
	case Object:
		s.EnterObject()
		for s.NextField() {
			walkNoAlloc(s)
		}
	case Array:
		s.EnterArray()
		for s.NextElem() {
			walkNoAlloc(s)
		}
	default:
		v := s.Value()
		_, _ = v.Int()
	}
}

// config is one way of running the Scanner: with or without the
// structural index, with the assembly or the portable routines.
type config struct {
	name        string
	index, avx2 bool
}

// configs runs f under every configuration available here.
func configs(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	savedAVX2, savedIndex := hasAVX2, useIndex
	t.Cleanup(func() { hasAVX2, useIndex = savedAVX2, savedIndex })
	for _, c := range []config{
		{"index-avx2", true, true},
		{"index-portable", true, false},
		{"bytewise-avx2", false, true},
		{"bytewise-swar", false, false},
	} {
		if c.avx2 && !savedAVX2 {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			hasAVX2, useIndex = c.avx2, c.index
			f(t)
		})
	}
}

// TestScanner_DifferentialPaths runs the differential tests with and
// without the structural index, with the assembly and the portable code.
func TestScanner_DifferentialPaths(t *testing.T) {
	lines := corpusLines(t)
	configs(t, func(t *testing.T) {
		for _, line := range lines {
			checkDifferential(t, line)
		}
		for _, tc := range edgeCases {
			checkDifferential(t, []byte(tc.in))
		}
		// Escapes and specials at every position around the block
		// boundaries of the assembly.
		for n := 0; n < 140; n++ {
			for _, special := range []string{`\"`, `\\`, `\n`, `\u00e9`, `\ud83d\ude00`, "\x01", `\x`, `"`, `\`, `\u12`, "é"} {
				s := `{"k":"` + strings.Repeat("a", n) + special + strings.Repeat("b", 40) + `"}`
				checkDifferential(t, []byte(s))
				checkDifferential(t, []byte(s[:len(s)-3]))
			}
		}
	})
}

// TestScanner_RandomStrings builds strings from escape-heavy pieces at
// random lengths, so that escapes, backslash runs and \u digits fall on
// every position of the 64-byte blocks, and checks both string scanners
// against encoding/json, valid and invalid alike.
func TestScanner_RandomStrings(t *testing.T) {
	pieces := []string{"a", "bcdefgh", "é", "日本", `\"`, `\\`, `\\\\`, `\\\"`, `\n`, `\/`, `\u00e9`, `\ud83d\ude00`, `\uD834\uDD1E`, `\\u0041`}
	bad := []string{`\x`, "\x01", `\u12G4`, `\u12`, `\`, "\x1f", `\ud83d`}
	rng := rand.New(rand.NewPCG(7, 9))
	var inputs [][]byte
	for i := range 2000 {
		var b strings.Builder
		b.WriteString(`{"k":"`)
		n := rng.IntN(300)
		for b.Len() < n {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		if i%3 == 0 {
			b.WriteString(bad[rng.IntN(len(bad))])
			for range rng.IntN(80) {
				b.WriteString(pieces[rng.IntN(len(pieces))])
			}
		}
		b.WriteString(`","z":1}`)
		in := []byte(b.String())
		inputs = append(inputs, in, in[:rng.IntN(len(in)+1)])
	}
	configs(t, func(t *testing.T) {
		for _, in := range inputs {
			checkDifferential(t, in)
		}
	})
}

// Equal(s) is String() == s, for strings with and without escapes and
// invalid UTF-8, against candidates equal, longer, shorter and raw.
func TestValue_EqualMatchesString(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	pieces := []string{"a", "é", "\xff", `\n`, `\u00e9`, `\ud83d\ude00`, `\"`, "zz", `\u0041`}
	for range 2000 {
		var raw strings.Builder
		for range r.IntN(12) {
			raw.WriteString(pieces[r.IntN(len(pieces))])
		}
		if r.IntN(4) == 0 {
			raw.WriteString(strings.Repeat("p", 60+r.IntN(200)))
		}
		v := elems(t, []byte(`["`+raw.String()+`"]`), 1)[0]
		text := v.String()
		for _, c := range []string{text, text + "x", raw.String(), "", strings.ToUpper(text)} {
			require.Equal(t, text == c, v.Equal(c), "raw %q, candidate %q", raw.String(), c)
		}
		if len(text) > 0 {
			c := text[:len(text)-1]
			require.Equal(t, text == c, v.Equal(c), "raw %q, candidate %q", raw.String(), c)
		}
	}
}

// Value.String decodes an escaped string in one allocation, and gives the
// same text as AppendText whether escapes shrank it a little (the string
// is the decoded buffer itself) or by more than an eighth (then a copy of
// its size, a second allocation).
func TestValue_StringOneAllocation(t *testing.T) {
	long := strings.Repeat("a line of a transcript, ", 40)
	for _, tc := range []struct {
		name, raw string
		allocs    float64
	}{
		{"few escapes", `"` + long + `\n` + long + `\"quoted\"\t` + `"`, 1},
		{"many escapes", `"` + strings.Repeat(`\u00e9\n`, 200) + `"`, 2},
		{"invalid UTF-8", "\"" + long + "\xff\\n" + long + "\"", 1},
		{"short", `"a\tb"`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s Scanner
			s.Reset([]byte(tc.raw))
			v := s.Value()
			require.Equal(t, String, v.Kind())
			require.False(t, v.Plain())
			want := string(v.AppendText(nil))
			require.Equal(t, want, v.String())
			got := v.String()
			require.Equal(t, want, strings.Clone(got), "the string changed after another decode")
			require.Equal(t, tc.allocs, testing.AllocsPerRun(10, func() { _ = v.String() }))
		})
	}
}
