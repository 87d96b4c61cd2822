package formats

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/schema"
)

func headLines(data []byte) [][]byte {
	var out [][]byte
	for line := range bytes.Lines(data) {
		out = append(out, bytes.TrimRight(line, "\r\n"))
	}
	return out
}

func TestDetect_Corpus(t *testing.T) {
	root := "../../testdata/corpus"
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		want := map[string]schema.Format{
			"claude-code": schema.FormatClaudeCode,
			"codex":       schema.FormatCodex,
			"pi":          schema.FormatPi,
		}[strings.Split(rel, string(filepath.Separator))[0]]
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		got, err := Detect(headLines(data))
		require.NoError(t, err, rel)
		require.Equal(t, want, got, rel)
		n++
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, n, 20)
}

func TestDetect(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want schema.Format
	}{
		{"PiHeaderV3", `{"type":"session","version":3,"id":"a","timestamp":"2026-01-01T00:00:00Z","cwd":"/x"}`, schema.FormatPi},
		{"PiHeaderV1", `{"type":"session","id":"a","timestamp":"2026-01-01T00:00:00Z","cwd":"/x","provider":"anthropic"}`, schema.FormatPi},
		{"PiHeaderless", `{"type":"message","id":"1a2b3c4d","parentId":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi","timestamp":1767225600000}}`, schema.FormatPi},
		{"PiHeaderlessToolResult", `{"type":"message","id":"1a2b3c4d","message":{"role":"toolResult","toolCallId":"c","content":[]}}`, schema.FormatPi},
		{"Fluux", `{"type":"session","version":1,"created":"2026-02-11T15:24:00.123456789+00:00","jid":"alice@example.com"}`, schema.FormatFluux},
		{"FluuxHeaderless", `{"type":"message","role":"user","content":"hi","ts":"2026-02-11T15:24:00Z"}`, schema.FormatFluux},
		{"M4dtimes", `{"type":"session","version":1,"id":"a1b2c3d4","timestamp":"2026-02-24T23:14:59.123456789Z","userId":7756297856}`, schema.FormatM4dtimes},
		{"M4dtimesHeaderless", `{"type":"message","id":"e5f6a7b8","timestamp":"2026-02-24T23:14:59Z","message":{"role":"user","content":[{"type":"tool_result","tool_result":{"tool_call_id":"t","content":"ok","is_error":false}}]}}`, schema.FormatM4dtimes},
		{"CodexMeta", `{"timestamp":"2026-02-23T11:40:29.275Z","type":"session_meta","payload":{"id":"019c"}}`, schema.FormatCodex},
		{"ClaudeAfterBookkeeping", "{\"type\":\"permission-mode\",\"permissionMode\":\"default\",\"sessionId\":\"s\"}\n{\"type\":\"user\",\"uuid\":\"u\",\"sessionId\":\"s\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}", schema.FormatClaudeCode},
		{"BrokenFirstLine", "{\"type\":\"sess\n{\"timestamp\":\"2026-02-23T11:40:29.275Z\",\"type\":\"session_meta\",\"payload\":{\"id\":\"019c\"}}", schema.FormatCodex},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Detect(headLines([]byte(tc.in)))
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestDetect_Unknown(t *testing.T) {
	for _, in := range []string{
		``,
		`not json`,
		`{"key":"k","content":"fact","ts":"2026-01-01T00:00:00Z"}`, // Fluux knowledge.jsonl
		`{"type":"permission-mode","permissionMode":"default"}`,
		`[1,2,3]`,
	} {
		_, err := Detect(headLines([]byte(in)))
		require.ErrorIs(t, err, ErrUnknownFormat, in)
	}
}
