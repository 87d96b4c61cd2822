package m4dtimes_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/m4dtimes"
)

func TestSniff(t *testing.T) {
	tests := []struct {
		name string
		line string
		want bool
	}{
		{"Header", header, true},
		{"HeaderREADMEOrder", `{"type":"session","version":1,"id":"a1b2c3d4","userId":7756297856,"timestamp":"2026-02-24T23:14:59Z"}`, true},
		{"HeaderHugeUser", `{"type":"session","version":1,"id":"a1b2c3d4","timestamp":"2026-02-24T23:14:59Z","userId":9223372036854775807}`, true},
		{"UserText", userLine, true},
		{"ToolUse", toolUse, true},
		{"ToolResult", toolResult, true},
		{"Reply", reply, true},
		{"AfterRestart", `{"type":"message","id":"99999999","timestamp":"2026-02-25T08:00:00Z","message":{"role":"user","content":[{"type":"text","text":"again"}]}}`, true},
		{"HeaderUpperHex", `{"type":"session","version":1,"id":"A1B2C3D4","timestamp":"2026-02-24T23:14:59Z","userId":1}`, false},
		{"HeaderLongID", `{"type":"session","version":1,"id":"a1b2c3d4e5","timestamp":"2026-02-24T23:14:59Z","userId":1}`, false},
		{"HeaderUserString", `{"type":"session","version":1,"id":"a1b2c3d4","timestamp":"2026-02-24T23:14:59Z","userId":"1"}`, false},
		{"PiHeader", `{"type":"session","version":3,"id":"a1b2c3d4","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u"}`, false},
		{"FluuxHeader", `{"type":"session","version":1,"created":"2025-02-08T19:00:00Z","jid":"alice@example.com"}`, false},
		{"FluuxMessage", `{"type":"message","role":"user","content":"Hello!","msg_id":"abc-123"}`, false},
		{"PiUser", `{"type":"message","id":"e5f6a7b8","parentId":"a1b2c3d4","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1767225600000}}`, false},
		{"PiAssistant", `{"type":"message","id":"e5f6a7b8","parentId":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"t","name":"bash","arguments":{}}],"usage":{"input":1,"output":1}}}`, false},
		{"CamelUsage", `{"type":"message","id":"e5f6a7b8","message":{"role":"assistant","content":[],"usage":{"inputTokens":1}}}`, false},
		{"ToolUseInline", `{"type":"message","id":"e5f6a7b8","message":{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"x","input":{}}]}}`, false},
		{"ClaudeUser", `{"type":"user","uuid":"u","sessionId":"s","message":{"role":"user","content":"hi"}}`, false},
		{"NotJSON", `{"type":"session","id":"a1b2c3d4","userId":`, false},
		{"Empty", ``, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, m4dtimes.Sniff([]byte(tt.line)), "Sniff(%q)", tt.line)
		})
	}
}

func TestSniff_NoAlloc(t *testing.T) {
	line := []byte(toolUse)
	allocs := testing.AllocsPerRun(100, func() { m4dtimes.Sniff(line) })
	assert.Zero(t, allocs)
}
