package grok_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/grok"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// FuzzParse feeds arbitrary lines: the parser must not panic, every error
// must be a located *schema.DecodeError, every entry must be valid and
// survive its canonical JSON form.
func FuzzParse(f *testing.F) {
	formattest.SeedLines(f, true)
	f.Fuzz(func(t *testing.T, data []byte) {
		p := grok.New(parse.Config{Path: "/h/.grok/sessions/%2Fw/s/updates.jsonl", Text: true, Raw: true})
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
			entries = formattest.FuzzLine(t, p, entries[:0], line, nil)
		}
	})
}
