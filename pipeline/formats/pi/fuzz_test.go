package pi_test

import (
	"bytes"
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/pi"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// FuzzParse feeds arbitrary lines: the parser must not panic, every error
// must be a located *schema.DecodeError, every entry must be valid and
// survive its canonical JSON form.
func FuzzParse(f *testing.F) {
	cases, err := filepath.Glob("testdata/*/input.jsonl")
	require.NoError(f, err)
	for _, in := range cases {
		data := mustRead(f, in)
		for _, l := range bytes.SplitAfter(data, []byte("\n")) {
			if len(l) < 4096 {
				f.Add(l)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := pi.New(parse.Config{Path: "f.jsonl", Text: true, Raw: true})
		rd := jsonl.NewReader(bytes.NewReader(data), jsonl.ReaderConfig{})
		var entries []schema.Entry
		for {
			line, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				continue
			}
			entries, err = p.Parse(entries[:0], line)
			if err != nil {
				var de *schema.DecodeError
				require.ErrorAs(t, err, &de)
				require.GreaterOrEqual(t, de.Offset, line.Offset)
				require.LessOrEqual(t, de.Offset, line.End)
			}
			for i := range entries {
				e := &entries[i]
				require.NoError(t, e.Validate())
				js := e.AppendJSON(nil)
				var back schema.Entry
				require.NoError(t, schema.UnmarshalEntry(js, &back), "%s", js)
				require.Equal(t, string(js), string(back.AppendJSON(nil)))
			}
		}
	})
}
