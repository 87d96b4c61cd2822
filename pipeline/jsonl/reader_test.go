package jsonl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

// readAll returns every line and error a Reader yields for input.
func readAll(tb testing.TB, r io.Reader, cfg ReaderConfig) (lines []Line, errs []error, rd *Reader) {
	tb.Helper()
	rd = NewReader(r, cfg)
	for {
		l, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return lines, errs, rd
		}
		if err != nil {
			errs = append(errs, err)
			var tl *LineTooLongError
			if !errors.As(err, &tl) {
				return lines, errs, rd
			}
			continue
		}
		l.Bytes = bytes.Clone(l.Bytes)
		lines = append(lines, l)
	}
}

func texts(lines []Line) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = string(l.Bytes)
	}
	return out
}

func TestReader_Lines(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string
		numbers []int64
		pending string
	}{
		{"Empty", "", nil, nil, ""},
		{"One", "a\n", []string{"a"}, []int64{1}, ""},
		{"PartialLastLine", "a\nb", []string{"a"}, []int64{1}, "b"},
		{"OnlyPartial", `{"x":`, nil, nil, `{"x":`},
		{"CRLF", "a\r\nb\r\n", []string{"a", "b"}, []int64{1, 2}, ""},
		{"BOM", "\xEF\xBB\xBFa\nb\n", []string{"a", "b"}, []int64{1, 2}, ""},
		{"BOMNotFirst", "a\n\xEF\xBB\xBFb\n", []string{"a", "\xEF\xBB\xBFb"}, []int64{1, 2}, ""},
		{"BlankLines", "\n\na\n \t\r\n\nb\n", []string{"a", "b"}, []int64{3, 6}, ""},
		{"LoneCR", "a\rb\n", []string{"a\rb"}, []int64{1}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, mk := range readers {
				lines, errs, rd := readAll(t, mk.fn([]byte(tc.in)), ReaderConfig{BufferSize: 4})
				require.Empty(t, errs, mk.name)
				require.Equal(t, tc.want, nilIfEmpty(texts(lines)), mk.name)
				for i, l := range lines {
					require.Equal(t, tc.numbers[i], l.Number, mk.name)
				}
				require.Equal(t, tc.pending, string(rd.Buffered()), mk.name)
				require.Equal(t, int64(len(tc.in)-len(tc.pending)), rd.Offset(), mk.name)
			}
		})
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

var readers = []struct {
	name string
	fn   func([]byte) io.Reader
}{
	{"whole", func(b []byte) io.Reader { return bytes.NewReader(b) }},
	{"onebyte", func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) }},
	{"half", func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) }},
	{"dataerr", func(b []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(b)) }},
}

func TestReader_Offsets(t *testing.T) {
	in := "\xEF\xBB\xBF{\"a\":1}\r\n\n{\"b\":2}\n"
	lines, errs, _ := readAll(t, strings.NewReader(in), ReaderConfig{})
	require.Empty(t, errs)
	require.Len(t, lines, 2)
	require.Equal(t, Line{Bytes: []byte(`{"a":1}`), Offset: 0, End: 12, Number: 1}, lines[0])
	require.Equal(t, Line{Bytes: []byte(`{"b":2}`), Offset: 13, End: 21, Number: 3}, lines[1])
}

// growingFile is a reader over data that grows between reads, like a
// transcript being appended to.
type growingFile struct {
	data []byte
	pos  int
}

func (g *growingFile) Read(p []byte) (int, error) {
	if g.pos >= len(g.data) {
		return 0, io.EOF
	}
	n := copy(p, g.data[g.pos:])
	g.pos += n
	return n, nil
}

func TestReader_FollowsGrowingFile(t *testing.T) {
	f := &growingFile{}
	rd := NewReader(f, ReaderConfig{BufferSize: 8})
	_, err := rd.Next()
	require.ErrorIs(t, err, io.EOF)

	f.data = append(f.data, `{"half":`...)
	_, err = rd.Next()
	require.ErrorIs(t, err, io.EOF, "a half-written line is held")
	require.Equal(t, `{"half":`, string(rd.Buffered()))
	require.Zero(t, rd.Offset())

	f.data = append(f.data, "true}\n{\"next\":1}\n"...)
	l, err := rd.Next()
	require.NoError(t, err)
	require.Equal(t, `{"half":true}`, string(l.Bytes))
	l, err = rd.Next()
	require.NoError(t, err)
	require.Equal(t, `{"next":1}`, string(l.Bytes))
	require.Equal(t, int64(2), l.Number)
	_, err = rd.Next()
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, int64(len(f.data)), rd.Offset())
}

