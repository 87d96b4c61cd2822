package droid_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/golden"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/droid"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

func parseDoc(cfg parse.Config, data []byte) ([]schema.Entry, []error) {
	fields, err := parse.Fields(data)
	if err != nil {
		return nil, []error{&schema.DecodeError{Path: cfg.Path, Err: err}}
	}
	cfg.Path = "sessions/-home-dev-proj/0b7c.settings.json"
	return droid.Parse(nil, cfg, data, fields, time.Date(2026, 9, 23, 7, 0, 0, 0, time.UTC))
}

func TestParse_Golden(t *testing.T) {
	golden.RunDocuments(t, "testdata", parseDoc)
}

func TestNormalizeModel(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"custom:Claude-Sonnet-4.5-[Anthropic]", "claude-sonnet-4-5"},
		{"gpt-5.1-codex", "gpt-5-1-codex"},
		{"  GLM 4.6 ", "glm-4-6"},
		{"claude-opus-4-1-20250805", "claude-opus-4-1-20250805"},
	} {
		if got := droid.NormalizeModel(tc.in); got != tc.want {
			t.Errorf("NormalizeModel(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A settings file that names no model takes the one Droid's transcript
// beside it names (its first "Model:"), as ccusage does.
func TestParse_ModelFromTranscript(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "0b7c.settings.json")
	doc := []byte(`{"providerLock":"anthropic","tokenUsage":{"inputTokens":10,"outputTokens":5}}`)
	require.NoError(t, os.WriteFile(path, doc, 0o644))
	fields, err := parse.Fields(doc)
	require.NoError(t, err)
	entries, errs := droid.Parse(nil, parse.Config{Path: path}, doc, fields, time.Time{})
	require.Empty(t, errs)
	require.Equal(t, "", entries[0].Model, "no transcript: no model")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "0b7c.jsonl"), []byte(
		`{"type":"session_start","id":"0b7c"}`+"\n"+
			`{"type":"message","message":{"role":"user","content":[{"type":"text","text":"<system-reminder>Model: Claude Opus 4.1 [Anthropic]\nCwd: /p</system-reminder>"}]}}`+"\n"), 0o644))
	entries, _ = droid.Parse(nil, parse.Config{Path: path}, doc, fields, time.Time{})
	require.Equal(t, "claude-opus-4-1", entries[0].Model)
	require.Equal(t, "anthropic", entries[0].Provider)
}
