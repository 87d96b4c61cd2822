package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A session id holding ESC, CR or NUL is printed escaped in the table,
// and as JSON escapes it in --json.
func TestSessions_EscapesControlCharacters(t *testing.T) {
	line := `{"type":"user","uuid":"u1","sessionId":"s\u001b[2J\r\u0000x","timestamp":"2026-03-01T08:00:00.000Z","message":{"role":"user","content":"hi"}}`
	path := writeTranscript(t, filepath.Join(t.TempDir(), "s.jsonl"), line+"\n")
	code, stdout, stderr := runCommand(t, "sessions", "-q", path)
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, `s\x1b[2J\r\x00x`)
	require.NotContains(t, stdout, "\x1b")
	require.NotContains(t, stdout, "\r")
	require.NotContains(t, stdout, "\x00")

	code, stdout, stderr = runCommand(t, "sessions", "-q", "--json", path)
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, `"session_id": "s\u001b[2J\r\u0000x"`)
}
