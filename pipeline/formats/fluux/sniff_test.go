package fluux_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/fluux"
)

func TestSniff(t *testing.T) {
	tests := []struct {
		name string
		line string
		want bool
	}{
		{"Header", header, true},
		{"HeaderPlus00", `{"type":"session","version":1,"created":"2026-02-11T15:24:00.123456789+00:00","jid":"room@conference.localhost"}`, true},
		{"UserMessage", userLine, true},
		{"AssistantMessage", replyLine, true},
		{"Reaction", reaction, true},
		{"MUCWithoutTS", `{"type":"message","role":"user","content":"Anyone around?","sender":"alice@muc"}`, true},
		{"PiHeader", `{"type":"session","version":3,"id":"0b7d3a4e-1111-4a5b-9c8d-222233334444","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u"}`, false},
		{"M4dtimesHeader", `{"type":"session","version":1,"id":"a1b2c3d4","timestamp":"2026-02-24T23:14:59Z","userId":7756297856}`, false},
		{"HeaderWithID", `{"type":"session","version":1,"created":"2025-02-08T19:00:00Z","jid":"a@b","id":"x"}`, false},
		{"HeaderWithoutCreated", `{"type":"session","version":1,"jid":"alice@example.com"}`, false},
		{"PiMessage", `{"type":"message","id":"e5f6a7b8","parentId":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi","timestamp":1}}`, false},
		{"ContentBlocks", `{"type":"message","role":"user","content":[{"type":"text","text":"hi"}]}`, false},
		{"ClaudeUser", `{"type":"user","uuid":"u","sessionId":"s","message":{"role":"user","content":"hi"}}`, false},
		{"Knowledge", `{"key":"k","content":"v","ts":"2025-02-08T19:00:00Z"}`, false},
		{"NotJSON", `{"type":"session","jid":`, false},
		{"Array", `[{"type":"session"}]`, false},
		{"Empty", ``, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, fluux.Sniff([]byte(tt.line)), "Sniff(%q)", tt.line)
		})
	}
}

func TestSniff_NoAlloc(t *testing.T) {
	line := []byte(userLine)
	allocs := testing.AllocsPerRun(100, func() { fluux.Sniff(line) })
	assert.Zero(t, allocs)
}

func TestIsTranscriptPath(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"data/memory/alice@example.com/history.jsonl", true},
		{"/srv/fluux/data/memory/room@conference.localhost/history.jsonl", true},
		{"data/memory/alice@example.com/sessions/20250208-190000.jsonl", true},
		{"alice@example.com/sessions/20260211-152400.jsonl", true},
		{"data/memory/alice@example.com/knowledge.jsonl", false},
		{"data/memory/alice@example.com/history.md", false},
		{"data/memory/alice@example.com/sessions/2025-02-08.jsonl", false},
		{"data/memory/alice@example.com/sessions/20250208-1900000.jsonl", false},
		{"data/memory/alice@example.com/sessions/2025020x-190000.jsonl", false},
		{"data/memory/alice@example.com/archive/20250208-190000.jsonl", false},
		{"data/memory/alice@example.com/20250208-190000.jsonl", false},
		{"data/memory/alice/history.jsonl", false},
		{"data/memory/sessions/20250208-190000.jsonl", false},
		{"history.jsonl", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			assert.Equal(t, tt.want, fluux.IsTranscriptPath(tt.path), "IsTranscriptPath(%q)", tt.path)
		})
	}
}