func TestReader_LongLines(t *testing.T) {
	long := strings.Repeat("x", 1000)
	in := "a\n" + long + "\nb\n" + long + "\r\n" + strings.Repeat("y", 5000) + "\nc\n"
	for _, mk := range readers {
		t.Run(mk.name, func(t *testing.T) {
			lines, errs, _ := readAll(t, mk.fn([]byte(in)), ReaderConfig{MaxLineBytes: 999, BufferSize: 16})
			require.Equal(t, []string{"a", "b", "c"}, texts(lines))
			require.Len(t, errs, 3)
			var tl *LineTooLongError
			require.ErrorAs(t, errs[0], &tl)
			require.Equal(t, int64(2), tl.Line)
			require.Equal(t, int64(2), tl.Offset)
			require.Equal(t, int64(1000), tl.Length)
			require.Equal(t, strings.Repeat("x", headBytes), string(tl.Head))
			require.ErrorAs(t, errs[2], &tl)
			require.Equal(t, int64(5), tl.Line)
			require.Equal(t, int64(5000), tl.Length)
			require.Equal(t, int64(6), lines[2].Number)
		})
	}
}

func TestReader_LineAtLimit(t *testing.T) {
	line := strings.Repeat("z", 100)
	lines, errs, _ := readAll(t, strings.NewReader(line+"\r\n"+line+"\n"), ReaderConfig{MaxLineBytes: 100, BufferSize: 7})
	require.Empty(t, errs)
	require.Equal(t, []string{line, line}, texts(lines))
}

func TestReader_HugeLine(t *testing.T) {
	// A multi-MB image line is returned whole. This one is longer than
	// keepBuffer: the buffer it needed is given back at once.
	huge := `{"data":"` + strings.Repeat("QUJD", 5<<20) + `"}`
	lines, errs, rd := readAll(t, strings.NewReader("{}\n"+huge+"\n{}\n"), ReaderConfig{})
	require.Empty(t, errs)
	require.Len(t, lines, 3)
	require.Equal(t, huge, string(lines[1].Bytes))
	_, _ = rd.Next()
	require.LessOrEqual(t, len(rd.buf), 4*DefaultBufferSize)
}

// chunkReader returns at most n bytes per Read, so that every few lines
// take a fill.
type chunkReader struct {
	r io.Reader
	n int
}

func (c chunkReader) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

