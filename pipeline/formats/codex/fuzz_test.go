package codex_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/codex"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// FuzzParse feeds arbitrary lines, after a session header, to the parser:
// it must not panic, every error must be located, and every entry must be
// valid and survive an encode, decode, encode round trip unchanged.
func FuzzParse(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*", "input.jsonl"))
	require.NoError(f, err)
	for _, path := range paths {
		for _, l := range mustLines(f, mustReadCase(f, filepath.Base(filepath.Dir(path)))) {
			if len(l.Bytes) < 4096 {
				f.Add(l.Bytes)
			}
		}
	}
	header := []byte(`{"timestamp":"2025-10-01T10:00:00Z","type":"session_meta","payload":{"id":"c","source":{"subagent":{"thread_spawn":{"parent_thread_id":"p"}}}}}`)
	f.Fuzz(func(t *testing.T, line []byte) {
		line = bytes.TrimRight(line, "\r\n")
		p := codex.New(parse.Config{Path: "f.jsonl", Text: true, Raw: true})
		entries, err := p.Parse(nil, jsonl.Line{Bytes: header, Number: 1})
		require.NoError(t, err)
		entries, err = p.Parse(entries, jsonl.Line{Bytes: line, Offset: int64(len(header) + 1), Number: 2})
		if err != nil {
			var de *schema.DecodeError
			require.ErrorAs(t, err, &de)
			require.Equal(t, int64(2), de.Line)
		}
		for i := range entries {
			require.NoError(t, entries[i].Validate())
			enc := entries[i].AppendJSON(nil)
			var back schema.Entry
			require.NoError(t, schema.UnmarshalEntry(enc, &back), "%s", enc)
			require.Equal(t, string(enc), string(back.AppendJSON(nil)))
		}
	})
}
