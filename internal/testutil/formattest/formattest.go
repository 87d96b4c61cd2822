// Package formattest holds the test helpers that the format parsers' tests
// share: splitting a transcript into lines, parsing lines with a fresh
// parser, the contract every entry and every error must meet, and the
// parse benchmark. It is for tests only; the golden-file harness is
// internal/testutil/golden.
package formattest

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/golden"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Lines splits data into its complete lines, each owning a copy of its
// bytes; a trailing partial line is held back, as a follower would. It
// fails tb on a reader error.
func Lines(tb testing.TB, data []byte) []jsonl.Line {
	tb.Helper()
	rd := jsonl.NewReader(bytes.NewReader(data), jsonl.ReaderConfig{})
	var lines []jsonl.Line
	for {
		l, err := rd.Next()
		if err == io.EOF {
			return lines
		}
		require.NoError(tb, err)
		l.Bytes = bytes.Clone(l.Bytes)
		lines = append(lines, l)
	}
}

// ReadFile returns the content of path and fails tb when it cannot be read.
func ReadFile(tb testing.TB, path string) []byte {
	tb.Helper()
	data, err := os.ReadFile(path)
	require.NoError(tb, err)
	return data
}

// CaseInputs returns the paths of the golden cases' inputs,
// testdata/*/input.jsonl, and fails tb when there is none.
func CaseInputs(tb testing.TB) []string {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*", "input.jsonl"))
	require.NoError(tb, err)
	require.NotEmpty(tb, paths, "no golden cases under testdata")
	return paths
}

// SeedFiles adds the input of every golden case, whole, to f's corpus.
func SeedFiles(f *testing.F) {
	f.Helper()
	for _, in := range CaseInputs(f) {
		f.Add(ReadFile(f, in))
	}
}

// SeedLines adds each line shorter than 4 KiB of every golden case's input
// to f's corpus: the pieces between newlines (an empty one after the last
// newline included), with their "\n" when withNewline is set.
func SeedLines(f *testing.F, withNewline bool) {
	f.Helper()
	for _, in := range CaseInputs(f) {
		for line := range bytes.SplitAfterSeq(ReadFile(f, in), []byte("\n")) {
			if !withNewline {
				line = bytes.TrimSuffix(line, []byte("\n"))
			}
			if len(line) < 4096 {
				f.Add(line)
			}
		}
	}
}

