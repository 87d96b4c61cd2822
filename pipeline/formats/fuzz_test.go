package formats

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// decodeSplit feeds data to a fresh decoder as a follower would: the
// bytes up to split first (ended as a growing file), then the rest (ended
// as final). It returns one string per result and the final error.
func decodeSplit(tb testing.TB, data []byte, split int) ([]string, error) {
	tb.Helper()
	d := mustDecoder(tb, DecoderConfig{MaxLineBytes: 512})
	var got fed
	var last int64
	fn := func(r *Result) error {
		require.Greater(tb, r.Line.Number, last, "results in file order")
		last = r.Line.Number
		if r.Err != nil {
			var de *schema.DecodeError
			require.ErrorAs(tb, r.Err, &de)
			require.Equal(tb, r.Line.Number, de.Line)
		}
		for i := range r.Entries {
			require.NoError(tb, r.Entries[i].Validate())
		}
		return got.fn(r)
	}
	src := &growing{data: data[:split]}
	rd := jsonl.NewReader(src, jsonl.ReaderConfig{MaxLineBytes: 512, BufferSize: 64})
	for pass := range 2 {
		for {
			line, err := rd.Next()
			var tl *jsonl.LineTooLongError
			switch {
			case err == nil:
				err = d.Decode(line, fn)
			case errors.Is(err, io.EOF):
			case errors.As(err, &tl):
				err = d.TooLong(tl, rd.Offset(), fn)
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return got.results, err
			}
		}
		if err := d.End(pass == 1, fn); err != nil {
			return got.results, err
		}
		src.data = data
	}
	return got.results, nil
}

// growing is a file that grows: reads give what data holds past the
// bytes already read.
type growing struct {
	data []byte
	off  int
}

func (g *growing) Read(p []byte) (int, error) {
	if g.off >= len(g.data) {
		return 0, io.EOF
	}
	n := copy(p, g.data[g.off:])
	g.off += n
	return n, nil
}

// FuzzDecoder checks that a file gives the same results however its
// bytes arrive: whole, or in two parts with the decoder waiting between
// them, and that results come in file order, located.
func FuzzDecoder(f *testing.F) {
	for _, dir := range []string{"claude/testdata", "pi/testdata", "codex/testdata", "fluux/testdata", "m4dtimes/testdata"} {
		inputs, err := filepath.Glob(filepath.Join(dir, "*", "input.jsonl"))
		require.NoError(f, err)
		for _, in := range inputs {
			data, err := os.ReadFile(in)
			require.NoError(f, err)
			if len(data) > 8<<10 {
				data = data[:8<<10]
			}
			f.Add(data, uint16(len(data)/2))
		}
	}
	f.Add([]byte(knowledge+"\n"+piUser+"\n"), uint16(10))
	f.Fuzz(func(t *testing.T, data []byte, at uint16) {
		data = bytes.Clone(data)
		whole, werr := decodeSplit(t, data, len(data))
		split, serr := decodeSplit(t, data, int(at)%(len(data)+1))
		require.Equal(t, werr, serr)
		require.Equal(t, whole, split)
	})
}
