package claude_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/claude"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// FuzzParse feeds arbitrary lines to the parser: it must not panic, every
// entry must satisfy the contract and survive a JSON round trip, and every
// error must be a located *schema.DecodeError.
func FuzzParse(f *testing.F) {
	formattest.SeedLines(f, false)
	f.Fuzz(func(t *testing.T, line []byte) {
		for _, text := range []bool{false, true} {
			p := claude.New(parse.Config{Path: "/p/s/subagents/agent-x.jsonl", Text: text, Raw: true})
			formattest.FuzzLine(t, p, nil, jsonl.Line{Bytes: line, Number: 1}, func(e *schema.Entry) {
				require.Equal(t, e.UsageKey != "", e.Usage != nil)
			})
		}
	})
}
