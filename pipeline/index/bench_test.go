package index_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/testutil/indextest"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/corpusgen"
	"github.com/sessionpipe/sessionpipe/internal/testutil/testcorpus"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
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
	files := indextest.ReadFiles(b, dir)
	var n int
	for _, f := range files {
		n += len(f)
	}
	table := price.Default()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		a := indextest.MustNew(b, index.Config{Pricer: table, Seed: 1})
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

// BenchmarkIndexer_Apply measures the indexer end to end: a stream
// pre-filled with the entries of a generated mixed corpus is consumed,
// decoded, applied to a stored Aggregator and committed, from a new state,
// by one indexer per iteration (in-process JetStream server).
func BenchmarkIndexer_Apply(b *testing.B) {
	benchIndexerApply(b, 1)
}

// BenchmarkIndexer_ApplyBatches is BenchmarkIndexer_Apply on batch
// messages of up to 256 entries, as the tailer publishes a backfill (its
// batches close at 512 KiB of lines; a Claude Code corpus averages about
// 200 entries per batch).
func BenchmarkIndexer_ApplyBatches(b *testing.B) {
	benchIndexerApply(b, 256)
}

func benchIndexerApply(b *testing.B, perBatch int) {
	dir := b.TempDir()
	_, err := corpusgen.WriteTree(b.Context(), corpusgen.TreeConfig{Dir: dir, Bytes: 32 << 20, Seed: 5, ResumeRate: 0.05})
	require.NoError(b, err)
	files := indextest.ReadFiles(b, dir)
	var entries []*schema.Entry
	for _, f := range files {
		for i := range f {
			entries = append(entries, &f[i])
		}
	}
	js := indextest.NewStream(b, bus.StreamConfig{})
	var last uint64
	if perBatch == 1 {
		last = indextest.Publish(b, js, entries)
	} else {
		last = indextest.PublishBatches(b, js, entries, perBatch)
	}
	pricer := price.Default() // parsed once, as a process does
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		ix, err := index.NewIndexer(index.IndexerConfig{JS: js, Dir: b.TempDir(), Name: fmt.Sprint("bench", i), Pricer: pricer})
		require.NoError(b, err)
		ctx, cancel := context.WithCancel(b.Context())
		done := make(chan error, 1)
		go func() { done <- ix.Run(ctx) }()
		for ix.Stats().Applied < last {
			select {
			case err := <-done:
				b.Fatal(err)
			case <-time.After(time.Millisecond):
			}
		}
		cancel()
		require.NoError(b, <-done)
	}
	b.ReportMetric(float64(len(entries))*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkAggregator_SharedEntries folds 2,000 copies of a 29-line Claude
// Code session, each under its own session id and file, into a fresh
// Aggregator: every fact occurs in 2,000 sessions (a tree of copies, or
// a hostile one). The cost per entry should not grow with the copies.
//
//	go test ./pipeline/index -run '^$' -bench SharedEntries -count 6
func BenchmarkAggregator_SharedEntries(b *testing.B) {
	orig := indextest.ReadFiles(b, "../../testdata/corpus/claude-code/claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl")
	const copies = 2000
	var all []schema.Entry
	for c := range copies {
		for _, e := range orig[0] {
			e.SessionID = fmt.Sprintf("%s-copy%04d", e.SessionID, c)
			e.Path = fmt.Sprintf("/copies/%04d/session.jsonl", c)
			all = append(all, e)
		}
	}
	table := price.Default()
	b.ReportAllocs()
	for b.Loop() {
		a := indextest.MustNew(b, index.Config{Pricer: table, Seed: 1})
		for i := range all {
			a.Add(&all[i])
		}
		if len(a.Sessions()) != copies {
			b.Fatal("sessions lost")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(len(all))/float64(b.N), "ns/entry")
}
