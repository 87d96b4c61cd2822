package index_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/benchmarks/corpusgen"
	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
)

// readFiles decodes every transcript under roots into one entry list per
// file, in file order.
func readFiles(tb testing.TB, roots ...string) [][]schema.Entry {
	tb.Helper()
	found, err := formats.Walk(roots, func(err error) { tb.Fatal(err) })
	require.NoError(tb, err)
	var out [][]schema.Entry
	for _, f := range found {
		if f.Meta {
			continue
		}
		var es []schema.Entry
		_, err := formats.ReadFile(context.Background(), f.Path, formats.ReadConfig{Config: parse.Config{Host: "h", Text: true}},
			func(e *schema.Entry) { es = append(es, *e) }, func(error) {})
		if err != nil {
			continue // not a transcript
		}
		out = append(out, es)
	}
	require.NotEmpty(tb, out)
	return out
}

// addShuffled adds the files in a random order, interleaving the lines of
// different files at random; each file's own lines stay in order, as a
// tailer following several files delivers them.
func addShuffled(a *index.Aggregator, files [][]schema.Entry, rng *rand.Rand) {
	order := rng.Perm(len(files))
	pos := make([]int, len(files))
	live := append([]int(nil), order...)
	for len(live) > 0 {
		k := rng.IntN(len(live))
		// Runs of a few lines from one file, as reads deliver them.
		f := live[k]
		for n := 1 + rng.IntN(8); n > 0 && pos[f] < len(files[f]); n-- {
			a.Add(&files[f][pos[f]])
			pos[f]++
		}
		if pos[f] == len(files[f]) {
			live = append(live[:k], live[k+1:]...)
		}
	}
}

// writeReplays adds, beside every Claude Code session file under dir, a
// compaction file and a side-question file that replay the first records
// of the main transcript as sidechain lines with the same uuids and
// timestamps, as Claude Code 2.1 writes them
// (<session>/subagents/agent-acompact-*.jsonl and
// agent-aside_question-*.jsonl).
func writeReplays(tb testing.TB, dir string) int {
	tb.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") || strings.Contains(path, "subagents") {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		var lines []map[string]any
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() && len(lines) < 300 {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			if t, _ := m["type"].(string); (t == "user" || t == "assistant") && m["uuid"] != nil {
				lines = append(lines, m)
			}
		}
		if len(lines) == 0 {
			return sc.Err()
		}
		sub := filepath.Join(strings.TrimSuffix(path, ".jsonl"), "subagents")
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return err
		}
		for i, kind := range []string{"acompact", "aside_question"} {
			agent := fmt.Sprintf("%s-%06x", kind, n*2+i)
			var b strings.Builder
			for _, m := range lines[:len(lines)/(i+1)] {
				m["isSidechain"] = true
				m["agentId"] = agent
				line, err := json.Marshal(m)
				if err != nil {
					return err
				}
				b.Write(line)
				b.WriteByte('\n')
			}
			if err := os.WriteFile(filepath.Join(sub, "agent-"+agent+".jsonl"), []byte(b.String()), 0o644); err != nil {
				return err
			}
		}
		n++
		return nil
	})
	require.NoError(tb, err)
	return n
}

// TestAggregator_ArrivalOrderDoesNotMatter: the aggregates of a set of
// transcripts are the same for every order in which their files, and the
// lines of different files, arrive: on every sample of testdata, and on
// generated sessions with resumed and forked copies and with compaction
// and side-question replays.
func TestAggregator_ArrivalOrderDoesNotMatter(t *testing.T) {
	gen := t.TempDir()
	_, err := corpusgen.WriteTree(t.Context(), corpusgen.TreeConfig{
		Dir: gen, Bytes: 3 << 20, Seed: 7, ResumeRate: 0.3,
		MinSessionBytes: 20 << 10, MaxSessionBytes: 300 << 10,
	})
	require.NoError(t, err)
	require.Positive(t, writeReplays(t, gen))

	table := price.Default()
	for name, root := range map[string]string{"testdata": "../../testdata/corpus", "generated": gen} {
		t.Run(name, func(t *testing.T) {
			files := readFiles(t, root)
			a := index.New(index.Config{Pricer: table, Seed: 1})
			for _, es := range files {
				for i := range es {
					a.Add(&es[i])
				}
			}
			want := a.Sessions()
			require.NotEmpty(t, want)
			for seed := range uint64(12) {
				rng := rand.New(rand.NewPCG(seed, 99))
				// Another seed too: the outcome must not depend on the
				// fact keys' hash order either.
				b := index.New(index.Config{Pricer: table, Seed: seed + 2})
				addShuffled(b, files, rng)
				require.Equal(t, want, b.Sessions(), "arrival order %d", seed)
			}
		})
	}
}
