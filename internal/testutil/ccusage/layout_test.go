package ccusage

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlace(t *testing.T) {
	tests := []struct {
		name string
		kind Kind
		file string
		want string
	}{
		{"ClaudeFlat", Claude, "corpus/claude-code/spotter/short.jsonl", "projects/spotter/short.jsonl"},
		{"ClaudeSubagent", Claude, "corpus/spotter/258c/subagents/agent-a.jsonl", "projects/spotter/258c/subagents/agent-a.jsonl"},
		{"ClaudeKeepsProjects", Claude, "x/projects/project-alpha/session-alpha/chat.jsonl", "projects/project-alpha/session-alpha/chat.jsonl"},
		{"ClaudeDeepProjectsIgnored", Claude, "/home/u/projects/repo/testdata/corpus/spotter/short.jsonl", "projects/spotter/short.jsonl"},
		{"CodexRolloutDated", Codex, "dir/rollout-2026-02-23T12-40-23-019c.jsonl", "sessions/2026/02/23/rollout-2026-02-23T12-40-23-019c.jsonl"},
		{"CodexKeepsSessions", Codex, "codex/ccusage/sessions/branch-history/b.jsonl", "sessions/branch-history/b.jsonl"},
		{"CodexOther", Codex, "dir/x.jsonl", "sessions/x.jsonl"},
		{"PiProjectFromDir", Pi, "corpus/pi/pi-mono/compact.jsonl", "sessions/pi-mono/compact.jsonl"},
		{"PiKeepsSessions", Pi, "h/.pi/agent/sessions/--home-u--/2026_abc.jsonl", "sessions/--home-u--/2026_abc.jsonl"},
		{"OpenClawAgentFromDir", OpenClaw, "corpus/pi/openclaw/8555.jsonl", "agents/openclaw/sessions/8555.jsonl"},
		{"OpenClawKeepsAgents", OpenClaw, "h/.openclaw/agents/main/sessions/8555.jsonl", "agents/main/sessions/8555.jsonl"},
		{"GeminiProjectFromDir", Gemini, "testdata/session/input.jsonl", "tmp/session/chats/input.jsonl"},
		{"GeminiKeepsTmp", Gemini, "h/.gemini/tmp/3a7b/chats/session-x.jsonl", "tmp/3a7b/chats/session-x.jsonl"},
		{"GeminiKeepsSubagent", Gemini, "h/.gemini/tmp/3a7b/chats/p1/s2.jsonl", "tmp/3a7b/chats/p1/s2.jsonl"},
		{"CopilotKeepsSessionState", Copilot, "h/.copilot/session-state/abc/events.jsonl", "session-state/abc/events.jsonl"},
		{"CopilotSessionFromDir", Copilot, "testdata/legs/input.jsonl", "session-state/legs/events.jsonl"},
		{"AmpThread", Amp, "h/.local/share/amp/threads/T-1.json", "threads/T-1.json"},
		{"AmpThreadFromDir", Amp, "testdata/ledger/input.json", "threads/ledger/input.json"},
		{"DroidKeepsProject", Droid, "h/.factory/sessions/-home-p/s.settings.json", "sessions/-home-p/s.settings.json"},
		{"DroidProjectFromDir", Droid, "testdata/settings/s.settings.json", "sessions/settings/s.settings.json"},
		{"GrokKeepsSessions", Grok, "h/.grok/sessions/%2Fw/abc/updates.jsonl", "sessions/%2Fw/abc/updates.jsonl"},
		{"GrokSessionFromDir", Grok, "testdata/turns/input.jsonl", "sessions/%2Ftestdata/turns/updates.jsonl"},
		{"CodebuffKeepsProjects", Codebuff, "h/.config/manicode/projects/p/chats/c1/chat-messages.json", "projects/p/chats/c1/chat-messages.json"},
		{"CodebuffChatFromDir", Codebuff, "a/b/x.json", "projects/a/chats/b/chat-messages.json"},
		{"QwenKeepsProjects", Qwen, "h/.qwen/projects/-w/chats/s.jsonl", "projects/-w/chats/s.jsonl"},
		{"QwenProjectFromDir", Qwen, "testdata/session/input.jsonl", "projects/session/chats/input.jsonl"},
		{"KimiKeepsSessions", Kimi, "h/.kimi/sessions/g/s/wire.jsonl", "sessions/g/s/wire.jsonl"},
		{"KimiSessionFromDir", Kimi, "testdata/turns/input.jsonl", "sessions/testdata/turns/wire.jsonl"},
		{"OpenCodeDatabase", OpenCode, "x/opencode-beta.db", "opencode.db"},
		{"OpenCodeKeepsStorage", OpenCode, "h/.local/share/opencode/storage/message/ses_a/msg_1.json", "storage/message/ses_a/msg_1.json"},
		{"OpenCodeSessionFromDir", OpenCode, "testdata/ses_a/msg_1.json", "storage/message/ses_a/msg_1.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Place(tt.kind, filepath.FromSlash(tt.file))
			require.NoError(t, err)
			assert.Equal(t, filepath.FromSlash(tt.want), got, "Place(%s, %q)", tt.kind, tt.file)
		})
	}
}

