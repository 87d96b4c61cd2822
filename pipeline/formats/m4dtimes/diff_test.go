package m4dtimes_test

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/m4dtimes"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

// TestParser_MatchesSDKEncoding checks the parser against encoding/json:
// files written by the SDK's own types decode to entries that say exactly
// what the events say.
func TestParser_MatchesSDKEncoding(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, userID := range []int64{7756297856, 1<<53 + 1, 1<<63 - 1} {
		t.Run(strconv.FormatInt(userID, 10), func(t *testing.T) {
			data, events := sdkFile(r, userID, 40)
			p := m4dtimes.New(parse.Config{Path: "sessions/x.jsonl", Text: true})
			var entries []schema.Entry
			for _, l := range formattest.Lines(t, data) {
				var err error
				entries, err = p.Parse(entries, l)
				require.NoError(t, err)
			}
			require.Len(t, entries, len(events))
			session := events[0].ID
			for i, ev := range events {
				e := &entries[i]
				require.NoError(t, e.Validate())
				assert.Equal(t, session, e.SessionID)
				assert.Equal(t, ev.ID, e.EntryID)
				assert.Equal(t, ev.ParentID, e.ParentID)
				assert.True(t, ev.Timestamp.Equal(e.TS), "ts %v, want %v", e.TS, ev.Timestamp)
				if ev.Type == "session" {
					assert.Equal(t, schema.KindSession, e.Kind)
					assert.Equal(t, strconv.FormatInt(userID, 10), e.Sender)
					continue
				}
				m := ev.Message
				var texts []string
				var calls []schema.ToolCall
				var results []schema.ToolResult
				for _, b := range m.Content {
					switch b.Type {
					case "text":
						texts = append(texts, b.Text)
					case "tool_use":
						calls = append(calls, schema.ToolCall{ID: b.ToolCall.ID, Name: b.ToolCall.Name, Input: json.RawMessage(b.ToolCall.Arguments)})
					case "tool_result":
						results = append(results, schema.ToolResult{ToolCallID: b.ToolResult.ToolCallID, IsError: b.ToolResult.IsError, Content: b.ToolResult.Content})
					}
				}
				assert.Equal(t, strings.Join(texts, "\n"), e.Text)
				assert.Equal(t, calls, e.ToolCalls)
				assert.Equal(t, results, e.ToolResults)
				switch {
				case m.Role == "assistant":
					assert.Equal(t, schema.RoleAssistant, e.Role)
					require.NotNil(t, e.Usage)
					assert.Equal(t, schema.Usage{Input: int64(m.Usage.InputTokens), Output: int64(m.Usage.OutputTokens)}, *e.Usage)
					assert.Equal(t, "m4dtimes:"+session+":"+ev.ID, e.UsageKey)
				case len(results) > 0:
					assert.Equal(t, schema.RoleTool, e.Role)
					assert.Nil(t, e.Usage)
				default:
					assert.Equal(t, schema.RoleUser, e.Role)
					assert.False(t, e.Meta)
				}
			}
		})
	}
}
