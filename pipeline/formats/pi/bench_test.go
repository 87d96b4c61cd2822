package pi_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/pi"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// loadLines splits a transcript into its lines, copied out of the reader.
func loadLines(tb testing.TB, path string) (lines []jsonl.Line, size int64) {
	tb.Helper()
	data := formattest.ReadFile(tb, path)
	return formattest.Lines(tb, data), int64(len(data))
}

func BenchmarkParse(b *testing.B) {
	for _, c := range []string{"pi-mono-compact", "pi-mono-session", "pi-mono-large-session", "openclaw-8555a0a4"} {
		lines, size := loadLines(b, "testdata/"+c+"/input.jsonl")
		for _, text := range []bool{false, true} {
			name := c + "/text=false"
			if text {
				name = c + "/text=true"
			}
			b.Run(name, func(b *testing.B) {
				cfg := parse.Config{Path: "/x/" + c + ".jsonl", Text: text}
				// Checked before timing: every line parses.
				var entries []schema.Entry
				p := pi.New(cfg)
				n := 0
				for _, l := range lines {
					var err error
					entries, err = p.Parse(entries[:0], l)
					require.NoError(b, err)
					n += len(entries)
				}
				b.ReportAllocs()
				b.SetBytes(size)
				for b.Loop() {
					p := pi.New(cfg)
					for _, l := range lines {
						entries, _ = p.Parse(entries[:0], l)
					}
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
			})
		}
	}
}
