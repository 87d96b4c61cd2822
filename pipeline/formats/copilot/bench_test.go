package copilot_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/copilot"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

// BenchmarkParse parses the legs golden case (a session resumed once,
// three models, sixteen events), one fresh parser per pass as the tailer
// does per file, with and without text extraction.
func BenchmarkParse(b *testing.B) {
	data := formattest.ReadFile(b, filepath.Join("testdata", "legs", "input.jsonl"))
	lines := formattest.Lines(b, data)
	for _, text := range []bool{false, true} {
		b.Run(fmt.Sprintf("text=%t", text), func(b *testing.B) {
			cfg := parse.Config{Path: "/h/.copilot/session-state/s/events.jsonl", Text: text}
			entries, errs := formattest.ParseAll(b, copilot.New(cfg), data)
			require.Empty(b, errs)
			require.Len(b, entries, len(lines)+2) // two shutdowns with two models: checked before timing
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			var out []schema.Entry
			for b.Loop() {
				p := copilot.New(cfg)
				for _, l := range lines {
					out, _ = p.Parse(out[:0], l)
				}
			}
			b.ReportMetric(float64(len(lines))*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}
