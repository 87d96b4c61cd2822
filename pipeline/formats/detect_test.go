package formats

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

func headLines(data []byte) [][]byte {
	var out [][]byte
	for line := range bytes.Lines(data) {
		out = append(out, bytes.TrimRight(line, "\r\n"))
	}
	return out
}

func TestDetect_Corpus(t *testing.T) {
	root := "../../testdata/corpus"
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		dirs := strings.Split(rel, string(filepath.Separator))
		if dirs[0] == "generated" {
			dirs = dirs[1:] // generated/<format>/…
		}
		want := map[string]schema.Format{
			"claude-code": schema.FormatClaudeCode,
			"codex":       schema.FormatCodex,
			"pi":          schema.FormatPi,
			"openclaw":    schema.FormatPi,
			"qwen":        schema.FormatQwen,
			"kimi":        schema.FormatKimi,
		}[dirs[0]]
		if strings.HasSuffix(path, ".trajectory.jsonl") {
			want = schema.FormatTrajectory
		}
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		got, err := detect(headLines(data))
		require.NoError(t, err, rel)
		require.Equal(t, want, got, rel)
		n++
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, n, 20)
}

func TestDetect(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want schema.Format
	}{
		{"PiHeaderV3", `{"type":"session","version":3,"id":"a","timestamp":"2026-01-01T00:00:00Z","cwd":"/x"}`, schema.FormatPi},
		{"PiHeaderV1", `{"type":"session","id":"a","timestamp":"2026-01-01T00:00:00Z","cwd":"/x","provider":"anthropic"}`, schema.FormatPi},
		{"PiHeaderless", `{"type":"message","id":"1a2b3c4d","parentId":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi","timestamp":1767225600000}}`, schema.FormatPi},
		{"PiHeaderlessToolResult", `{"type":"message","id":"1a2b3c4d","message":{"role":"toolResult","toolCallId":"c","content":[]}}`, schema.FormatPi},
		{"Fluux", `{"type":"session","version":1,"created":"2026-02-11T15:24:00.123456789+00:00","jid":"alice@example.com"}`, schema.FormatFluux},
		{"FluuxHeaderless", `{"type":"message","role":"user","content":"hi","ts":"2026-02-11T15:24:00Z"}`, schema.FormatFluux},
		{"M4dtimes", `{"type":"session","version":1,"id":"a1b2c3d4","timestamp":"2026-02-24T23:14:59.123456789Z","userId":7756297856}`, schema.FormatM4dtimes},
		{"M4dtimesHeaderless", `{"type":"message","id":"e5f6a7b8","timestamp":"2026-02-24T23:14:59Z","message":{"role":"user","content":[{"type":"tool_result","tool_result":{"tool_call_id":"t","content":"ok","is_error":false}}]}}`, schema.FormatM4dtimes},
		{"CodexMeta", `{"timestamp":"2026-02-23T11:40:29.275Z","type":"session_meta","payload":{"id":"019c"}}`, schema.FormatCodex},
		{"ClaudeAfterBookkeeping", "{\"type\":\"permission-mode\",\"permissionMode\":\"default\",\"sessionId\":\"s\"}\n{\"type\":\"user\",\"uuid\":\"u\",\"sessionId\":\"s\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}", schema.FormatClaudeCode},
		{"Trajectory", `{"traceSchema":"openclaw-trajectory","schemaVersion":1,"traceId":"s","source":"runtime","type":"session.started","ts":"2026-09-04T10:00:00.000Z","seq":1,"sessionId":"s"}`, schema.FormatTrajectory},
		// Key order is not fixed; a trajectory event with a "type" that
		// another format knows is still a trajectory event.
		{"TrajectorySchemaLast", `{"type":"message","ts":"2026-09-04T10:00:00.000Z","data":{},"traceSchema":"openclaw-trajectory"}`, schema.FormatTrajectory},
		{"BrokenFirstLine", "{\"type\":\"sess\n{\"timestamp\":\"2026-02-23T11:40:29.275Z\",\"type\":\"session_meta\",\"payload\":{\"id\":\"019c\"}}", schema.FormatCodex},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := detect(headLines([]byte(tc.in)))
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestDetect_Unknown(t *testing.T) {
	for _, in := range []string{
		``,
		`not json`,
		`{"key":"k","content":"fact","ts":"2026-01-01T00:00:00Z"}`, // Fluux knowledge.jsonl
		`{"type":"permission-mode","permissionMode":"default"}`,
		`[1,2,3]`,
	} {
		_, err := detect(headLines([]byte(in)))
		require.ErrorIs(t, err, ErrUnknownFormat, in)
	}
}

// The cases of the former per-format Sniff functions, now answered by
// the one detection: a line of one format alone is that format (weak
// matches included, as in a final file), or tells nothing ("").
func TestDetect_OneLine(t *testing.T) {
	const (
		m4User     = `{"type":"message","id":"e5f6a7b8","parentId":"a1b2c3d4","timestamp":"2026-02-24T23:15:01Z","message":{"role":"user","content":[{"type":"text","text":"Cosa ho oggi?"}]}}`
		m4ToolUse  = `{"type":"message","id":"f0e1d2c3","parentId":"e5f6a7b8","timestamp":"2026-02-24T23:15:03Z","message":{"role":"assistant","content":[{"type":"tool_use","tool_call":{"id":"toolu_01","name":"execute_sql","arguments":{"query":"SELECT 1"}}}],"usage":{"input_tokens":3264,"output_tokens":110}}}`
		m4Result   = `{"type":"message","id":"b4a5c6d7","parentId":"f0e1d2c3","timestamp":"2026-02-24T23:15:03Z","message":{"role":"user","content":[{"type":"tool_result","tool_result":{"tool_call_id":"toolu_01","content":"1","is_error":true}}]}}`
		fluuxUser  = `{"type":"message","role":"user","content":"Hello!","msg_id":"abc-123","sender":"alice@example.com","ts":"2025-02-08T19:00:01Z"}`
		fluuxReact = `{"type":"message","role":"user","content":"","sender":"alice@example.com","ts":"2025-02-08T19:00:03Z","reaction":{"message_id":"def-456","emojis":["👍"]}}`
	)
	tests := []struct {
		name string
		line string
		want schema.Format
	}{
		// Claude Code.
		{"ClaudeUser", claudeUser, schema.FormatClaudeCode},
		{"ClaudeAssistantTypeLast", `{"uuid":"a","sessionId":"s","message":{},"type":"assistant"}`, schema.FormatClaudeCode},
		{"ClaudeUserWithoutMessage", `{"type":"user","uuid":"u","sessionId":"s"}`, ""},
		{"ClaudeUserWithoutUUID", `{"type":"user","sessionId":"s","message":{}}`, ""},
		{"ClaudeProgress", `{"type":"progress","uuid":"p","sessionId":"s","data":{"type":"hook_progress"}}`, schema.FormatClaudeCode},
		{"ClaudeSystem", `{"type":"system","subtype":"turn_duration","uuid":"x","sessionId":"s"}`, schema.FormatClaudeCode},
		{"ClaudeSnapshot", `{"type":"file-history-snapshot","messageId":"m","snapshot":{}}`, schema.FormatClaudeCode},
		{"ClaudeQueue", `{"type":"queue-operation","operation":"enqueue","sessionId":"s"}`, schema.FormatClaudeCode},
		{"ClaudeSummary", `{"type":"summary","summary":"x","leafUuid":"l"}`, schema.FormatClaudeCode},
		{"ClaudeSummaryWithoutLeaf", `{"type":"summary","summary":"x"}`, ""},
		{"ClaudeLegacyUsage", `{"timestamp":"t","sessionId":"s","message":{"usage":{}},"requestId":"r","costUSD":0.1}`, schema.FormatClaudeCode},
		{"ClaudePermissionMode", `{"type":"permission-mode","permissionMode":"default","sessionId":"s"}`, schema.FormatClaudeCode},
		{"ClaudeInvalid", `{"type":"user","uuid":`, ""},
		{"NotObject", `["user"]`, ""},
		// OpenCode.
		{"OpenCodeRow", `{"id":"msg_1","session_id":"ses_1","time_created":1,"time_updated":2,"data":{"role":"user"}}`, schema.FormatOpenCode},
		{"OpenCodeDocument", `{"id":"msg_1","sessionID":"ses_1","role":"assistant","time":{"created":1},"modelID":"m"}`, schema.FormatOpenCode},
		{"OpenCodeDocumentWithoutTime", `{"id":"msg_1","sessionID":"ses_1","role":"assistant"}`, ""},
		// Goose.
		{"GooseRow", `{"id":"20260501_1","model_config_json":"{\"model_name\":\"gpt-5\"}","accumulated_input_tokens":1}`, schema.FormatGoose},
		// Codex.
		{"CodexMeta", codexMeta, schema.FormatCodex},
		{"CodexTurnContextFirst", `{"timestamp":"2026-05-12T08:00:00.000Z","type":"turn_context","payload":{"model":"gpt-5.2"}}`, schema.FormatCodex},
		{"CodexAnyOrder", `{"payload":{},"type":"event_msg","timestamp":"2026-05-12T08:00:00Z"}`, schema.FormatCodex},
		{"CodexCompacted", `{"timestamp":"t","type":"compacted","payload":{"message":""}}`, schema.FormatCodex},
		{"CodexUnknownType", `{"timestamp":"t","type":"world_state","payload":{}}`, ""},
		{"CodexNoPayload", `{"timestamp":"t","type":"event_msg"}`, ""},
		{"CodexNoTimestamp", `{"type":"event_msg","payload":{}}`, ""},
		{"CodexPartial", `{"timestamp":"t","type":"session_meta","payload":{"id":`, ""},
		// pi.
		{"PiHeaderKeysLast", `{"cwd":"/x","id":"a","type":"session"}`, schema.FormatPi},
		{"PiHeaderNoCwd", `{"type":"session","version":3,"id":"a","timestamp":"2026-03-08T12:15:35.580Z"}`, ""},
		{"PiUser", piUser, schema.FormatPi},
		{"PiToolResult", `{"type":"message","id":"a","message":{"role":"toolResult","toolCallId":"t","content":[]}}`, schema.FormatPi},
		{"PiAssistantWithCacheRead", `{"type":"message","message":{"role":"assistant","content":[],"usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0}}}`, schema.FormatPi},
		{"PiAssistantWithoutUsage", `{"type":"message","message":{"role":"assistant","content":[]}}`, ""},
		{"PiOtherEntryType", `{"type":"model_change","id":"a","provider":"p","modelId":"m"}`, ""},
		// Fluux.
		{"FluuxHeader", `{"type":"session","version":1,"created":"2025-02-08T19:00:00Z","jid":"alice@example.com"}`, schema.FormatFluux},
		{"FluuxUser", fluuxUser, schema.FormatFluux},
		{"FluuxReaction", fluuxReact, schema.FormatFluux},
		{"FluuxMUCWithoutTS", `{"type":"message","role":"user","content":"Anyone around?","sender":"alice@muc"}`, schema.FormatFluux},
		{"FluuxKnowledge", knowledge, ""},
		// m4dtimes.
		{"M4dtimesHeaderREADMEOrder", `{"type":"session","version":1,"id":"a1b2c3d4","userId":7756297856,"timestamp":"2026-02-24T23:14:59Z"}`, schema.FormatM4dtimes},
		{"M4dtimesHeaderHugeUser", `{"type":"session","version":1,"id":"a1b2c3d4","timestamp":"2026-02-24T23:14:59Z","userId":9223372036854775807}`, schema.FormatM4dtimes},
		{"M4dtimesHeaderUserString", `{"type":"session","version":1,"id":"a1b2c3d4","timestamp":"2026-02-24T23:14:59Z","userId":"1"}`, ""},
		{"M4dtimesToolUse", m4ToolUse, schema.FormatM4dtimes},
		{"M4dtimesToolResult", m4Result, schema.FormatM4dtimes},
		// A headerless m4dtimes text message has no feature of its own.
		{"M4dtimesUserText", m4User, ""},
		// Gemini CLI.
		{"GeminiMetadata", `{"sessionId":"7c1e","projectHash":"9f86d0","startTime":"2026-09-01T09:00:00.000Z","lastUpdated":"2026-09-01T09:00:00.000Z"}`, schema.FormatGeminiCLI},
		{"GeminiMetadataWithoutSessionID", `{"projectHash":"9f86d0","startTime":"2026-09-01T09:00:00.000Z"}`, ""},
		{"GeminiModelMessage", `{"id":"m1","timestamp":"2026-09-01T09:00:05.000Z","type":"gemini","content":"Hi","model":"gemini-2.5-pro"}`, schema.FormatGeminiCLI},
		{"GeminiTypeWithoutContent", `{"id":"m1","timestamp":"t","type":"gemini"}`, ""},
		{"GeminiUserMessage", `{"id":"u1","timestamp":"2026-09-01T09:00:01.000Z","type":"user","content":[{"text":"hello"}]}`, ""},
		// Copilot CLI.
		{"CopilotStart", `{"type":"session.start","data":{"sessionId":"s","version":1,"producer":"copilot-agent","copilotVersion":"1.0.5","startTime":"2026-11-01T10:00:00.000Z"},"id":"e1","timestamp":"2026-11-01T10:00:00.000Z","parentId":null}`, schema.FormatCopilot},
		{"CopilotUserAnyOrder", `{"parentId":"e1","timestamp":"2026-11-01T10:00:01.000Z","id":"e2","data":{"content":"hi"},"type":"user.message"}`, schema.FormatCopilot},
		{"CopilotNoParentID", `{"type":"user.message","data":{"content":"hi"},"id":"e2","timestamp":"2026-11-01T10:00:01.000Z"}`, ""},
		{"CopilotTypeWithoutDot", `{"type":"message","data":{},"id":"e2","timestamp":"t","parentId":null}`, ""},
		// Whole-file documents are told by formats.ParseDocument, not by a
		// line: a thread or settings written on one line is no line format.
		{"AmpThreadOneLine", `{"v":1,"id":"T-1","created":1790154000000,"messages":[{"role":"user","messageId":0,"content":[{"type":"text","text":"hi"}]}]}`, ""},
		{"DroidSettingsOneLine", `{"model":"gpt-5","tokenUsage":{"inputTokens":1,"outputTokens":2}}`, ""},
		// Grok Build CLI.
		{"GrokUserChunk", `{"timestamp":1785000000,"method":"_x.ai/session/update","params":{"sessionId":"s","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"hi"}}}}`, schema.FormatGrok},
		{"GrokTurnCompletedAnyOrder", `{"params":{"update":{"usage":{"inputTokens":1},"sessionUpdate":"turn_completed"},"_meta":{"eventId":"e"}},"timestamp":1785000000}`, schema.FormatGrok},
		{"GrokSessionUpdateNotString", `{"timestamp":1785000000,"params":{"update":{"sessionUpdate":1}}}`, ""},
		{"GrokParamsWithType", `{"type":"message","params":{"update":{"sessionUpdate":"x"}}}`, ""},
		{"GrokXAINotification", `{"timestamp":1785000000,"method":"_x.ai/mcp/init_progress","params":{"server":"fs"}}`, schema.FormatGrok},
		{"GrokOtherMethod", `{"timestamp":1785000000,"method":"session/cancel","params":{}}`, ""},
		// Qwen Code: Claude Code's envelope around Gemini's Content. A
		// message with parts is never Claude's.
		{"QwenUser", `{"uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"2026-11-02T09:00:00.000Z","type":"user","cwd":"/w","version":"0.19.2","message":{"role":"user","parts":[{"text":"hi"}]}}`, schema.FormatQwen},
		{"QwenAssistantUsageOnly", `{"uuid":"a1","parentUuid":"u1","sessionId":"s","timestamp":"t","type":"assistant","model":"qwen3-coder-plus","usageMetadata":{"promptTokenCount":10}}`, schema.FormatQwen},
		{"QwenToolResult", `{"uuid":"t1","parentUuid":"a1","sessionId":"s","timestamp":"t","type":"tool_result","toolCallResult":{"callId":"c"}}`, schema.FormatQwen},
		{"QwenSystem", `{"uuid":"x1","parentUuid":"a1","sessionId":"s","timestamp":"t","type":"system","subtype":"ui_telemetry","systemPayload":{"uiEvent":{}}}`, schema.FormatQwen},
		{"QwenPartsWithoutSessionID", `{"uuid":"u1","type":"user","message":{"role":"user","parts":[]}}`, ""},
		{"PartsNeverClaude", `{"uuid":"p1","sessionId":"s","type":"attachment","message":{"role":"user","parts":[{"text":"hi"}]}}`, ""},
		{"ClaudeUserWithContent", `{"uuid":"u1","parentUuid":null,"sessionId":"s","type":"user","message":{"role":"user","content":"hi"}}`, schema.FormatClaudeCode},
		// Kimi CLI's wire.jsonl.
		{"KimiMetadata", `{"type": "metadata", "protocol_version": "1.3"}`, schema.FormatKimi},
		{"KimiTurnBegin", `{"timestamp": 1778000000.123456, "message": {"type": "TurnBegin", "payload": {"user_input": "hi"}}}`, schema.FormatKimi},
		{"KimiStatusUpdate", `{"message": {"payload": {"token_usage": {"input_other": 1, "output": 2}}, "type": "StatusUpdate"}, "timestamp": 1778000000}`, schema.FormatKimi},
		{"KimiStringTimestamp", `{"timestamp": "2026-11-02T09:00:00Z", "message": {"type": "TurnBegin", "payload": {}}}`, ""},
		{"MetadataWithoutProtocol", `{"type": "metadata"}`, ""},
		{"Empty", ``, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := detect([][]byte{[]byte(tc.line)})
			if tc.want == "" {
				require.ErrorIs(t, err, ErrUnknownFormat, "detect(%s) = %q", tc.line, got)
				return
			}
			require.NoError(t, err, tc.line)
			require.Equal(t, tc.want, got, "detect(%s)", tc.line)
		})
	}
}

