package index_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/benchmarks/corpusgen"
	"github.com/sessionpipe/sessionpipe/internal/testcorpus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
)

// BenchmarkAggregator_Add folds the entries of a generated mixed corpus
// (Claude Code, pi and Codex sessions with resumed and forked copies and
// compaction replays) into a fresh Aggregator per iteration, and takes the
// sessions once at the end, as `sessionpipe sessions` does.
func BenchmarkAggregator_Add(b *testing.B) {
	dir := b.TempDir()
	_, err := corpusgen.WriteTree(b.Context(), corpusgen.TreeConfig{Dir: dir, Bytes: 16 << 20, Seed: 3, ResumeRate: 0.05})
	require.NoError(b, err)
	testcorpus.WriteReplays(b, dir)
	files := readFiles(b, dir)
	var n int
	for _, f := range files {
		n += len(f)
	}
	table := price.Default()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		a := mustNew(b, index.Config{Pricer: table, Seed: 1})
		for _, es := range files {
			for i := range es {
				a.Add(&es[i])
			}
		}
		if len(a.Sessions()) == 0 {
			b.Fatal("no sessions")
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n)/float64(b.N), "ns/entry")
}
