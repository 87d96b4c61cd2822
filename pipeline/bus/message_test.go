package bus_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/schema"
)

func TestEntryMsg_RoundTrip(t *testing.T) {
	cost := 0.0125
	e := &schema.Entry{
		Format: schema.FormatPi, Host: "build.01", Path: "/s.jsonl", Offset: 1234, Line: 7,
		SessionID: "sess", EntryID: "ent", TS: time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC),
		Kind: schema.KindMessage, Role: schema.RoleAssistant, Text: "héllo <b>",
		Model: "claude-sonnet-4", Usage: &schema.Usage{Input: 10, Output: 20, CacheRead: 30, CacheWrite: 40},
		UsageKey: "k", CostUSD: &cost,
		ToolCalls: []schema.ToolCall{{ID: "t1", Name: "bash", Input: json.RawMessage(`{"cmd":"ls"}`)}},
	}
	buf := make([]byte, 0, 1024)
	msg := bus.EntryMsg("sp", e, buf)

	assert.Equal(t, "sp.entries.build%2E01.pi", msg.Subject)
	assert.Equal(t, e.Key(), msg.Header.Get(bus.HeaderMsgID))
	assert.Equal(t, "1", msg.Header.Get(bus.HeaderSchema))
	assert.Equal(t, e.AppendJSON(nil), msg.Data)
	assert.Equal(t, &buf[:1][0], &msg.Data[0], "body reuses buf")

	var got schema.Entry
	require.NoError(t, bus.DecodeEntry(msg.Header, msg.Data, &got))
	assert.Equal(t, e.AppendJSON(nil), got.AppendJSON(nil))
	assert.Equal(t, e.Key(), got.Key())
}

func TestDecodeEntry_Errors(t *testing.T) {
	good := bus.EntryMsg(bus.DefaultPrefix, testEntry(1), nil)
	tests := []struct {
		name   string
		header nats.Header
		data   []byte
		want   error // nil: any decode error
	}{
		{"NoSchemaHeader", nats.Header{}, good.Data, bus.ErrSchemaVersion},
		{"OtherSchema", nats.Header{bus.HeaderSchema: {"2"}}, good.Data, bus.ErrSchemaVersion},
		{"NotJSON", good.Header, []byte("{nope"), nil},
		{"NotObject", good.Header, []byte(`[1,2]`), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := *testEntry(5)
			err := bus.DecodeEntry(tt.header, tt.data, &e)
			require.Error(t, err)
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
			}
			assert.Equal(t, schema.Entry{}, e, "entry is zeroed on error")
		})
	}
}

func TestDeadMsg(t *testing.T) {
	head := bytes.Repeat([]byte{0xff, 'x'}, bus.MaxDeadHead) // invalid UTF-8, too long
	d := &bus.DeadLetter{Host: "h 1", Path: "/a/b.jsonl", Line: 3, Offset: 4096, Format: "codex", Error: "invalid JSON", Head: head}
	msg := bus.DeadMsg(bus.DefaultPrefix, d)

	assert.Equal(t, "sessionpipe.dead.h%201", msg.Subject)
	assert.Equal(t, "dead:h 1:/a/b.jsonl:4096", msg.Header.Get(bus.HeaderMsgID))
	assert.Equal(t, "1", msg.Header.Get(bus.HeaderSchema))
	assert.Len(t, d.Head, 2*bus.MaxDeadHead, "DeadMsg does not change its argument")

	got, err := bus.DecodeDeadLetter(msg.Data)
	require.NoError(t, err)
	want := *d
	want.Head = head[:bus.MaxDeadHead]
	assert.Equal(t, want, got)

	var fields map[string]any
	require.NoError(t, json.Unmarshal(msg.Data, &fields))
	for _, k := range []string{"host", "path", "line", "offset", "format", "error", "head"} {
		assert.Contains(t, fields, k)
	}

	_, err = bus.DecodeDeadLetter([]byte("nope"))
	require.Error(t, err)
}
