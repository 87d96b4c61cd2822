package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/ccusage"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
)

// The side-by-side tests run the tool users run today, ccusage 20.0.24
// (installed from npm by internal/testutil/ccusage), on the same transcripts as
// `sessionpipe sessions --json` and check that both give the same input,
// output, cache-read and cache-write totals and the same cost to the cent.
// Every difference is explained by a rule of ccusage's that DESIGN.md does
// not share, and each such rule is shown by its own case.

const corpus = "../../testdata/corpus"

// totals is what both tools are compared on.
type totals struct {
	Input, Output, CacheRead, CacheWrite int64
	CostUSD                              float64
}

func (t totals) minus(o totals) totals {
	return totals{t.Input - o.Input, t.Output - o.Output, t.CacheRead - o.CacheRead, t.CacheWrite - o.CacheWrite, t.CostUSD - o.CostUSD}
}

func fromCcusage(u ccusage.Usage) totals {
	return totals{u.Input, u.Output, u.CacheRead, u.CacheWrite, u.CostUSD}
}

func fromSessions(all []index.Session) totals {
	var t totals
	for _, s := range all {
		t.Input += s.InputTokens
		t.Output += s.OutputTokens
		t.CacheRead += s.CacheReadTokens
		t.CacheWrite += s.CacheWriteTokens
		t.CostUSD += s.CostUSD
	}
	return t
}

// requireSame asserts equal token totals and costs equal to the cent.
func requireSame(t *testing.T, want, got totals, msg string) {
	t.Helper()
	require.Equal(t, want.Input, got.Input, "%s: input", msg)
	require.Equal(t, want.Output, got.Output, "%s: output", msg)
	require.Equal(t, want.CacheRead, got.CacheRead, "%s: cache read", msg)
	require.Equal(t, want.CacheWrite, got.CacheWrite, "%s: cache write", msg)
	require.Equal(t, math.Round(want.CostUSD*100), math.Round(got.CostUSD*100), "%s: cost %.6f vs %.6f", msg, want.CostUSD, got.CostUSD)
	require.InDelta(t, want.CostUSD, got.CostUSD, 1e-6, "%s: cost", msg)
}

// ours runs `sessionpipe sessions --json` on paths.
func ours(t *testing.T, paths ...string) []index.Session {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), append([]string{"sessions", "--json", "-q"}, paths...), &stdout, &stderr)
	require.Equal(t, exitOK, code, "stderr: %s", stderr.String())
	var all []index.Session
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &all))
	return all
}

