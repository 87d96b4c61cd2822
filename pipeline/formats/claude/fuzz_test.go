package claude_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/claude"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// FuzzParse feeds arbitrary lines to the parser: it must not panic, every
// entry must satisfy the contract and survive a JSON round trip, and every
// error must be a located *schema.DecodeError.
func FuzzParse(f *testing.F) {
	inputs, err := filepath.Glob("testdata/*/input.jsonl")
	require.NoError(f, err)
	for _, in := range inputs {
		data, err := os.ReadFile(in)
		require.NoError(f, err)
		for line := range bytes.SplitSeq(data, []byte("\n")) {
			if len(line) < 4096 {
				f.Add(line)
			}
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		for _, text := range []bool{false, true} {
			p := claude.New(parse.Config{Path: "/p/s/subagents/agent-x.jsonl", Text: text, Raw: true})
			entries, err := p.Parse(nil, jsonl.Line{Bytes: line, Number: 1})
			if err != nil {
				var de *schema.DecodeError
				require.ErrorAs(t, err, &de)
				require.Equal(t, int64(1), de.Line)
				require.True(t, de.Offset >= 0 && de.Offset <= int64(len(line)), "offset %d out of line", de.Offset)
			}
			for i := range entries {
				e := &entries[i]
				require.NoError(t, e.Validate())
				require.Equal(t, e.UsageKey != "", e.Usage != nil)
				enc := e.AppendJSON(nil)
				var dec schema.Entry
				require.NoError(t, schema.UnmarshalEntry(enc, &dec), "%s", enc)
				require.Equal(t, string(enc), string(dec.AppendJSON(nil)))
			}
		}
	})
}
