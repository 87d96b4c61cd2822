package formats

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// A document's format is told by its top-level shape alone.
func TestParseDocument_Detect(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want schema.Format
		err  error
	}{
		{"AmpMessages", `{"v":1,"id":"T-1","messages":[]}`, schema.FormatAmp, nil},
		{"AmpCreated", `{"id":"T-1","created":1790154000000,"messages":[]}`, schema.FormatAmp, nil},
		{"AmpLedger", `{"id":"thread-a","usageLedger":{"events":[]}}`, schema.FormatAmp, nil},
		{"AmpWithoutVersion", `{"id":"T-1","messages":[]}`, "", ErrUnknownFormat},
		{"GeminiSession", `{"sessionId":"s","projectHash":"h","startTime":"2026-01-01T00:00:00Z","messages":[]}`, schema.FormatGeminiCLI, nil},
		{"GeminiMetadataLine", `{"sessionId":"s","projectHash":"h","startTime":"2026-01-01T00:00:00Z"}`, "", ErrUnknownFormat},
		{"Droid", `{"model":"gpt-5","tokenUsage":{"inputTokens":1}}`, schema.FormatDroid, nil},
		{"DroidNoUsage", `{"model":"gpt-5","autonomyMode":"auto"}`, "", ErrUnknownFormat},
		{"Config", `{"theme":"dark"}`, "", ErrUnknownFormat},
		{"Codebuff", `[{"id":"u1","variant":"user","content":"hi"}]`, schema.FormatCodebuff, nil},
		{"CodebuffRole", " \n[{\"role\":\"assistant\"},5]", schema.FormatCodebuff, nil},
		{"EmptyArray", `[]`, "", ErrUnknownFormat},
		{"Array", `[{"id":"T-1","messages":[]}]`, "", ErrUnknownFormat},
		{"ArrayOfRoleNumbers", `[{"role":1}]`, "", ErrUnknownFormat},
		{"ArrayHalfWritten", `[{"id":"u1","variant":"user"},{"id":"a`, "", jsonl.ErrUnexpectedEnd},
		{"ArrayTwoValues", `[{"variant":"user"}] []`, "", jsonl.ErrSyntax},
		{"Scalar", `5`, "", parse.ErrNotObject},
		{"HalfWritten", `{"v":1,"id":"T-1","messages":[{"role":"us`, "", jsonl.ErrUnexpectedEnd},
		{"TwoValues", `{"id":"T-1","v":1,"messages":[]} {}`, "", jsonl.ErrSyntax},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ParseDocument([]byte(tc.doc), parse.Config{Path: "x.json"}, time.Time{})
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				if !errors.Is(tc.err, ErrUnknownFormat) {
					var de *schema.DecodeError
					require.ErrorAs(t, err, &de, "a located error")
				}
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, d.Format)
		})
	}
}

func TestIsDocumentCandidate(t *testing.T) {
	for name, want := range map[string]bool{
		"T-5f1c.json": true, "session-2026-01-01T00-00-abcd1234.json": true, "0b7c.settings.json": true,
		"sessions.json": false, "agent-a1.meta.json": false, "s.trajectory-path.json": false, "settings.json": false,
		"x.jsonl": false, "T-1.json.bak": false,
		"chat-messages.json": true, "chat-messages.json.tmp": false, "old-chat-messages.json": false,
	} {
		require.Equal(t, want, IsDocumentCandidate(name), name)
	}
}

// The offline reader reads documents whole beside JSONL files: each
// agent's entries, a .json of no known shape skipped as not a transcript,
// a broken one reported as a file error, a .meta.json sidecar left out by
// its name.
func TestFileReader_Documents(t *testing.T) {
	dir := t.TempDir()
	copyFile := func(src, dst string) {
		data, err := os.ReadFile(src)
		require.NoError(t, err)
		writeFile(t, filepath.Join(dir, dst), string(data))
	}
	copyFile("amp/testdata/thread/input.json", "amp/threads/T-5f1c9a2e.json")
	copyFile("droid/testdata/settings/input.json", "factory/sessions/-home-dev-proj/0b7c.settings.json")
	copyFile("gemini/testdata/document/input.json", "gemini/tmp/h/chats/session-2026-09-23T08-00-9d2f4c1a.json")
	copyFile("codebuff/testdata/document/input.json", "manicode/projects/p/chats/2026-01-02T03-04-05.000Z/chat-messages.json")
	writeFile(t, filepath.Join(dir, "manicode", "projects", "p", "chats", "new", "chat-messages.json"), `[]`)
	writeFile(t, filepath.Join(dir, "amp", "threads", "T-settings.json"), `{"amp.url":"https://ampcode.com"}`)
	writeFile(t, filepath.Join(dir, "amp", "threads", "T-broken.json"), `{"v":1,"id":"T-broken","messages":[`)
	writeFile(t, filepath.Join(dir, "claude", "agent-a1.meta.json"), `{"agentType":"x"}`)

	var mu sync.Mutex
	var fileErrs []string
	fr, err := NewFileReader(FileReaderConfig{
		Config:      parse.Config{Host: "h"},
		OnFileError: func(err error) { mu.Lock(); fileErrs = append(fileErrs, err.Error()); mu.Unlock() },
	})
	require.NoError(t, err)
	byFormat := map[schema.Format]int{}
	calls := map[string]int64{}
	err = fr.Read(t.Context(), []string{dir}, func(entries []schema.Entry) {
		for _, e := range entries {
			byFormat[e.Format]++
			if e.Usage != nil {
				calls[e.UsageKey] = e.Usage.Total()
			}
		}
	})
	require.NoError(t, err)
	require.Equal(t, map[schema.Format]int{schema.FormatAmp: 6, schema.FormatDroid: 1, schema.FormatGeminiCLI: 4, schema.FormatCodebuff: 8}, byFormat)
	require.Len(t, calls, 4+4) // two Amp replies, Droid's total, Gemini's reply; Codebuff's four replies (one written twice)
	st := fr.Stats()
	require.Equal(t, int64(4), st.Files)
	require.Equal(t, int64(2), st.Skipped, "T-settings.json, of no known shape; the empty chat")
	require.Equal(t, int64(1), st.Failed, "the broken thread")
	require.Equal(t, int64(1), st.SkippedNames, "the .meta.json sidecar")
	require.Len(t, fileErrs, 1)
	require.Contains(t, fileErrs[0], "T-broken.json")
}