func TestPlace_Errors(t *testing.T) {
	tests := []struct {
		name string
		kind Kind
		file string
		want error
	}{
		{"UnknownKind", Kind("antigravity"), "a/b.jsonl", ErrUnknownKind},
		{"ClaudeNoDir", Claude, "b.jsonl", ErrLayout},
		{"ClaudeSubagentTooShallow", Claude, "subagents/a.jsonl", ErrLayout},
		{"PiNoDir", Pi, "b.jsonl", ErrLayout},
		{"OpenClawParentDir", OpenClaw, "../b.jsonl", ErrLayout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Place(tt.kind, tt.file)
			require.ErrorIs(t, err, tt.want, "Place(%s, %q)", tt.kind, tt.file)
		})
	}
}

func TestLayoutInto(t *testing.T) {
	src := t.TempDir()
	a := filepath.Join(src, "p", "s.jsonl")
	b := filepath.Join(src, "q", "p", "s.jsonl")
	for _, f := range []string{a, b} {
		require.NoError(t, os.MkdirAll(filepath.Dir(f), 0o755))
		require.NoError(t, os.WriteFile(f, []byte(f+"\n"), 0o644))
	}

	t.Run("Copies", func(t *testing.T) {
		root := Layout(t, Claude, []string{a})
		got, err := os.ReadFile(filepath.Join(root, "projects", "p", "s.jsonl"))
		require.NoError(t, err)
		assert.Equal(t, a+"\n", string(got))
	})
	t.Run("Collision", func(t *testing.T) {
		err := LayoutInto(t.TempDir(), Claude, []string{a, b})
		require.ErrorIs(t, err, ErrLayout)
	})
	t.Run("MissingFile", func(t *testing.T) {
		err := LayoutInto(t.TempDir(), Claude, []string{filepath.Join(src, "p", "none.jsonl")})
		require.ErrorIs(t, err, os.ErrNotExist)
	})
}

func TestKind_EnvVar(t *testing.T) {
	tests := []struct {
		kind      Kind
		name, val string
	}{
		{Claude, "CLAUDE_CONFIG_DIR", "/r"},
		{Codex, "CODEX_HOME", "/r"},
		{Pi, "PI_AGENT_DIR", filepath.Join("/r", "sessions")},
		{OpenClaw, "OPENCLAW_DIR", "/r"},
		{Gemini, "GEMINI_DATA_DIR", filepath.Join("/r", "tmp")},
		{Copilot, "COPILOT_HOME", "/r"},
		{Amp, "AMP_DATA_DIR", "/r"},
		{Droid, "DROID_SESSIONS_DIR", "/r/sessions"},
		{Grok, "GROK_HOME", "/r"},
		{Codebuff, "CODEBUFF_DATA_DIR", "/r"},
		{Qwen, "QWEN_DATA_DIR", "/r"},
		{Kimi, "KIMI_DATA_DIR", "/r"},
		{OpenCode, "OPENCODE_DATA_DIR", "/r"},
		{Goose, "GOOSE_PATH_ROOT", "/r"},
		{Hermes, "HERMES_HOME", "/r"},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			name, val, err := tt.kind.EnvVar("/r")
			require.NoError(t, err)
			assert.Equal(t, [2]string{tt.name, tt.val}, [2]string{name, val})
		})
	}
	_, _, err := Kind("").EnvVar("/r")
	require.ErrorIs(t, err, ErrUnknownKind)
}
