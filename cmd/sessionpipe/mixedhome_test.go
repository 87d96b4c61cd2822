package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/schema"
)

// TestSessions_MixedHome: one home directory holding every agent that has
// a well-known place, each where the agent keeps it (JSONL transcripts,
// whole-file documents and SQLite databases side by side). `sessions`
// with no PATH counts every agent in one command, and each session is the
// one `sessions` gives for the agent's files alone: nothing left out,
// nothing counted twice or under another agent.
//
// Fluux Agent and m4dtimes keep their transcripts where their deployment
// puts them, and OpenClaw's trajectories where OPENCLAW_TRAJECTORY_DIR
// says: no place under the home is theirs, so they are read from a PATH.
func TestSessions_MixedHome(t *testing.T) {
	home := t.TempDir()
	for _, k := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_AGENT_DIR", "OPENCLAW_TRAJECTORY_DIR", "GEMINI_CLI_HOME",
		"COPILOT_HOME", "AMP_DATA_DIR", "DROID_SESSIONS_DIR", "CODEBUFF_DATA_DIR", "GROK_HOME", "QWEN_HOME", "QWEN_RUNTIME_DIR",
		"KIMI_SHARE_DIR", "OPENCODE_DATA_DIR", "XDG_DATA_HOME", "KILO_DATA_DIR", "GOOSE_PATH_ROOT", "HERMES_HOME"} {
		t.Setenv(k, "")
	}
	t.Setenv("HOME", home)

	// Each agent's own copy of its files (or directory), for `sessions`
	// on it alone, and where the agent keeps it under the home.
	type placed struct {
		format schema.Format
		alone  string // a directory holding only this agent's files, laid out as in the home
		inHome string // that directory's place under the home
	}
	var agents []placed
	lay := func(format schema.Format, inHome string, files map[string]string) {
		alone := filepath.Join(t.TempDir(), filepath.FromSlash(inHome))
		for rel, src := range files {
			data, err := os.ReadFile(src)
			require.NoError(t, err)
			dst := filepath.Join(alone, filepath.FromSlash(rel))
			require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
			require.NoError(t, os.WriteFile(dst, data, 0o644))
		}
		agents = append(agents, placed{format, alone, inHome})
	}
	formats := "../../pipeline/formats/"
	lay(schema.FormatClaudeCode, ".claude/projects", map[string]string{
		"project-alpha/chat.jsonl": filepath.Join(corpus, "claude-code/ccusage/projects/project-alpha/session-alpha/chat.jsonl"),
	})
	lay(schema.FormatCodex, ".codex/sessions", map[string]string{
		"2026/02/23/rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl": filepath.Join(corpus,
			"codex/localpush/sessions/rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl"),
	})
	lay(schema.FormatPi, ".pi/agent/sessions", map[string]string{
		"--home-dev--/compact.jsonl": filepath.Join(corpus, "pi/pi-mono/compact.jsonl"),
	})
	lay(schema.FormatGeminiCLI, ".gemini/tmp/5f1c/chats", map[string]string{
		"session-2026-05-01T10-00-aaaa.jsonl": formats + "gemini/testdata/session/input.jsonl",
		"session-2026-04-01T10-00-bbbb.json":  formats + "gemini/testdata/document/input.json",
	})
	lay(schema.FormatCopilot, ".copilot/session-state", map[string]string{
		"6a1e0c52-legs/events.jsonl": formats + "copilot/testdata/legs/input.jsonl",
	})
	lay(schema.FormatAmp, ".local/share/amp/threads", map[string]string{
		"T-0001.json": formats + "amp/testdata/thread/input.json",
	})
	lay(schema.FormatDroid, ".factory/sessions", map[string]string{
		"-home-dev-shop/d1.settings.json": formats + "droid/testdata/settings/input.json",
	})
	lay(schema.FormatCodebuff, ".config/manicode/projects", map[string]string{
		"shop/chats/2026-05-01T10-00-00.000Z/chat-messages.json": formats + "codebuff/testdata/document/input.json",
	})
	lay(schema.FormatGrok, ".grok/sessions", map[string]string{
		"%2Fhome%2Fdev%2Fshop/g1/updates.jsonl": formats + "grok/testdata/turns/input.jsonl",
	})
	lay(schema.FormatQwen, ".qwen/projects", map[string]string{
		"-home-dev-shop/chats/q1.jsonl": formats + "qwen/testdata/session/input.jsonl",
	})
	lay(schema.FormatKimi, ".kimi/sessions", map[string]string{
		"3f2a9c/sess-1/wire.jsonl":                  formats + "kimi/testdata/turns/input.jsonl",
		"3f2a9c/sess-1/subagents/a7f3c2/wire.jsonl": formats + "kimi/testdata/subagent/input.jsonl",
	})
	lay(schema.FormatOpenCode, ".local/share/opencode", map[string]string{
		"opencode.db": filepath.Join(openCodeDB(t, opencodeCases+"/session/input.jsonl"), "opencode.db"),
	})
	lay(schema.FormatKilo, ".local/share/kilo", map[string]string{
		"kilo.db": filepath.Join(kiloDB(t), "kilo.db"),
	})
	lay(schema.FormatGoose, ".local/share/goose/sessions", map[string]string{
		"sessions.db": filepath.Join(gooseDB(t), "data", "sessions", "sessions.db"),
	})
	lay(schema.FormatHermes, ".hermes", map[string]string{
		"state.db": filepath.Join(hermesHome(t, t.TempDir()), "state.db"),
	})

	key := func(s index.Session) string { return fmt.Sprintf("%s/%s", s.Format, s.SessionID) }
	want := map[string]index.Session{}
	for _, a := range agents {
		alone := ours(t, a.alone)
		require.NotEmpty(t, alone, "%s alone", a.format)
		for _, s := range alone {
			require.Equal(t, a.format, s.Format, "%s alone", a.alone)
			want[key(s)] = s
		}
		require.NoError(t, os.CopyFS(filepath.Join(home, filepath.FromSlash(a.inHome)), os.DirFS(a.alone)))
	}

	got := map[string]index.Session{}
	var seen []schema.Format
	for _, s := range ours(t) { // no PATH: the well-known places under $HOME
		require.NotContains(t, got, key(s), "a session once")
		got[key(s)] = s
		if !slices.Contains(seen, s.Format) {
			seen = append(seen, s.Format)
		}
	}
	for _, a := range agents {
		require.Contains(t, seen, a.format, "every agent of the home counted")
	}
	require.Len(t, got, len(want))
	for k, w := range want {
		g, ok := got[k]
		require.True(t, ok, "%s counted in the home", k)
		require.Equal(t, [6]int64{w.APICalls, w.InputTokens, w.OutputTokens, w.CacheReadTokens, w.CacheWriteTokens, w.Turns},
			[6]int64{g.APICalls, g.InputTokens, g.OutputTokens, g.CacheReadTokens, g.CacheWriteTokens, g.Turns}, k)
		require.InDelta(t, w.CostUSD, g.CostUSD, 1e-9, k)
	}
}
