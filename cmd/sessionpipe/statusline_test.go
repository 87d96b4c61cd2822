package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/cmd/internal/top"
	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
)

// recentSession writes a Claude Code session under home's well-known
// location with one priced call at each of the times given, and returns
// its path.
func recentSession(t *testing.T, home, id string, times ...time.Time) string {
	t.Helper()
	return writeTranscript(t, filepath.Join(home, ".claude", "projects", "p1", id+".jsonl"), string(recentSessionBytes(id, times...)))
}

// recentSessionBytes is a Claude Code session with one priced call at
// each of the times given.
func recentSessionBytes(id string, times ...time.Time) []byte {
	var b strings.Builder
	for i, ts := range times {
		stamp := ts.UTC().Format("2006-01-02T15:04:05.000Z")
		fmt.Fprintf(&b, `{"type":"user","uuid":"%s-u%d","sessionId":%q,"timestamp":%q,"message":{"role":"user","content":"go on"}}`+"\n", id, i, id, stamp)
		fmt.Fprintf(&b, `{"type":"assistant","uuid":"%s-a%d","parentUuid":"%s-u%d","sessionId":%q,"timestamp":%q,"requestId":"req_%s_%d","message":{"id":"msg_%s_%d","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":%d,"output_tokens":%d,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}}`+"\n",
			id, i, id, i, id, stamp, id, i, id, i, 1000*(i+1), 500*(i+1))
	}
	return []byte(b.String())
}

// The status line's figures from the files: the session's cost is that of
// `sessions`, today's that of `daily` for today, the block's that of
// `blocks --active`; a file last written before the day and the block is
// not read. From a running indexer the figures are the same.
func TestStatusline_FilesAndIndexer(t *testing.T) {
	bin := buildE2EBinary(t) // before HOME changes: the go command's caches are under it
	home := t.TempDir()
	for _, k := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_AGENT_DIR", "COPILOT_HOME", "GROK_HOME", "QWEN_HOME", "QWEN_RUNTIME_DIR", "KIMI_SHARE_DIR", "OPENCODE_DATA_DIR", "XDG_DATA_HOME", "GOOSE_PATH_ROOT"} {
		t.Setenv(k, "")
	}
	t.Setenv("HOME", home)
	now := time.Now().UTC()
	// Calls within the last hour: one block, whatever the hour, in both
	// modes (the indexer knows calls to the hour).
	path := recentSession(t, home, "s-now", now.Add(-50*time.Minute), now.Add(-30*time.Minute), now.Add(-5*time.Minute))
	// An older session, its file last written two days ago: not read.
	old := recentSession(t, home, "s-old", now.Add(-49*time.Hour))
	require.NoError(t, os.Chtimes(old, now.Add(-48*time.Hour), now.Add(-48*time.Hour)))

	in := hookInput{SessionID: "s-now", TranscriptPath: path}
	in.Model.DisplayName = "Sonnet"
	files, err := statusFromFiles(t.Context(), in, now, time.UTC, price.Default(), os.Getenv)
	require.NoError(t, err)

	want := ours(t, path)
	require.Len(t, want, 1)
	require.NotNil(t, files.Session)
	require.InDelta(t, want[0].CostUSD, *files.Session, 1e-9)
	require.Positive(t, *files.Session)
	day := ourCalendar(t, "daily", "UTC", path, old)
	var today float64
	for _, r := range day.Rows {
		if r.Period == now.Format(time.DateOnly) {
			today = r.CostUSD
		}
	}
	require.InDelta(t, today, files.Today, 1e-9)
	require.NotNil(t, files.Block)
	require.True(t, files.Block.Active)
	require.InDelta(t, want[0].CostUSD, files.Block.CostUSD, 1e-9, "the three calls are the block's")
	require.Equal(t, int64(3), files.Block.Calls)

	line := statusLine(in, files, now)
	require.True(t, strings.HasPrefix(line, "Sonnet · session $"+cli.Dollars(*files.Session, false)+" · today $"), line)
	require.Contains(t, line, " left, $")

	// The same from a running indexer.
	rules := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(rules, []byte("rules: []\n"), 0o644))
	r := startRun(t, bin, t.TempDir(), rules, filepath.Join(home, ".claude", "projects"))
	r.waitOffline(t, bin, "status line data", path, old)
	cfg := top.Config{API: r.api}
	var live statusFigures
	natstest.CheckFor(t, time.Minute, 100*time.Millisecond, func() error {
		live, err = statusFromIndexer(t.Context(), cfg, in, now, time.UTC)
		return err
	})
	require.NotNil(t, live.Session, "%v", live.SessionErr)
	require.InDelta(t, *files.Session, *live.Session, 1e-9)
	require.InDelta(t, files.Today, live.Today, 1e-9)
	require.NotNil(t, live.Block)
	require.Equal(t, files.Block.Start, live.Block.Start)
	require.InDelta(t, files.Block.CostUSD, live.Block.CostUSD, 1e-9)

	// The command itself, reading the hook's JSON; -api "" reads the files.
	var stdout, stderr bytes.Buffer
	hook, err := json.Marshal(map[string]any{"session_id": "s-now", "transcript_path": path, "model": map[string]string{"display_name": "Sonnet"}})
	require.NoError(t, err)
	require.NoError(t, runStatusline(t.Context(), []string{"-api", "", "-timezone", "UTC"}, bytes.NewReader(hook), &stdout, &stderr))
	require.True(t, strings.HasPrefix(stdout.String(), "Sonnet · session $"), stdout.String())
	require.Equal(t, 1, strings.Count(stdout.String(), "\n"))
	err = runStatusline(t.Context(), []string{"-api", ""}, strings.NewReader("not json"), &stdout, &stderr)
	require.ErrorContains(t, err, "not the status line hook's JSON")
}

