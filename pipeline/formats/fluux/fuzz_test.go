package fluux_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/fluux"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

// FuzzParse feeds arbitrary files to the parser: it must never panic, every
// error must be a located *schema.DecodeError, every entry must satisfy the
// contract and survive encode → decode → encode unchanged.
func FuzzParse(f *testing.F) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "*", "input.jsonl"))
	require.NoError(f, err)
	for _, in := range inputs {
		data, err := os.ReadFile(in)
		require.NoError(f, err)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !bytes.HasSuffix(data, []byte("\n")) {
			data = append(data[:len(data):len(data)], '\n') // never write into the fuzzer's buffer
		}
		p := fluux.New(parse.Config{Path: "m/a@b/history.jsonl", Text: true, Raw: true})
		var entries []schema.Entry
		for _, l := range readLines(t, data) {
			var err error
			entries, err = p.Parse(entries[:0], l)
			if err != nil {
				var de *schema.DecodeError
				require.ErrorAs(t, err, &de)
				require.Equal(t, l.Number, de.Line)
				require.GreaterOrEqual(t, de.Offset, l.Offset)
				require.LessOrEqual(t, de.Offset, l.Offset+int64(len(l.Bytes)))
			}
			for i := range entries {
				e := &entries[i]
				require.NoError(t, e.Validate())
				require.Nil(t, e.Usage)
				enc := e.AppendJSON(nil)
				var back schema.Entry
				require.NoError(t, schema.UnmarshalEntry(enc, &back), "%s", enc)
				require.Equal(t, string(enc), string(back.AppendJSON(nil)))
			}
		}
	})
}
