package kimi_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/kimi"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// FuzzParse feeds arbitrary lines: the parser must not panic, every error
// must be a located *schema.DecodeError, every entry must be valid and
// survive its canonical JSON form.
func FuzzParse(f *testing.F) {
	formattest.SeedLines(f, true)
	if data, err := os.ReadFile(filepath.Join("testdata", "turns", "input.jsonl")); err == nil {
		for _, l := range bytes.Split(data, []byte("\n")) {
			f.Add(l)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := kimi.New(parse.Config{Path: "s/subagents/a/wire.jsonl", Text: true, Raw: true})
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
