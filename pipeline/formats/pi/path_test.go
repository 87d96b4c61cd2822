package pi_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/pi"
)

func TestSessionIDFromPath(t *testing.T) {
	tests := []struct {
		name, path, want string
	}{
		{"OpenClaw", "/home/me/.openclaw/agents/main/sessions/8555a0a4-0b79-459d-939c-e17cdbbf4fe2.jsonl", "8555a0a4-0b79-459d-939c-e17cdbbf4fe2"},
		{"Bak", "/home/me/.openclaw/agents/main/sessions/sess-main.jsonl.bak.2026-01-21T12-00-00.000Z", "sess-main"},
		{"Reset", "a.jsonl.reset.2026-03-20T06-34-44.520Z", "a"},
		{"Deleted", "/x/b.jsonl.deleted.2026-03-20T06-34-44.520Z", "b"},
		{"FutureReason", "/x/c.jsonl.rotated.1772975044928", "c"},
		{"Pi", "/home/me/.pi/agent/sessions/--home-me-proj--/2025-12-24T00-32-27-967Z_2638daee-0588-4baa-bd33-68b4c002818e.jsonl", "2638daee-0588-4baa-bd33-68b4c002818e"},
		{"PiBak", "2025-12-24T00-32-27-967Z_2638daee.jsonl.bak.2026-01-01T00-00-00.000Z", "2638daee"},
		{"Windows", `C:\Users\me\.openclaw\agents\main\sessions\8555a0a4.jsonl`, "8555a0a4"},
		{"Clawdbot", "/home/me/.clawdbot/sessions/abc123.jsonl", "abc123"},
		{"TelegramTopic", "/x/sess-1-topic-42.jsonl", "sess-1-topic-42"},
		{"UnderscoreNotTimestamp", "/x/my_session.jsonl", "my_session"},
		{"OnlyTimestampPrefix", "/x/2025-12-24T00-32-27-967Z_.jsonl", "2025-12-24T00-32-27-967Z_"},
		{"NoExtension", "/x/abc", "abc"},
		{"OtherExtension", "/x/abc.jsonlx", "abc.jsonlx"},
		{"Bare", "abc.jsonl", "abc"},
		{"Empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, pi.SessionIDFromPath(tt.path), "SessionIDFromPath(%q)", tt.path)
		})
	}
}
