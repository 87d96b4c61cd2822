package fluux_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/internal/testutil/golden"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/fluux"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

func TestParser_Golden(t *testing.T) {
	golden.Run(t, "testdata", fluux.New)
}

const (
	header    = `{"type":"session","version":1,"created":"2025-02-08T19:00:00Z","jid":"alice@example.com"}`
	userLine  = `{"type":"message","role":"user","content":"Hello!","msg_id":"abc-123","sender":"alice@example.com","ts":"2025-02-08T19:00:01Z"}`
	replyLine = `{"type":"message","role":"assistant","content":"Hi there!","msg_id":"def-456","ts":"2025-02-08T19:00:02Z"}`
	reaction  = `{"type":"message","role":"user","content":"","sender":"alice@example.com","ts":"2025-02-08T19:00:03Z","reaction":{"message_id":"def-456","emojis":["👍"]}}`
	legacy    = `{"type":"message","role":"user","content":"[Reacted to msg_id: def-456 with 👍]","sender":"alice@example.com"}`
)

func TestParser_TextOff(t *testing.T) {
	// Without cfg.Text only real user input carries its text.
	got := formattest.MustParse(t, fluux.New(parse.Config{}), header, userLine, replyLine, reaction, legacy)
	require.Len(t, got, 5)
	tests := []struct {
		name     string
		e        schema.Entry
		wantText string
		wantMeta bool
	}{
		{"Header", got[0], "", false},
		{"UserPrompt", got[1], "Hello!", false},
		{"AssistantReply", got[2], "", false},
		{"Reaction", got[3], "", true},
		{"LegacyReaction", got[4], "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.wantText, tt.e.Text)
			assert.Equal(t, tt.wantMeta, tt.e.Meta)
			assert.Equal(t, "alice@example.com/2025-02-08T19:00:00Z", tt.e.SessionID)
			assert.Nil(t, tt.e.Usage, "Fluux records no usage")
			assert.Empty(t, tt.e.UsageKey)
			assert.NoError(t, tt.e.Validate())
		})
	}
	assert.Equal(t, &schema.Reaction{MessageID: "def-456", Emojis: []string{"👍"}}, got[4].Reaction)
}

func TestParser_Raw(t *testing.T) {
	line := header + ` ` + userLine
	got := formattest.MustParse(t, fluux.New(parse.Config{Raw: true}), line)
	require.Len(t, got, 2)
	assert.Equal(t, header, string(got[0].Raw))
	assert.Equal(t, userLine, string(got[1].Raw))
	assert.Equal(t, 1, got[1].Object)
}

func TestParser_NoAlias(t *testing.T) {
	// Entries must survive the reuse of the line buffer.
	got := formattest.RequireOwned(t, fluux.New(parse.Config{Text: true, Raw: true}), jsonl.Line{Bytes: []byte(reaction), Number: 1})
	require.Len(t, got, 1)
}
func TestParser_HeaderlessSession(t *testing.T) {
	tests := []struct {
		name, path, want string
	}{
		{"History", "/data/memory/alice@example.com/history.jsonl", "alice@example.com/history"},
		{"Archive", "/data/memory/alice@example.com/sessions/20250208-190000.jsonl", "alice@example.com/20250208-190000"},
		{"MUCRoom", "data/memory/room@conference.localhost/history.jsonl", "room@conference.localhost/history"},
		{"OtherDir", "/tmp/export/chat.jsonl", "export/chat"},
		{"BareName", "history.jsonl", "history"},
		{"Stream", "", "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := formattest.MustParse(t, fluux.New(parse.Config{Path: tt.path}), userLine)
			assert.Equal(t, tt.want, got[0].SessionID)
		})
	}
	// A header wins over the path from its line on.
	got := formattest.MustParse(t, fluux.New(parse.Config{Path: "/m/alice@example.com/history.jsonl"}), userLine, header, replyLine)
	assert.Equal(t, "alice@example.com/history", got[0].SessionID)
	assert.Equal(t, "alice@example.com/2025-02-08T19:00:00Z", got[1].SessionID)
	assert.Equal(t, "alice@example.com/2025-02-08T19:00:00Z", got[2].SessionID)
}

func TestParser_ArchiveKeepsSession(t *testing.T) {
	// /new renames history.jsonl into sessions/: the same lines read under
	// the new name give the same session and entry ids.
	lines := []string{header, userLine, replyLine, reaction}
	before := formattest.MustParse(t, fluux.New(parse.Config{Path: "m/alice@example.com/history.jsonl"}), lines...)
	after := formattest.MustParse(t, fluux.New(parse.Config{Path: "m/alice@example.com/sessions/20250208-200000.jsonl"}), lines...)
	require.Len(t, after, len(before))
	for i := range before {
		assert.Equal(t, before[i].Key(), after[i].Key(), "entry %d", i)
	}
}

func TestParser_Errors(t *testing.T) {
	tests := []struct {
		name     string
		line     string
		sentinel error
		offset   int64 // within the line
		entries  int
	}{
		{"NotObject", `[1]`, parse.ErrNotObject, 0, 0},
		{"SecondNotObject", header + ` "x"`, parse.ErrNotObject, int64(len(header)) + 1, 1},
		{"Truncated", `{"type":"message","role":"us`, jsonl.ErrUnexpectedEnd, 28, 0},
		{"BadTS", `{"type":"message","role":"user","content":"x","ts":"noon"}`, parse.ErrBadField, 51, 0},
		{"ContentNumber", `{"type":"message","role":"user","content":1}`, parse.ErrBadField, 42, 0},
		{"MissingRole", `{"type":"message","content":"x"}`, parse.ErrMissingField, 0, 0},
		{"SecondMissingRole", header + ` {"type":"message","content":"x"}`, parse.ErrMissingField, int64(len(header)) + 1, 1},
		{"MissingJID", `{"type":"session","created":"2025-02-08T19:00:00Z"}`, parse.ErrMissingField, 0, 0},
		{"AttachmentsObject", `{"type":"message","role":"user","content":"","attachments":{}}`, parse.ErrBadField, 59, 0},
		{"EmojiNumber", `{"type":"message","role":"user","content":"","reaction":{"emojis":[1]}}`, parse.ErrBadField, 67, 0},
		{"SyntaxInAttachments", `{"type":"message","role":"user","content":"","attachments":[{"size":+1}]}`, jsonl.ErrSyntax, 68, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := fluux.New(parse.Config{Path: "a@b/history.jsonl"})
			got, err := p.Parse(nil, jsonl.Line{Bytes: []byte(tt.line), Offset: 1000, Number: 7})
			require.Error(t, err)
			assert.Len(t, got, tt.entries)
			var de *schema.DecodeError
			require.ErrorAs(t, err, &de)
			assert.True(t, errors.Is(err, tt.sentinel), "Parse(%q) = %v, want %v", tt.line, err, tt.sentinel)
			assert.Equal(t, "a@b/history.jsonl", de.Path)
			assert.Equal(t, int64(7), de.Line)
			assert.Equal(t, 1000+tt.offset, de.Offset)

			// The parser stays usable.
			got, err = p.Parse(got[:0], jsonl.Line{Bytes: []byte(userLine), Number: 8})
			require.NoError(t, err)
			assert.Len(t, got, 1)
		})
	}
}

func TestParser_Format(t *testing.T) {
	assert.Equal(t, schema.FormatFluux, fluux.New(parse.Config{}).Format())
}
