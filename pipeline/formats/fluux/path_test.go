package fluux_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/fluux"
)

func TestIsTranscriptPath(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"data/memory/alice@example.com/history.jsonl", true},
		{"/srv/fluux/data/memory/room@conference.localhost/history.jsonl", true},
		{"data/memory/alice@example.com/sessions/20250208-190000.jsonl", true},
		{"alice@example.com/sessions/20260211-152400.jsonl", true},
		{"data/memory/alice@example.com/knowledge.jsonl", false},
		{"data/memory/alice@example.com/history.md", false},
		{"data/memory/alice@example.com/sessions/2025-02-08.jsonl", false},
		{"data/memory/alice@example.com/sessions/20250208-1900000.jsonl", false},
		{"data/memory/alice@example.com/sessions/2025020x-190000.jsonl", false},
		{"data/memory/alice@example.com/archive/20250208-190000.jsonl", false},
		{"data/memory/alice@example.com/20250208-190000.jsonl", false},
		{"data/memory/alice/history.jsonl", false},
		{"data/memory/sessions/20250208-190000.jsonl", false},
		{"history.jsonl", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			assert.Equal(t, tt.want, fluux.IsTranscriptPath(tt.path), "IsTranscriptPath(%q)", tt.path)
		})
	}
}
