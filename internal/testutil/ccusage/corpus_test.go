package ccusage

import (
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/corpus-*.json from ccusage's output")

// corpusDir is the shared sample transcripts, relative to this package.
const corpusDir = "../../../testdata/corpus"

// corpusFiles returns the .jsonl files under the given corpus
// subdirectories, sorted.
func corpusFiles(tb testing.TB, dirs ...string) []string {
	tb.Helper()
	var files []string
	for _, d := range dirs {
		err := filepath.WalkDir(filepath.Join(corpusDir, d), func(path string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() && strings.HasSuffix(path, ".jsonl") {
				files = append(files, path)
			}
			return err
		})
		require.NoError(tb, err)
	}
	require.NotEmpty(tb, files, "no transcripts under %v", dirs)
	return files
}

// assertConsistent checks what must hold for any ccusage report: every
// session has usage and a Total that is the sum of its four counters (for
// Codex at least that sum), the
// sessions add up to ccusage's totals, and each model breakdown adds up to
// its session.
func assertConsistent(t *testing.T, kind Kind, rep Report) {
	t.Helper()
	for _, s := range rep.Sessions {
		assert.Positive(t, s.Total, "session %s total", s.ID)
		if sum := s.Input + s.Output + s.CacheRead + s.CacheWrite; kind == Codex {
			// Codex: ccusage keeps the log's total_tokens deltas.
			assert.GreaterOrEqual(t, s.Total, sum, "session %s: total covers the counters", s.ID)
		} else {
			assert.Equal(t, sum, s.Total, "session %s: total is the sum of the counters", s.ID)
		}
		assert.GreaterOrEqual(t, s.CostUSD, 0.0, "session %s cost", s.ID)
		assert.LessOrEqual(t, s.Reasoning, s.Output, "session %s: reasoning is part of output", s.ID)
		var b Usage
		for _, m := range s.Breakdown {
			b.Input += m.Input
			b.Output += m.Output
			b.CacheRead += m.CacheRead
			b.CacheWrite += m.CacheWrite
		}
		if len(s.Breakdown) > 0 { // "<synthetic>" responses have none
			assert.Equal(t, [4]int64{s.Input, s.Output, s.CacheRead, s.CacheWrite},
				[4]int64{b.Input, b.Output, b.CacheRead, b.CacheWrite}, "session %s: model breakdown sums to the session", s.ID)
		}
	}
	sum := Sum(rep.Sessions)
	assert.InDelta(t, rep.Totals.CostUSD, sum.CostUSD, 1e-9*(1+rep.Totals.CostUSD), "sum of session costs = total cost")
	sum.CostUSD = rep.Totals.CostUSD
	if rep.Totals.Total == 0 && sum.Total != 0 { // codex and the others both print totalTokens; keep the check honest
		t.Errorf("ccusage printed no totalTokens but sessions sum to %d", sum.Total)
	}
	assert.Equal(t, rep.Totals, sum, "sum of sessions = ccusage totals")
}

// checkGolden compares rep with testdata/corpus-<kind>.json, rewriting it
// under -update.
func checkGolden(t *testing.T, kind Kind, rep Report) {
	t.Helper()
	got, err := json.MarshalIndent(rep, "", "  ")
	require.NoError(t, err)
	got = append(got, '\n')
	path := filepath.Join("testdata", "corpus-"+string(kind)+".json")
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test ./internal/ccusage -run Corpus -update")
	require.JSONEq(t, string(want), string(got), "ccusage %s report differs from %s", kind, path)
}

func TestSessions_Corpus(t *testing.T) {
	tests := []struct {
		name  string
		kind  Kind
		dirs  []string
		wantN int // sessions ccusage reports
	}{
		// 15 files: sample_session.jsonl has no usage and the two
		// claude-code-log files are skipped (see TestQuirks), the two
		// spotter subagent files count as session 258c7280-….
		{name: "Claude", kind: Claude, dirs: []string{"claude-code"}, wantN: 11},
		{name: "Codex", kind: Codex, dirs: []string{"codex"}, wantN: 8},
		{name: "Pi", kind: Pi, dirs: []string{"pi/pi-mono", "pi/openclaw"}, wantN: 4},
		{name: "OpenClaw", kind: OpenClaw, dirs: []string{"pi/openclaw"}, wantN: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := Layout(t, tt.kind, corpusFiles(t, tt.dirs...))
			rep := MustRun(t, tt.kind, root)
			require.Len(t, rep.Sessions, tt.wantN)
			assert.Positive(t, rep.Totals.Total)
			assert.Positive(t, rep.Totals.CostUSD)
			assertConsistent(t, tt.kind, rep)
			checkGolden(t, tt.kind, rep)

			// The helpers give the same numbers as MustRun.
			assert.Equal(t, rep.Sessions, Sessions(t, tt.kind, root))
			assert.Equal(t, rep.Totals, Totals(t, tt.kind, root))
		})
	}
}
