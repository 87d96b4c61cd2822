package trajectory_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/trajectory"
	"github.com/sessionpipe/sessionpipe/schema"
)

// BenchmarkParse parses the runs golden case (two runs, ten events),
// one fresh parser per pass as the tailer does per file, with and
// without text extraction.
func BenchmarkParse(b *testing.B) {
	data := formattest.ReadFile(b, filepath.Join("testdata", "runs", "input.jsonl"))
	lines := formattest.Lines(b, data)
	for _, text := range []bool{false, true} {
		b.Run(fmt.Sprintf("text=%t", text), func(b *testing.B) {
			cfg := parse.Config{Path: "/nowhere/s.trajectory.jsonl", Text: text}
			entries, errs := formattest.ParseAll(b, trajectory.New(cfg), data)
			require.Empty(b, errs)
			require.Len(b, entries, len(lines)) // checked before timing
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			var out []schema.Entry
			for b.Loop() {
				p := trajectory.New(cfg)
				for _, l := range lines {
					out, _ = p.Parse(out[:0], l)
				}
			}
			b.ReportMetric(float64(len(lines))*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}
