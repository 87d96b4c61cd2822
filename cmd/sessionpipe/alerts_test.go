package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
)

// alerts check fires a session rule once for each session above it (the
// sessions `sessions` counts above it), however old the files: history
// is what it is for; a fleet rule fires once.
func TestAlertsCheck_FiresOnHistory(t *testing.T) {
	files := corpusFiles(t, "claude-code", "claude-code-log")
	want := 0
	for _, s := range ours(t, files...) {
		if s.TotalTokens > 100_000 {
			want++
		}
	}
	require.Positive(t, want)
	rules := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(rules, []byte("rules:\n  - name: big\n    scope: session\n    metric: total_tokens\n    above: 100000\n"+
		"  - name: fleet\n    scope: fleet\n    metric: cost_usd\n    window: 24h\n    above: 1\n"), 0o644))
	code, stdout, stderr := runCommand(t, append([]string{"alerts", "check", "-rules", rules, "-json"}, files...)...)
	require.Equal(t, exitOK, code, stderr)
	var got struct{ Alerts []alert.Event }
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	var big, fleet int
	for _, e := range got.Alerts {
		switch e.Rule {
		case "big":
			big++
			require.Greater(t, e.Value, 100_000.0)
		case "fleet":
			fleet++
		}
	}
	require.Equal(t, want, big)
	require.Positive(t, fleet, "$2.49 on 2025-09-03 alone")
	require.Contains(t, stderr, "would fire")

	code, stdout, stderr = runCommand(t, append([]string{"alerts", "check", "-q", "-rules", rules}, files...)...)
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "TIME  ")
	require.Contains(t, stdout, "big")

	code, _, stderr = runCommand(t, "alerts", "check", files[0])
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "-rules FILE is required")
	code, _, _ = runCommand(t, "alerts", "fire")
	require.Equal(t, exitUsage, code)
}