// The minimal typeless Claude Code usage line (ccusage's fixtures, old
// versions) decides at once when it carries Claude's sessionId and
// Anthropic's usage names: a live file of such lines is read as it
// grows, not held until the tailer's detection wait ends. Without the
// sessionId it stays a weak match.
func TestDetect_TypelessClaudeUsageLine(t *testing.T) {
	for _, tc := range []struct {
		line   string
		want   schema.Format
		strong bool
	}{
		{`{"timestamp":"2026-01-09T10:00:00.000Z","sessionId":"s","message":{"role":"assistant","usage":{"input_tokens":1,"output_tokens":2}},"requestId":"r"}`, schema.FormatClaudeCode, true},
		{`{"timestamp":"2026-01-09T10:00:00.000Z","message":{"role":"assistant","usage":{"input_tokens":1,"output_tokens":2}}}`, schema.FormatClaudeCode, false},
		{`{"timestamp":"2026-01-09T10:00:00.000Z","sessionId":"s","message":{"usage":{}}}`, schema.FormatClaudeCode, false},
		{`{"timestamp":"2026-01-09T10:00:00.000Z","sessionId":"s","message":{"usage":{"input":1,"cacheRead":0}}}`, "", false},
	} {
		var d detector
		f, strong := d.line([]byte(tc.line))
		require.Equal(t, tc.want, f, tc.line)
		require.Equal(t, tc.strong, strong, tc.line)
	}

	// A growing file (not final) of such lines is decided by its first.
	data, err := os.ReadFile("../../testdata/corpus/claude-code/ccusage/projects/project-alpha/session-alpha/chat.jsonl")
	require.NoError(t, err)
	d := mustDecoder(t, DecoderConfig{Config: parse.Config{Path: "chat.jsonl"}})
	var got fed
	require.NoError(t, d.Decode(lines(string(data[:bytes.IndexByte(data, '\n')]))[0], got.fn))
	require.Equal(t, schema.FormatClaudeCode, d.Format())
	require.Len(t, got.results, 1, "the line is decoded, not held")
}