// ParseAll parses data as one file with p and returns every entry and
// every error, in order.
func ParseAll(tb testing.TB, p golden.Parser, data []byte) ([]schema.Entry, []error) {
	tb.Helper()
	var entries []schema.Entry
	var errs []error
	for _, l := range Lines(tb, data) {
		var err error
		entries, err = p.Parse(entries, l)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return entries, errs
}

// MustParse parses lines (without their newlines) in order with p, as the
// consecutive lines of one file, and fails tb on any error.
func MustParse(tb testing.TB, p golden.Parser, lines ...string) []schema.Entry {
	tb.Helper()
	var out []schema.Entry
	var off int64
	for i, l := range lines {
		var err error
		out, err = p.Parse(out, jsonl.Line{Bytes: []byte(l), Offset: off, Number: int64(i + 1)})
		require.NoError(tb, err, "line %d", i+1)
		off += int64(len(l)) + 1
	}
	return out
}

// RequireOwned parses lines in order with p, each from its own copy of its
// bytes that is overwritten once parsed (as a reader reuses its buffer),
// and requires every entry to encode the same after all the overwrites as
// right after its line was parsed: entries must not alias their line. It
// returns the entries.
func RequireOwned(tb testing.TB, p golden.Parser, lines ...jsonl.Line) []schema.Entry {
	tb.Helper()
	var entries []schema.Entry
	var before []string
	for _, l := range lines {
		l.Bytes = bytes.Clone(l.Bytes)
		n := len(entries)
		var err error
		entries, err = p.Parse(entries, l)
		require.NoError(tb, err, "line %d", l.Number)
		for i := n; i < len(entries); i++ {
			before = append(before, string(entries[i].AppendJSON(nil)))
		}
		for i := range l.Bytes {
			l.Bytes[i] = 'x'
		}
	}
	for i := range entries {
		require.Equal(tb, before[i], string(entries[i].AppendJSON(nil)), "entry %d aliases its line", i)
	}
	return entries
}

// RequireEntry requires e to satisfy the entry contract and to survive
// encode → decode → encode unchanged.
func RequireEntry(tb testing.TB, e *schema.Entry) {
	tb.Helper()
	require.NoError(tb, e.Validate())
	enc := e.AppendJSON(nil)
	var back schema.Entry
	require.NoError(tb, schema.UnmarshalEntry(enc, &back), "%s", enc)
	require.Equal(tb, string(enc), string(back.AppendJSON(nil)))
}

// RequireLocated requires err, returned for line, to be a
// *schema.DecodeError naming that line and an offset inside it.
func RequireLocated(tb testing.TB, err error, line jsonl.Line) {
	tb.Helper()
	var de *schema.DecodeError
	require.ErrorAs(tb, err, &de)
	require.Equal(tb, line.Number, de.Line)
	require.GreaterOrEqual(tb, de.Offset, line.Offset)
	require.LessOrEqual(tb, de.Offset, line.Offset+int64(len(line.Bytes)))
}

// FuzzLine appends the entries of line, parsed with p, to dst, as the
// fuzz targets do: an error must be located on the line, and every entry
// of the result, dst's included, must pass [RequireEntry] and then check,
// when not nil.
func FuzzLine(tb testing.TB, p golden.Parser, dst []schema.Entry, line jsonl.Line, check func(e *schema.Entry)) []schema.Entry {
	tb.Helper()
	entries, err := p.Parse(dst, line)
	if err != nil {
		RequireLocated(tb, err, line)
	}
	for i := range entries {
		RequireEntry(tb, &entries[i])
		if check != nil {
			check(&entries[i])
		}
	}
	return entries
}

// FuzzFile parses data as one file with p, as the fuzz targets do: a
// missing final newline is added (in a copy), and each line goes through
// [FuzzLine] with the entries of the line before dropped.
func FuzzFile(t *testing.T, p golden.Parser, data []byte, check func(e *schema.Entry)) {
	t.Helper()
	if !bytes.HasSuffix(data, []byte("\n")) {
		data = append(data[:len(data):len(data)], '\n') // never write into the fuzzer's buffer
	}
	var entries []schema.Entry
	for _, l := range Lines(t, data) {
		entries = FuzzLine(t, p, entries[:0], l, check)
	}
}

// Sentence returns a generator of n random words from words, joined by
// single spaces, for building realistic fixtures.
func Sentence(r *rand.Rand, words []string) func(n int) string {
	return func(n int) string {
		var sb strings.Builder
		for i := range n {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(words[r.IntN(len(words))])
		}
		return sb.String()
	}
}

// BenchParse benchmarks parsing lines, the lines of data, with a fresh
// parser per pass, with and without text (sub-benchmarks text=false and
// text=true). Before timing it checks that every line parses without
// error into exactly one entry. It reports bytes/s and records/s.
func BenchParse[P golden.Parser](b *testing.B, newParser func(cfg parse.Config) P, path string, data []byte, lines []jsonl.Line) {
	for _, text := range []bool{false, true} {
		b.Run(fmt.Sprintf("text=%t", text), func(b *testing.B) {
			cfg := parse.Config{Path: path, Text: text}
			// Check the fixture once before timing.
			p := newParser(cfg)
			var out []schema.Entry
			for _, l := range lines {
				var err error
				out, err = p.Parse(out, l)
				require.NoError(b, err)
			}
			require.Len(b, out, len(lines))

			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var n int
			for b.Loop() {
				p := newParser(cfg)
				for _, l := range lines {
					out, _ = p.Parse(out[:0], l)
					n += len(out)
				}
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
