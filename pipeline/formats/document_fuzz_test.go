package formats

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

// FuzzParseDocument feeds arbitrary documents, seeded with the document
// cases of amp, droid, gemini and codebuff: no panic; a document either is of no
// known format, or is refused with a located error, or gives valid
// entries (surviving their canonical JSON) and located errors; the same
// bytes give the same result.
func FuzzParseDocument(f *testing.F) {
	for _, dir := range []string{"amp", "droid", "gemini", "codebuff"} {
		cases, _ := filepath.Glob(filepath.Join(dir, "testdata", "*", "input.json"))
		for _, c := range cases {
			data, err := os.ReadFile(c)
			if err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte(`{"id":"T-1","v":1,"messages":[{"role":"assistant","messageId":1e400,"usage":{"outputTokens":1e3}}]}`))
	f.Add([]byte(`{"sessionId":"s","projectHash":"h","messages":[1,"x",null,{"type":"gemini","id":"a","tokens":{"input":-1}}]}`))
	f.Add([]byte(`[{"variant":"ai","metadata":{"usage":{"inputTokens":1e400}}},[1],{"variant":"user","timestamp":true}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg := parse.Config{Path: "h/T-1.json", Host: "h", Text: true, Raw: true}
		d, err := ParseDocument(data, cfg, time.Unix(1790154000, 0))
		if errors.Is(err, ErrUnknownFormat) {
			return
		}
		var de *schema.DecodeError
		if err != nil {
			if !errors.As(err, &de) {
				t.Fatalf("ParseDocument error %v is not located", err)
			}
			return
		}
		for _, e := range d.Errors {
			if !errors.As(e, &de) {
				t.Fatalf("part error %v is not located", e)
			}
		}
		for i := range d.Entries {
			formattest.RequireEntry(t, &d.Entries[i])
		}
		again, _ := ParseDocument(data, cfg, time.Unix(1790154000, 0))
		if len(again.Entries) != len(d.Entries) || len(again.Errors) != len(d.Errors) {
			t.Fatalf("a second parse gave %d entries and %d errors, the first %d and %d",
				len(again.Entries), len(again.Errors), len(d.Entries), len(d.Errors))
		}
	})
}
