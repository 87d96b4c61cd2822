package fluux_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/fluux"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

// FuzzParse feeds arbitrary files to the parser: it must never panic, every
// error must be a located *schema.DecodeError, every entry must satisfy the
// contract and survive encode → decode → encode unchanged.
func FuzzParse(f *testing.F) {
	formattest.SeedFiles(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		p := fluux.New(parse.Config{Path: "m/a@b/history.jsonl", Text: true, Raw: true})
		formattest.FuzzFile(t, p, data, func(e *schema.Entry) { require.Nil(t, e.Usage) })
	})
}