// A large buffer is kept while long lines keep coming, so that a file
// with an image every few lines does not allocate it again for each, and
// given back once twice its size was read with no long line.
func TestReader_ShrinksLazily(t *testing.T) {
	huge := `{"data":"` + strings.Repeat("QUJD", 1<<20) + `"}`
	line := `{"t":"` + strings.Repeat("a", 990) + `"}` // 1000 bytes with its newline
	lines := func(n int) string { return strings.Repeat(line+"\n", n) }
	for _, chunk := range []int{1 << 30, 4096} { // whole reads, and a file growing by small appends
		t.Run(fmt.Sprint("chunk=", chunk), func(t *testing.T) {
			in := huge + "\n" + lines(100) + huge + "\n" + lines(20_000)
			rd := NewReader(chunkReader{strings.NewReader(in), chunk}, ReaderConfig{})
			next := func() string {
				t.Helper()
				l, err := rd.Next()
				require.NoError(t, err)
				return string(l.Bytes)
			}
			require.Equal(t, huge, next())
			big, first := len(rd.buf), &rd.buf[0]
			require.Greater(t, big, keepBuffer/4)
			require.LessOrEqual(t, big, keepBuffer)
			for range 100 {
				require.Equal(t, line, next())
			}
			require.Equal(t, huge, next())
			require.Same(t, first, &rd.buf[0], "the second long line reuses the buffer")
			read := 0
			for rd.Next(); len(rd.buf) == big; rd.Next() {
				read += len(line) + 1
				require.Less(t, read, 3*big, "not shrunk")
			}
			require.GreaterOrEqual(t, read, big, "shrunk too early")
			require.Equal(t, DefaultBufferSize, len(rd.buf))

			// Reset gives a grown buffer back at once.
			rd.Reset(strings.NewReader(huge+"\n"), 0, 0)
			require.Equal(t, huge, next())
			require.Greater(t, len(rd.buf), 4*DefaultBufferSize)
			rd.Reset(strings.NewReader("{}\n"), 0, 0)
			require.Equal(t, "{}", next())
			require.Equal(t, DefaultBufferSize, len(rd.buf))
		})
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestReader_ReadError(t *testing.T) {
	boom := errors.New("boom")
	rd := NewReader(io.MultiReader(strings.NewReader("a\nb"), errReader{boom}), ReaderConfig{})
	l, err := rd.Next()
	require.NoError(t, err)
	require.Equal(t, "a", string(l.Bytes))
	_, err = rd.Next()
	require.ErrorIs(t, err, boom)
	require.Equal(t, "b", string(rd.Buffered()))
}

func TestReader_Reset(t *testing.T) {
	rd := NewReader(strings.NewReader("a\nb\n"), ReaderConfig{})
	_, err := rd.Next()
	require.NoError(t, err)
	rd.Reset(strings.NewReader("c\nd\n"), 100, 10)
	l, err := rd.Next()
	require.NoError(t, err)
	require.Equal(t, Line{Bytes: []byte("c"), Offset: 100, End: 102, Number: 11}, Line{Bytes: bytes.Clone(l.Bytes), Offset: l.Offset, End: l.End, Number: l.Number})
}

// maxReadReader records the largest read asked of it.
type maxReadReader struct {
	r   io.Reader
	max *int
}

func (m maxReadReader) Read(p []byte) (int, error) {
	*m.max = max(*m.max, len(p))
	return m.r.Read(p)
}

// With KeepBytes, the buffer is made that large once and survives Reset
// and runs of short lines (the offline reader goes from file to file,
// many with one long line), and it is read in chunks of BufferSize.
func TestReader_KeepBytes(t *testing.T) {
	huge := `{"data":"` + strings.Repeat("QUJD", 1<<20) + `"}`
	line := `{"t":"` + strings.Repeat("a", 990) + `"}`
	short := strings.Repeat(line+"\n", 20_000) // 10× the buffer the huge line needs
	var most int
	rd := NewReader(nil, ReaderConfig{BufferSize: 64 << 10, KeepBytes: 16 << 20})
	var first *byte
	for file := range 3 {
		rd.Reset(maxReadReader{strings.NewReader(huge + "\n" + short), &most}, 0, 0)
		l, err := rd.Next()
		require.NoError(t, err)
		require.Equal(t, huge, string(l.Bytes))
		if file == 0 {
			first = &rd.buf[0]
			require.Equal(t, 16<<20, len(rd.buf), "made at KeepBytes, not grown")
		}
		require.Same(t, first, &rd.buf[0], "file %d: the buffer of the first file is kept", file)
		n := 0
		for {
			_, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			n++
		}
		require.Equal(t, 20_000, n)
		require.Same(t, first, &rd.buf[0], "file %d: short lines do not shrink it", file)
	}
	require.Equal(t, 64<<10, most, "reads go in chunks of BufferSize")

	// A buffer grown past KeepBytes is given back, for one of KeepBytes:
	// after short lines as at a Reset.
	rd = NewReader(strings.NewReader(huge+"\n"+short), ReaderConfig{BufferSize: 64 << 10, KeepBytes: 1 << 20})
	_, err := rd.Next()
	require.NoError(t, err)
	require.Greater(t, len(rd.buf), 1<<20)
	for {
		if _, err := rd.Next(); errors.Is(err, io.EOF) {
			break
		}
	}
	require.Equal(t, 1<<20, len(rd.buf), "shrunk after short lines")
	rd.Reset(strings.NewReader(huge+"\n"), 0, 0)
	_, err = rd.Next()
	require.NoError(t, err)
	require.Greater(t, len(rd.buf), 1<<20)
	rd.Reset(strings.NewReader("{}\n"), 0, 0)
	_, err = rd.Next()
	require.NoError(t, err)
	require.Equal(t, 1<<20, len(rd.buf), "given back at Reset")
}
