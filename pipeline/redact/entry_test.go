package redact_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/redact"
	"github.com/sessionpipe/sessionpipe/schema"
)

const (
	fakeGH  = "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123"
	fakeAWS = "AKIAABCDEFGHIJKLMNOP"
)

// secretEntry returns an entry with a fake secret in every free-text
// field, and the metadata that every mode must keep.
func secretEntry() *schema.Entry {
	cost := 0.25
	return &schema.Entry{
		Format: schema.FormatClaudeCode, Host: "h1", Path: "/p/s.jsonl", Offset: 10, Line: 2,
		SessionID: "s1", EntryID: "e1", TS: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Kind: schema.KindMessage, Role: schema.RoleAssistant, Model: "claude-opus-4-6",
		Usage: &schema.Usage{Input: 3, Output: 5}, CostUSD: &cost, CWD: "/work",
		Text:        "use " + fakeGH + " to push",
		Title:       "rotate " + fakeAWS,
		CommandArgs: "--token=" + fakeGH,
		ToolCalls:   []schema.ToolCall{{ID: "t1", Name: "Bash", Input: json.RawMessage(`{"command":"export AWS_ACCESS_KEY_ID=` + fakeAWS + `"}`)}},
		ToolResults: []schema.ToolResult{{ToolCallID: "t0", Content: "token: " + fakeGH}},
		Attachments: []schema.Attachment{{Filename: "a.png", MimeType: "image/png", Size: "12"}},
		Raw:         json.RawMessage(`{"message":{"content":"use ` + fakeGH + ` to push"}}`),
	}
}

// metadataOf is what must survive every mode.
func metadataOf(e *schema.Entry) schema.Entry {
	m := *e
	m.Text, m.Title, m.CommandArgs, m.Raw = "", "", "", nil
	m.ToolCalls = []schema.ToolCall{{ID: e.ToolCalls[0].ID, Name: e.ToolCalls[0].Name}}
	m.ToolResults = []schema.ToolResult{{ToolCallID: e.ToolResults[0].ToolCallID}}
	return m
}

func TestRedactor_Entry(t *testing.T) {
	t.Run("Redacted", func(t *testing.T) {
		e := secretEntry()
		st := mustNew(t, redact.Config{}).Entry(e)
		require.Equal(t, int64(4), st.Count(redact.GitHubToken))
		require.Equal(t, int64(2), st.Count(redact.AWSAccessKey))
		require.Equal(t, int64(6), st.Total())
		require.Equal(t, "use [REDACTED:github-token] to push", e.Text)
		require.Equal(t, "rotate [REDACTED:aws-access-key]", e.Title)
		require.Equal(t, "--token=[REDACTED:github-token]", e.CommandArgs)
		require.JSONEq(t, `{"command":"export AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key]"}`, string(e.ToolCalls[0].Input))
		require.Equal(t, "token: [REDACTED:github-token]", e.ToolResults[0].Content)
		require.JSONEq(t, `{"message":{"content":"use [REDACTED:github-token] to push"}}`, string(e.Raw))
		require.Equal(t, metadataOf(secretEntry()), metadataOf(e))
	})
	t.Run("Metadata", func(t *testing.T) {
		e := secretEntry()
		st := mustNew(t, redact.Config{Mode: redact.Metadata}).Entry(e)
		require.Equal(t, int64(6), st.Emptied)
		require.Equal(t, metadataOf(secretEntry()), *e)
	})
	t.Run("Full", func(t *testing.T) {
		e := secretEntry()
		st := mustNew(t, redact.Config{Mode: redact.Full}).Entry(e)
		require.Equal(t, redact.Stats{}, st)
		require.Equal(t, secretEntry(), e)
	})
	t.Run("InputNotWritten", func(t *testing.T) {
		line := []byte(`{"command":"echo ` + fakeGH + `"}`)
		keep := string(line)
		e := &schema.Entry{Text: fakeGH, ToolCalls: []schema.ToolCall{{Input: line}}, Raw: line}
		mustNew(t, redact.Config{}).Entry(e)
		require.Equal(t, keep, string(line))
	})
	t.Run("Disable", func(t *testing.T) {
		e := secretEntry()
		st := mustNew(t, redact.Config{Disable: []redact.Kind{redact.AWSAccessKey}}).Entry(e)
		require.Zero(t, st.Count(redact.AWSAccessKey))
		require.Equal(t, "rotate "+fakeAWS, e.Title)
	})
}

// TestRedactor_EntryCorpus redacts every entry of the shipped samples,
// with raw lines kept, and checks that the entries that change are the
// ones whose lines TestRedactor_Corpus lists, and that nothing else of an
// entry changes.
func TestRedactor_EntryCorpus(t *testing.T) {
	r := mustNew(t, redact.Config{})
	var total redact.Stats
	entries := 0
	err := filepath.WalkDir(corpusDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		_, err = formats.ReadFile(context.Background(), path, formats.ReadConfig{Config: parse.Config{Text: true, Raw: true}},
			func(e *schema.Entry) {
				entries++
				before := *e
				st := r.Entry(e)
				total.Add(st)
				if st.Total() == 0 {
					require.Equal(t, before, *e)
				} else {
					t.Logf("%s:%d: %v", path, e.Line, st.Secrets)
				}
			}, func(error) {})
		if errors.Is(err, formats.ErrUnknownFormat) {
			return nil
		}
		return err
	})
	require.NoError(t, err)
	require.Positive(t, entries)
	t.Logf("%d entries, %d secrets: %v", entries, total.Total(), total.Secrets)
	require.Equal(t, int64(2), total.Count(redact.Password), "qpdf --password=… in pi-mono/session.jsonl, in text and raw line")
	require.Equal(t, total.Count(redact.Password), total.Total())
}

func TestParseMode(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want redact.Mode
	}{{"", redact.Redacted}, {"redacted", redact.Redacted}, {"full", redact.Full}, {"metadata", redact.Metadata}} {
		got, err := redact.ParseMode(tt.in)
		require.NoError(t, err)
		require.Equal(t, tt.want, got, "ParseMode(%q)", tt.in)
		if tt.in != "" {
			require.Equal(t, tt.in, got.String())
		}
	}
	_, err := redact.ParseMode("none")
	require.ErrorIs(t, err, redact.ErrUnknownMode)

	var m redact.Mode
	require.NoError(t, json.Unmarshal([]byte(`"metadata"`), &m))
	require.Equal(t, redact.Metadata, m)
	b, err := json.Marshal(redact.Full)
	require.NoError(t, err)
	require.Equal(t, `"full"`, string(b))

	_, err = redact.New(redact.Config{Mode: redact.Mode(9)})
	require.ErrorIs(t, err, redact.ErrInvalidConfig)
	var ce *redact.ConfigError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "content", ce.Field)
	_, err = redact.New(redact.Config{Disable: []redact.Kind{redact.NumKinds}})
	require.ErrorIs(t, err, redact.ErrInvalidConfig)
}

func TestStats_Add(t *testing.T) {
	r := mustNew(t, redact.Config{})
	var total redact.Stats
	for range 3 {
		total.Add(r.Entry(secretEntry()))
	}
	require.Equal(t, int64(12), total.Count(redact.GitHubToken))
	require.Equal(t, int64(6), total.Count(redact.AWSAccessKey))
	require.Equal(t, int64(18), total.Total())
	require.Equal(t, int64(6), r.Entry(secretEntry()).Total())
	require.Zero(t, total.Count(redact.NumKinds))
	require.Equal(t, "unknown", redact.NumKinds.String())
	require.Equal(t, "[REDACTED:jwt]", redact.JWT.Marker())
}
