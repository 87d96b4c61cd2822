package m4dtimes_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/m4dtimes"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

func BenchmarkParse(b *testing.B) {
	data, events := sdkFile(rand.New(rand.NewPCG(1, 2)), 7756297856, 300)
	lines := readLines(b, data)
	require.Len(b, lines, len(events))
	for _, text := range []bool{false, true} {
		b.Run(fmt.Sprintf("text=%t", text), func(b *testing.B) {
			cfg := parse.Config{Path: "sessions/7756297856.jsonl", Text: text}
			// Check the fixture once before timing.
			p := m4dtimes.New(cfg)
			var out []schema.Entry
			for _, l := range lines {
				var err error
				out, err = p.Parse(out, l)
				require.NoError(b, err)
			}
			require.Len(b, out, len(lines))

			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var n int
			for b.Loop() {
				p := m4dtimes.New(cfg)
				for _, l := range lines {
					out, _ = p.Parse(out[:0], l)
					n += len(out)
				}
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
