package m4dtimes_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/m4dtimes"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

// FuzzParse feeds arbitrary files to the parser: it must never panic, every
// error must be a located *schema.DecodeError, every entry must satisfy the
// contract and survive encode → decode → encode unchanged, and usage only
// ever sits on assistant entries with a usage key.
func FuzzParse(f *testing.F) {
	formattest.SeedFiles(f)
	data, _ := sdkFile(rand.New(rand.NewPCG(5, 6)), 42, 2)
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		p := m4dtimes.New(parse.Config{Path: "sessions/42.jsonl", Text: true, Raw: true})
		formattest.FuzzFile(t, p, data, func(e *schema.Entry) {
			if e.Usage != nil {
				require.Equal(t, schema.RoleAssistant, e.Role)
				require.Equal(t, "m4dtimes:"+e.SessionID+":"+e.EntryID, e.UsageKey)
			}
		})
	})
}
