package pi_test

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/pi"
)

func TestSniff(t *testing.T) {
	tests := []struct {
		name string
		line string
		want bool
	}{
		{"HeaderV3", `{"type":"session","version":3,"id":"8555a0a4","timestamp":"2026-03-08T12:15:35.580Z","cwd":"/x"}`, true},
		{"HeaderV1", `{"type":"session","id":"d703a1a9","timestamp":"2025-11-20T23:33:50.805Z","cwd":"/x","provider":"anthropic","modelId":"claude-sonnet-4-5","thinkingLevel":"off"}`, true},
		{"HeaderKeysLast", `{"cwd":"/x","id":"a","type":"session"}`, true},
		{"HeaderNoCwd", `{"type":"session","version":3,"id":"a","timestamp":"2026-03-08T12:15:35.580Z"}`, false},
		{"Fluux", `{"type":"session","version":1,"created":"2026-01-01T00:00:00Z","jid":"a@b","id":"x","cwd":"/"}`, false},
		{"M4dtimes", `{"type":"session","version":1,"id":"a","userId":"42","cwd":"/"}`, false},
		{"User", `{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi","timestamp":1}}`, true},
		{"ToolResult", `{"type":"message","message":{"role":"toolResult","toolCallId":"t","content":[]}}`, true},
		{"BashExecution", `{"type":"message","message":{"role":"bashExecution","command":"ls"}}`, true},
		{"Custom", `{"type":"message","message":{"role":"custom","customType":"x","content":"y"}}`, true},
		{"AssistantWithCacheRead", `{"type":"message","message":{"role":"assistant","content":[],"usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0}}}`, true},
		{"AssistantWithoutUsage", `{"type":"message","message":{"role":"assistant","content":[]}}`, false},
		{"ClaudeCode", `{"type":"assistant","sessionId":"s","uuid":"u","message":{"role":"assistant","usage":{"cacheRead":0}}}`, false},
		{"ClaudeCodeUser", `{"type":"user","sessionId":"s","uuid":"u","message":{"role":"user","content":"hi"}}`, false},
		{"Codex", `{"timestamp":"t","type":"session_meta","payload":{"id":"x","cwd":"/"}}`, false},
		{"OtherEntryType", `{"type":"model_change","id":"a","provider":"p","modelId":"m"}`, false},
		{"Truncated", `{"type":"session","id":"a","cwd":"/x"`, false},
		{"NotObject", `["type","session"]`, false},
		{"Empty", ``, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, pi.Sniff([]byte(tt.line)), "Sniff(%s)", tt.line)
		})
	}
}

func TestSniff_Corpus(t *testing.T) {
	for _, c := range []string{"pi-mono-compact", "pi-mono-session", "pi-mono-large-session", "openclaw-8555a0a4", "v2-header", "v3-header"} {
		f, err := os.Open(filepath.Join("testdata", c, "input.jsonl"))
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		require.True(t, sc.Scan())
		assert.True(t, pi.Sniff(sc.Bytes()), "first line of %s", c)
		require.NoError(t, f.Close())
	}
}

func TestSniff_NoAllocs(t *testing.T) {
	line := []byte(`{"type":"message","message":{"role":"assistant","content":[],"usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0}}}`)
	assert.Zero(t, testing.AllocsPerRun(100, func() { pi.Sniff(line) }))
}
