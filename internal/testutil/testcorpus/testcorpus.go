// Package testcorpus makes transcript trees for tests: generated sessions
// of every format (internal/testutil/corpusgen) and the shapes that real Claude
// Code folders hold and generators do not: compaction and side-question
// replays of main-transcript records, and stub files with nothing to
// count. Test-only: every helper takes a testing.TB and fails it on error.
package testcorpus

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/corpusgen"
)

// Generate writes a generated tree of about size bytes under a new
// temporary directory and returns it: mixed formats, with resumed and
// forked copies (30% of sessions), compaction and side-question replays
// beside every Claude Code session, and the history Claude Code writes
// again ([WriteRepeats]: second compactions, background copies).
func Generate(tb testing.TB, size int64, seed uint64) string {
	tb.Helper()
	dir := tb.TempDir()
	_, err := corpusgen.WriteTree(tb.Context(), corpusgen.TreeConfig{
		Dir: dir, Bytes: size, Seed: seed, ResumeRate: 0.3,
		MinSessionBytes: 20 << 10, MaxSessionBytes: 300 << 10,
	})
	require.NoError(tb, err)
	require.Positive(tb, WriteReplays(tb, dir))
	WriteRepeats(tb, dir)
	return dir
}

// WriteReplays adds, beside every Claude Code session file under dir, a
// compaction file and a side-question file that replay the first records
// of the main transcript as sidechain lines with the same uuids and
// timestamps, as Claude Code 2.1 writes them
// (<session>/subagents/agent-acompact-*.jsonl and
// agent-aside_question-*.jsonl). It returns the number of sessions given
// replays.
func WriteReplays(tb testing.TB, dir string) int {
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
