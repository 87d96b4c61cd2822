package codex_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/codex"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

// FuzzParse feeds arbitrary lines, after a session header, to the parser:
// it must not panic, every error must be located, and every entry must be
// valid and survive an encode, decode, encode round trip unchanged.
func FuzzParse(f *testing.F) {
	formattest.SeedLines(f, false)
	header := []byte(`{"timestamp":"2025-10-01T10:00:00Z","type":"session_meta","payload":{"id":"c","source":{"subagent":{"thread_spawn":{"parent_thread_id":"p"}}}}}`)
	f.Fuzz(func(t *testing.T, line []byte) {
		line = bytes.TrimRight(line, "\r\n")
		p := codex.New(parse.Config{Path: "f.jsonl", Text: true, Raw: true})
		entries, err := p.Parse(nil, jsonl.Line{Bytes: header, Number: 1})
		require.NoError(t, err)
		formattest.FuzzLine(t, p, entries, jsonl.Line{Bytes: line, Offset: int64(len(header) + 1), Number: 2}, nil)
	})
}
