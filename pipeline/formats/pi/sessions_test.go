package pi_test

import (
	"os"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/pi"
	"github.com/sessionpipe/sessionpipe/schema"
)

func TestReadSessionsJSON(t *testing.T) {
	f, err := os.Open("testdata/sessions.json")
	require.NoError(t, err)
	defer f.Close()
	metas, err := pi.ReadSessionsJSON(f)
	require.NoError(t, err)
	require.Len(t, metas, 3)

	main := metas["8555a0a4-0b79-459d-939c-e17cdbbf4fe2"]
	assert.Equal(t, pi.SessionMeta{
		SessionKey:      "agent:main:main", // updated after its alias
		SessionID:       "8555a0a4-0b79-459d-939c-e17cdbbf4fe2",
		UpdatedAt:       1772975044928,
		Origin:          schema.Origin{Provider: "telegram", Surface: "dm", ChatType: "direct", From: "telegram:123456", Label: "Hakua"},
		ChatType:        "direct",
		Channel:         "telegram",
		DisplayName:     "Hakua",
		SessionFile:     "/home/me/.openclaw/agents/main/sessions/8555a0a4-0b79-459d-939c-e17cdbbf4fe2.jsonl",
		InputTokens:     787,
		OutputTokens:    267,
		TotalTokens:     15006,
		CacheRead:       13952,
		CompactionCount: 1,
		Model:           "gpt-5.4",
		ModelProvider:   "openai-codex",
	}, main)

	group := metas["0b2c9e1f-5d43-4b7e-9a10-3c2d1e0f9a8b"]
	assert.Equal(t, int64(120), group.InputTokens, "a counter written as 120.0")
	assert.Zero(t, group.OutputTokens, "a null counter")

	e := main.Entry("host1", "/home/me/.openclaw/agents/main/sessions/sessions.json")
	require.NoError(t, e.Validate())
	assert.Equal(t, schema.Entry{
		Format:    schema.FormatPi,
		Host:      "host1",
		Path:      "/home/me/.openclaw/agents/main/sessions/sessions.json",
		SessionID: "8555a0a4-0b79-459d-939c-e17cdbbf4fe2",
		EntryID:   "sessions.json:1772975044928",
		TS:        time.UnixMilli(1772975044928).UTC(),
		Kind:      schema.KindSession,
		Subtype:   "sessions.json",
		Model:     "gpt-5.4",
		Provider:  "openai-codex",
		Title:     "Hakua",
		Origin:    &schema.Origin{Provider: "telegram", Surface: "dm", ChatType: "direct", From: "telegram:123456", Label: "Hakua"},
	}, e)
	assert.Nil(t, e.Usage, "store counters are a snapshot, never counted")

	ge := group.Entry("host1", "sessions.json")
	assert.Equal(t, &schema.Origin{Provider: "telegram", ChatType: "group"}, ge.Origin, "origin falls back to channel and chatType")
	assert.Equal(t, "Team chat", ge.Title)

	cron := metas["c7f3a2b1-0000-4000-8000-00000000c0c0"].Entry("h", "p")
	assert.Nil(t, cron.Origin)
}

func TestReadSessionsJSON_Bad(t *testing.T) {
	tests := []struct {
		name      string
		input     string
		wantIDs   []string
		wantError string
	}{
		{"NotJSON", `{"a":`, nil, "pi: bad sessions.json"},
		{"Array", `[{"sessionId":"a"}]`, nil, "pi: bad sessions.json"},
		{"Null", `null`, nil, "pi: bad sessions.json"},
		{"Empty", `{}`, []string{}, ""},
		{"BadEntry", `{"k1":{"sessionId":"a","updatedAt":1},"k2":"not an object","k3":{"sessionId":"c","inputTokens":"many"}}`, []string{"a"}, `entry "k2"`},
		{"NoSessionID", `{"k1":{"updatedAt":1},"k2":{"sessionId":"b"}}`, []string{"b"}, `entry "k1": no sessionId`},
		{"UnknownFields", `{"k":{"sessionId":"a","brandNew":{"x":[1,2]},"origin":{"threadId":7}}}`, []string{"a"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			metas, err := pi.ReadSessionsJSON(strings.NewReader(tt.input))
			if tt.wantError == "" {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, pi.ErrSessionStore)
				assert.Contains(t, err.Error(), tt.wantError)
			}
			if tt.wantIDs == nil {
				assert.Nil(t, metas)
				return
			}
			var ids []string
			for id := range metas {
				ids = append(ids, id)
			}
			assert.ElementsMatch(t, tt.wantIDs, ids)
		})
	}
}

func TestReadSessionsJSON_ReadError(t *testing.T) {
	_, err := pi.ReadSessionsJSON(iotest.ErrReader(os.ErrClosed))
	require.ErrorIs(t, err, os.ErrClosed)
	assert.NotErrorIs(t, err, pi.ErrSessionStore)
}
