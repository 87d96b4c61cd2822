package gemini_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/gemini"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

// BenchmarkParse parses the session golden case (17 lines: messages,
// copies of them, a $set re-sending the conversation), one fresh parser
// per pass as the tailer does per file, with and without text
// extraction.
func BenchmarkParse(b *testing.B) {
	data := formattest.ReadFile(b, filepath.Join("testdata", "session", "input.jsonl"))
	lines := formattest.Lines(b, data)
	for _, text := range []bool{false, true} {
		b.Run(fmt.Sprintf("text=%t", text), func(b *testing.B) {
			cfg := parse.Config{Path: "session.jsonl", Text: text}
			_, errs := formattest.ParseAll(b, gemini.New(cfg), data)
			require.Empty(b, errs) // checked before timing
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			var out []schema.Entry
			for b.Loop() {
				p := gemini.New(cfg)
				for _, l := range lines {
					out, _ = p.Parse(out[:0], l)
				}
			}
			b.ReportMetric(float64(len(lines))*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}
