package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/schema"
)

// sessionFigures is what TestSessions_GeneratedSources checks of a session.
type sessionFigures struct {
	Format              schema.Format
	Turns, Calls, Total int64
}

// `sessionpipe sessions` on the generated samples of issue #21: an
// OpenClaw session counted from its transcript once (its repair backup
// and its trajectory add nothing), one counted from the repair backup
// alone, one from its trajectory alone (run totals, format
// openclaw-trajectory); and a paginated Codex parent, its subagent and a
// fork, each call once.
func TestSessions_GeneratedSources(t *testing.T) {
	got := map[string]sessionFigures{}
	for _, s := range ours(t, filepath.Join(corpus, "generated", "openclaw"), filepath.Join(corpus, "generated", "codex")) {
		got[s.SessionID] = sessionFigures{s.Format, s.Turns, s.APICalls, s.TotalTokens}
	}
	require.Equal(t, map[string]sessionFigures{
		"6c1d2e3f-4a5b-4c6d-9e7f-8a9b0c1d2e3f": {schema.FormatPi, 1, 2, 50_800},
		"7d2e3f4a-5b6c-4d7e-8f9a-0b1c2d3e4f5a": {schema.FormatPi, 1, 1, 19_100},
		"8e3f4a5b-6c7d-4e8f-9a0b-1c2d3e4f5a6b": {schema.FormatTrajectory, 2, 2, 139_850},
		"019e1a2b-3c4d-7e5f-8a6b-7c8d9e0f1a2b": {schema.FormatCodex, 1, 2, 23_500},
		"019e1a2b-5f60-7a71-8b82-93a4b5c6d7e8": {schema.FormatCodex, 0, 1, 3_400},
		"019e1a3c-0a1b-7c2d-8e3f-4a5b6c7d8e9f": {schema.FormatCodex, 1, 2, 9_900},
	}, got)

	// The pointer file beside the trajectory is not read, and said so.
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"sessions", filepath.Join(corpus, "generated", "openclaw")}, &stdout, &stderr)
	require.Equal(t, exitOK, code, "stderr: %s", stderr.String())
	require.Contains(t, stderr.String(), "; 1 skipped (names not read as transcripts)", "the pointer file")
}
