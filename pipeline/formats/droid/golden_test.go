package droid_test

import (
	"testing"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/golden"
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