// BenchmarkStatusline_Files times the status line read from the files on
// a history of 5,000 sessions (about 100 MB) of which one was written in
// the last hour: the cost is the globbing and a stat of each file, and
// reading the recent one, not the history.
//
//	go test -run '^$' -bench Statusline ./cmd/sessionpipe
func BenchmarkStatusline_Files(b *testing.B) {
	home := b.TempDir()
	b.Setenv("HOME", home)
	for _, k := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_AGENT_DIR", "COPILOT_HOME", "GROK_HOME", "QWEN_HOME", "QWEN_RUNTIME_DIR", "KIMI_SHARE_DIR", "OPENCODE_DATA_DIR", "XDG_DATA_HOME", "GOOSE_PATH_ROOT"} {
		b.Setenv(k, "")
	}
	now := time.Now().UTC()
	old := now.Add(-30 * 24 * time.Hour)
	one := recentSessionBytes("s-old", old, old.Add(time.Minute), old.Add(2*time.Minute))
	body := bytes.Repeat(one, 40) // ~20 KB a session
	for i := range 5000 {
		p := filepath.Join(home, ".claude", "projects", fmt.Sprintf("p%d", i%50), fmt.Sprintf("s%d.jsonl", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			b.Fatal(err)
		}
	}
	path := filepath.Join(home, ".claude", "projects", "p0", "now.jsonl")
	if err := os.WriteFile(path, recentSessionBytes("s-now", now.Add(-30*time.Minute), now.Add(-5*time.Minute)), 0o644); err != nil {
		b.Fatal(err)
	}
	in := hookInput{SessionID: "s-now", TranscriptPath: path}
	b.ReportAllocs()
	for b.Loop() {
		f, err := statusFromFiles(b.Context(), in, now, time.UTC, price.Default(), os.Getenv)
		if err != nil || f.Session == nil || f.Block == nil {
			b.Fatalf("%+v %v", f, err)
		}
	}
}
