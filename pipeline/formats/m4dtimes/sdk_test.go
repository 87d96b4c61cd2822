package m4dtimes_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
)

// The SDK's own types (sdk/session/event.go, sdk/llm/types.go, as quoted
// in shared/formats/m4dtimes.md), marshalled with encoding/json exactly as
// the recorder does, to produce test files in the SDK's true encoding.

type sdkEvent struct {
	Type      string      `json:"type"`
	Version   int         `json:"version,omitempty"`
	ID        string      `json:"id"`
	ParentID  string      `json:"parentId,omitempty"`
	Timestamp time.Time   `json:"timestamp"`
	UserID    int64       `json:"userId,omitempty"`
	Message   *sdkMessage `json:"message,omitempty"`
	Error     string      `json:"error,omitempty"`
}

type sdkMessage struct {
	Role    string            `json:"role"`
	Content []sdkContentBlock `json:"content"`
	Usage   *sdkUsage         `json:"usage,omitempty"`
}

type sdkContentBlock struct {
	Type       string         `json:"type"`
	Text       string         `json:"text,omitempty"`
	ToolCall   *sdkToolCall   `json:"tool_call,omitempty"`
	ToolResult *sdkToolResult `json:"tool_result,omitempty"`
}

type sdkToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type sdkToolResult struct {
	ToolCallID string `json:"tool_call_id"`
	Content    string `json:"content"`
	IsError    bool   `json:"is_error"`
}

type sdkUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// sdkFile generates a session file of the given number of turns the way
// the SDK's agent loop records them: user text, then tool rounds
// (assistant tool_use with usage, user tool_result), then an assistant
// text reply with usage. It returns the file and its events.
func sdkFile(r *rand.Rand, userID int64, turns int) ([]byte, []sdkEvent) {
	// Mostly plain prose, as chat messages are, with a few characters that
	// encoding/json escapes (quotes, <, &) or that are multi-byte.
	words := strings.Fields(`prenota la stanza per domani sera quali camere sono libere oggi alle dieci
		va bene grazie mille perfetto allora confermo la prenotazione della camera doppia "ok" — 👍 <b> &`)
	sentence := formattest.Sentence(r, words)
	table := func(rows int) string { // psql-like output, as execute_sql returns
		var sb strings.Builder
		sb.WriteString("id | room | type | guest\n")
		for i := range rows {
			fmt.Fprintf(&sb, "%d | %d | %s | %s\n", i, 100+r.IntN(300), words[r.IntN(len(words))], words[r.IntN(len(words))])
		}
		return sb.String()
	}
	newID := func() string { return fmt.Sprintf("%08x", r.Uint32()) }
	ts := time.Date(2026, 2, 24, 23, 14, 59, 123456789, time.UTC)
	tick := func() time.Time {
		ts = ts.Add(time.Duration(r.IntN(5000)) * time.Millisecond)
		return ts
	}
	var events []sdkEvent
	last := newID()
	events = append(events, sdkEvent{Type: "session", Version: 1, ID: last, Timestamp: tick(), UserID: userID})
	add := func(m sdkMessage) {
		id := newID()
		events = append(events, sdkEvent{Type: "message", ID: id, ParentID: last, Timestamp: tick(), Message: &m})
		last = id
	}
	usage := func() *sdkUsage { return &sdkUsage{InputTokens: 1000 + r.IntN(5000), OutputTokens: 10 + r.IntN(500)} }
	for range turns {
		add(sdkMessage{Role: "user", Content: []sdkContentBlock{{Type: "text", Text: sentence(5 + r.IntN(30))}}})
		for range r.IntN(3) {
			var calls, results []sdkContentBlock
			for k := range 1 + r.IntN(2) {
				id := fmt.Sprintf("toolu_%d_%s", k, newID())
				args, _ := json.Marshal(map[string]any{"query": sentence(8), "limit": r.IntN(100)})
				calls = append(calls, sdkContentBlock{Type: "tool_use", ToolCall: &sdkToolCall{ID: id, Name: "execute_sql", Arguments: args}})
				results = append(results, sdkContentBlock{Type: "tool_result", ToolResult: &sdkToolResult{
					ToolCallID: id, Content: table(2 + r.IntN(20)), IsError: r.IntN(10) == 0,
				}})
			}
			add(sdkMessage{Role: "assistant", Content: calls, Usage: usage()})
			add(sdkMessage{Role: "user", Content: results})
		}
		add(sdkMessage{Role: "assistant", Content: []sdkContentBlock{{Type: "text", Text: sentence(20 + r.IntN(150))}}, Usage: usage()})
	}
	var b strings.Builder
	for _, e := range events {
		line, err := json.Marshal(e)
		if err != nil {
			panic(err) // the generator's own values always marshal
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return []byte(b.String()), events
}