func corpusFiles(t *testing.T, dir string, skip ...string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(filepath.Join(corpus, dir), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		for _, s := range skip {
			if strings.Contains(path, s) || filepath.Base(path) == s {
				return nil
			}
		}
		files = append(files, path)
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

func TestSessions_SameTotalsAsCcusage(t *testing.T) {
	tests := []struct {
		name  string
		kind  ccusage.Kind
		dir   string
		skip  []string
		files func(t *testing.T) []string // our input, when it differs
	}{
		// claude-code-log's files are written with ": " between keys
		// and values; ccusage skips such lines silently (see
		// TestSessions_CcusageSkipsSpacedJSON), so they are compared
		// there, not here.
		{name: "ClaudeCode", kind: ccusage.Claude, dir: "claude-code", skip: []string{"claude-code-log"}},
		{name: "Codex", kind: ccusage.Codex, dir: "codex/localpush"},
		{name: "CodexFixtures", kind: ccusage.Codex, dir: "codex/ccusage/sessions/project-alpha"},
		{name: "OpenClaw", kind: ccusage.OpenClaw, dir: "pi/openclaw"},
		{name: "PiLargeSession", kind: ccusage.Pi, dir: "pi/pi-mono", skip: []string{"/compact.jsonl", "/session.jsonl"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := corpusFiles(t, tc.dir, tc.skip...)
			theirs := fromCcusage(ccusage.Totals(t, tc.kind, ccusage.Layout(t, tc.kind, files)))
			got := fromSessions(ours(t, files...))
			require.NotZero(t, got.Input+got.Output+got.CacheRead+got.CacheWrite, "nothing counted")
			requireSame(t, theirs, got, tc.name)
		})
	}
}

// pi files can hold two JSON objects on one line (a missing newline in
// real pi-mono sessions). ccusage drops such a line; sessionpipe reads
// both objects. With those lines split in two, ccusage agrees with
// sessionpipe's totals on the original files.
func TestSessions_CcusageDropsTwoObjectLines(t *testing.T) {
	for _, name := range []string{"session.jsonl", "compact.jsonl"} {
		t.Run(name, func(t *testing.T) {
			orig := filepath.Join(corpus, "pi/pi-mono", name)
			data, err := os.ReadFile(orig)
			require.NoError(t, err)
			fixed := bytes.ReplaceAll(data, []byte("}{\"type\""), []byte("}\n{\"type\""))
			require.NotEqual(t, len(data), len(fixed), "the file has a line with two objects")
			split := filepath.Join(t.TempDir(), "pi-mono", name)
			require.NoError(t, os.MkdirAll(filepath.Dir(split), 0o755))
			require.NoError(t, os.WriteFile(split, fixed, 0o644))

			got := fromSessions(ours(t, orig))
			onOriginal := fromCcusage(ccusage.Totals(t, ccusage.Pi, ccusage.Layout(t, ccusage.Pi, []string{orig})))
			onSplit := fromCcusage(ccusage.Totals(t, ccusage.Pi, ccusage.Layout(t, ccusage.Pi, []string{split})))
			requireSame(t, onSplit, got, "ccusage on the split file")
			lost := got.minus(onOriginal)
			require.Positive(t, lost.Output, "ccusage loses the calls of the two-object line")
			t.Logf("ccusage drops %+v on %s", lost, name)
		})
	}
}

// A Codex branch that copies its parent's token_count lines (ccusage's own
// fixture, issue #988) without naming the parent in a session_meta:
// ccusage counts the copied call in both files; sessionpipe counts it once,
// in the parent, by its usage key (timestamp and cumulative totals).
func TestSessions_CcusageCountsCodexBranchCopyTwice(t *testing.T) {
	dir := filepath.Join(corpus, "codex/ccusage/sessions/branch-history")
	parent := filepath.Join(dir, "2026-05-12T08-00-00-parent.jsonl")
	branch := filepath.Join(dir, "2026-05-12T08-02-00-branch.jsonl")
	theirs := fromCcusage(ccusage.Totals(t, ccusage.Codex, ccusage.Layout(t, ccusage.Codex, []string{parent, branch})))
	theirParent := fromCcusage(ccusage.Totals(t, ccusage.Codex, ccusage.Layout(t, ccusage.Codex, []string{parent})))
	got := fromSessions(ours(t, parent, branch))
	requireSame(t, theirParent, theirs.minus(got), "ccusage counts the parent's call once more")
}

// claude-code-log writes its transcripts with ": " between keys and values
// (Python's json.dumps default). ccusage's line pre-filter does not match
// such lines and skips them without a word; sessionpipe reads them.
func TestSessions_CcusageSkipsSpacedJSON(t *testing.T) {
	files := corpusFiles(t, "claude-code/claude-code-log")
	theirs := fromCcusage(ccusage.Totals(t, ccusage.Claude, ccusage.Layout(t, ccusage.Claude, files)))
	require.Zero(t, theirs, "ccusage reads nothing of these files")
	got := fromSessions(ours(t, files...))
	require.Positive(t, got.Input)

	// The same lines re-encoded compactly are read by ccusage, and agree.
	var compact []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var out bytes.Buffer
		for line := range bytes.Lines(data) {
			require.NoError(t, json.Compact(&out, bytes.TrimSpace(line)))
			out.WriteByte('\n')
		}
		rel, err := filepath.Rel(filepath.Join(corpus, "claude-code"), f)
		require.NoError(t, err)
		dst := filepath.Join(t.TempDir(), rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
		require.NoError(t, os.WriteFile(dst, out.Bytes(), 0o644))
		compact = append(compact, dst)
	}
	theirs = fromCcusage(ccusage.Totals(t, ccusage.Claude, ccusage.Layout(t, ccusage.Claude, compact)))
	requireSame(t, theirs, got, "compact re-encoding")
}

// A resumed Claude Code session replays the lines of the session it
// resumes (same uuid, message.id, requestId and timestamps, another
// sessionId). Both tools count the copies once, so the totals agree, but
// they attribute them differently: ccusage to the file whose path sorts
// first, sessionpipe to the session where they were first written
// (DESIGN.md: earliest timestamp; on a tie the session created first).
func TestSessions_ResumedCopiesAttribution(t *testing.T) {
	src := filepath.Join(corpus, "claude-code/spotter/tool_heavy.jsonl")
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	const origID, resumedID = "d6e0bada-1959-4eec-a9d2-0bfade768d8f", "00000000-resumed-session"
	require.True(t, bytes.Contains(data, []byte(origID)))

	dir := filepath.Join(t.TempDir(), "projects", "-home-user-project")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	orig := filepath.Join(dir, origID+".jsonl")
	require.NoError(t, os.WriteFile(orig, data, 0o644))
	// The resumed file sorts first by name, as "0…" < "d…".
	resumed := bytes.ReplaceAll(data, []byte(origID), []byte(resumedID))
	resumed = append(resumed, []byte(`{"type":"user","uuid":"r-u1","parentUuid":null,"sessionId":"`+resumedID+`","timestamp":"2026-02-12T09:00:00.000Z","message":{"role":"user","content":"continue"}}`+"\n"+
		`{"type":"assistant","uuid":"r-a1","parentUuid":"r-u1","sessionId":"`+resumedID+`","timestamp":"2026-02-12T09:00:05.000Z","requestId":"req_resumed_1","message":{"id":"msg_resumed_1","role":"assistant","model":"claude-opus-4-6","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":10,"output_tokens":20,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}}`+"\n")...)
	resumedPath := filepath.Join(dir, resumedID+".jsonl")
	require.NoError(t, os.WriteFile(resumedPath, resumed, 0o644))

	root := filepath.Dir(filepath.Dir(dir))
	report := ccusage.MustRun(t, ccusage.Claude, root)
	all := ours(t, orig, resumedPath)
	requireSame(t, fromCcusage(report.Totals), fromSessions(all), "totals")

	byID := map[string]index.Session{}
	for _, s := range all {
		byID[s.SessionID] = s
	}
	theirsByID := map[string]ccusage.Session{}
	for _, s := range report.Sessions {
		theirsByID[s.ID] = s
	}
	// sessionpipe: the original keeps its calls, the resumed session has
	// only its own.
	require.Equal(t, int64(10), byID[resumedID].InputTokens)
	require.Equal(t, int64(20), byID[resumedID].OutputTokens)
	require.Equal(t, fromSessions(ours(t, src)), fromSessions([]index.Session{byID[origID]}))
	// ccusage: the copies go to the file sorting first, the resumed one.
	require.Greater(t, theirsByID[resumedID].Input, int64(10))
	require.Zero(t, theirsByID[origID].Input+theirsByID[origID].Output)
}
