package bus_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/schema"
)

// bigCall is an assistant entry with n tool_use blocks, as one Claude
// Code line holds them, and the usage of its API call.
func bigCall(n int) *schema.Entry {
	e := &schema.Entry{
		Format: schema.FormatClaudeCode, Host: "h", Path: "/p/tc.jsonl", Offset: 4242, Line: 7,
		SessionID: "s", EntryID: "u-1", TS: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Kind: schema.KindMessage, Role: schema.RoleAssistant, Model: "claude-opus-4-6",
		MessageID: "msg_1", RequestID: "req_1", UsageKey: "msg_1:req_1",
		Usage: &schema.Usage{Input: 3, Output: 123456, CacheRead: 7777, CacheWrite: 999},
		Text:  strings.Repeat("thinking aloud ", 1000),
	}
	for i := range n {
		e.ToolCalls = append(e.ToolCalls, schema.ToolCall{
			ID: fmt.Sprintf("toolu_%020d", i), Name: "Bash",
			Input: json.RawMessage(fmt.Sprintf(`{"command":"echo %d"}`, i)),
		})
	}
	return e
}

// msgSize is the size of m as the server counts it against max_payload.
func msgSize(m *nats.Msg) int { return len(m.Data) + bus.HeaderSize(m.Header) }

func TestFitEntryMsg(t *testing.T) {
	t.Run("fits", func(t *testing.T) {
		e := testEntry(1)
		m, shortened, err := bus.FitEntryMsg("sp", e, 4096, nil)
		require.NoError(t, err)
		require.False(t, shortened)
		require.Equal(t, bus.EntryMsg("sp", testEntry(1), nil).Data, m.Data)
	})
	t.Run("long text", func(t *testing.T) {
		e := testEntry(1)
		e.Text = strings.Repeat("é\x01<", 100_000) // escapes make the JSON longer than the text
		e.Raw = json.RawMessage(`{"x":1}`)
		orig := e.Text
		m, shortened, err := bus.FitEntryMsg("sp", e, 64<<10, nil)
		require.NoError(t, err)
		require.True(t, shortened)
		require.LessOrEqual(t, msgSize(m), 64<<10)
		require.Greater(t, msgSize(m), 48<<10, "the room is used, not halved")
		var got schema.Entry
		require.NoError(t, bus.DecodeEntry(m.Header, m.Data, &got))
		require.True(t, got.Truncated)
		require.Nil(t, got.Raw)
		require.True(t, strings.HasPrefix(orig, got.Text))
		require.True(t, utf8.ValidString(got.Text))
		require.Equal(t, e.Key(), m.Header.Get(bus.HeaderMsgID))
	})
	t.Run("60000 tool calls", func(t *testing.T) {
		e := bigCall(60_000)
		require.Greater(t, len(e.AppendJSON(nil)), 4<<20)
		want := *e
		want.Usage = &schema.Usage{}
		*want.Usage = *e.Usage
		m, shortened, err := bus.FitEntryMsg(bus.DefaultPrefix, e, 1<<20, nil)
		require.NoError(t, err)
		require.True(t, shortened)
		require.LessOrEqual(t, msgSize(m), 1<<20)
		var got schema.Entry
		require.NoError(t, bus.DecodeEntry(m.Header, m.Data, &got))
		require.Equal(t, *want.Usage, *got.Usage, "usage is never shortened")
		for _, f := range []struct{ got, want any }{
			{got.EntryID, want.EntryID}, {got.SessionID, want.SessionID}, {got.MessageID, want.MessageID},
			{got.RequestID, want.RequestID}, {got.UsageKey, want.UsageKey}, {got.Model, want.Model},
			{got.Line, want.Line}, {got.Offset, want.Offset}, {got.Path, want.Path}, {got.TS, want.TS},
		} {
			require.Equal(t, f.want, f.got)
		}
		require.Equal(t, 60_000, len(got.ToolCalls)+got.ToolCallsOmitted, "every tool call is counted")
		require.Positive(t, got.ToolCallsOmitted)
		require.Greater(t, len(got.ToolCalls), 10_000, "as many kept as fit")
		require.Equal(t, fmt.Sprintf("toolu_%020d", 0), got.ToolCalls[0].ID, "the first ones kept")
		require.True(t, got.Truncated)
	})
	t.Run("error results kept first", func(t *testing.T) {
		e := testEntry(2)
		for i := range 30_000 {
			e.ToolResults = append(e.ToolResults, schema.ToolResult{
				ToolCallID: fmt.Sprintf("toolu_%020d", i), IsError: i%100 == 0, Content: "output " + strings.Repeat("x", i%50),
			})
		}
		m, _, err := bus.FitEntryMsg("sp", e, 256<<10, nil)
		require.NoError(t, err)
		require.LessOrEqual(t, msgSize(m), 256<<10)
		var got schema.Entry
		require.NoError(t, bus.DecodeEntry(m.Header, m.Data, &got))
		errs := 0
		for _, r := range got.ToolResults {
			if r.IsError {
				errs++
			}
		}
		require.Equal(t, 300, errs, "no error result left out")
		require.Equal(t, 30_000, len(got.ToolResults)+got.ToolResultsOmitted)
	})
	t.Run("cannot fit", func(t *testing.T) {
		e := testEntry(3)
		e.EntryID = strings.Repeat("i", 8000) // ids are never cut
		_, _, err := bus.FitEntryMsg("sp", e, 4096, nil)
		require.ErrorIs(t, err, bus.ErrEntryTooLarge)
	})
}

// The message FitEntryMsg builds for the server's own limit is stored by
// a server with the standard 1 MiB max_payload.
func TestFitEntryMsg_ServerLimit(t *testing.T) {
	e := mustEnv(t, func(o *server.Options) { o.MaxPayload = 1 << 20 })
	p := mustPublisher(t, e.js, bus.PublisherConfig{})
	require.Equal(t, 1<<20, p.MaxPayload())
	entry := bigCall(60_000)
	m, shortened, err := bus.FitEntryMsg(bus.DefaultPrefix, entry, p.MaxPayload(), nil)
	require.NoError(t, err)
	require.True(t, shortened)
	done := make(chan error, 1)
	require.NoError(t, p.Publish(t.Context(), m, func(err error) { done <- err }))
	require.NoError(t, <-done)
	s, err := e.js.Stream(t.Context(), bus.DefaultStream)
	require.NoError(t, err)
	stored, err := s.GetLastMsgForSubject(t.Context(), m.Subject)
	require.NoError(t, err)
	var got schema.Entry
	require.NoError(t, bus.DecodeEntry(stored.Header, stored.Data, &got))
	require.Equal(t, int64(123456), got.Usage.Output)
	require.Equal(t, 60_000, len(got.ToolCalls)+got.ToolCallsOmitted)
}
