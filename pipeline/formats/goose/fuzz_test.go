package goose_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/goose"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// FuzzParse feeds arbitrary lines (session rows in their JSON form,
// anything): no panic, located errors, valid entries that survive their
// canonical JSON form.
func FuzzParse(f *testing.F) {
	formattest.SeedLines(f, true)
	f.Fuzz(func(t *testing.T, data []byte) {
		p := goose.New(parse.Config{Path: "/h/sessions.db", Text: true, Raw: true})
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
