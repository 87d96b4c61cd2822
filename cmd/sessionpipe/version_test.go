package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
)

// `sessionpipe version` shows the dates of both embedded snapshots and
// the fingerprint of the table in use, which a price file changes.
func TestVersion_PriceSnapshots(t *testing.T) {
	code, stdout, stderr := runCommand(t, "version")
	require.Equal(t, exitOK, code, stderr)
	for _, s := range price.Snapshots() {
		require.Contains(t, stdout, "prices "+s.Source)
		require.Contains(t, stdout, "snapshot "+s.Date)
	}
	require.Contains(t, stdout, "fingerprint "+price.Default().Fingerprint()+" (embedded)")

	file := filepath.Join(t.TempDir(), "prices.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"glm-4.7": {"input_cost_per_token": 1e-6}}`), 0o644))
	code, stdout, stderr = runCommand(t, "version", "-prices", file)
	require.Equal(t, exitOK, code, stderr)
	require.NotContains(t, stdout, price.Default().Fingerprint())
	require.Contains(t, stdout, "overridden by "+file)
}

// `sessionpipe sessions --prices FILE` reprices every call at its own
// time with the file's dated rows, and --json says where each session's
// cost came from.
func TestSessions_PricesFileReprices(t *testing.T) {
	line := func(uuid, ts, model string) string {
		return `{"type":"assistant","uuid":"` + uuid + `","sessionId":"s1","timestamp":"` + ts + `","cwd":"/w","version":"2.1.0",` +
			`"requestId":"r` + uuid + `","message":{"role":"assistant","id":"m` + uuid + `","model":"` + model + `",` +
			`"content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":1000000,"output_tokens":0}}}`
	}
	path := writeTranscript(t, filepath.Join(t.TempDir(), "s1.jsonl"), strings.Join([]string{
		line("a", "2026-01-10T00:00:00.000Z", "glm-4.7"),
		line("b", "2026-03-10T00:00:00.000Z", "glm-4.7"),
		line("c", "2026-03-10T00:00:01.000Z", "claude-opus-4-5"),
	}, "\n")+"\n")
	sessions := func(args ...string) index.Session {
		t.Helper()
		code, stdout, stderr := runCommand(t, append([]string{"sessions", "-q", "--json"}, args...)...)
		require.Equal(t, exitOK, code, stderr)
		var all []index.Session
		require.NoError(t, json.Unmarshal([]byte(stdout), &all))
		require.Len(t, all, 1)
		return all[0]
	}
	s := sessions(path)
	require.InDelta(t, 0.6+0.6+5, s.CostUSD, 1e-9)
	require.Equal(t, map[string]index.PriceSource{
		price.SourceModelsDev: {Calls: 2, CostUSD: 1.2},
		price.SourceLiteLLM:   {Calls: 1, CostUSD: 5},
	}, s.PriceSources)

	file := filepath.Join(t.TempDir(), "prices.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"glm-4.7": {"periods": [
		{"valid_until": "2026-02-01", "input_cost_per_token": 2e-7}]}}`), 0o644))
	s = sessions("--prices", file, path)
	require.InDelta(t, 0.2+0.6+5, s.CostUSD, 1e-9, "the January call at January's price")
	require.Equal(t, map[string]index.PriceSource{
		price.SourceOverride: {Calls: 2, CostUSD: 0.8},
		price.SourceLiteLLM:  {Calls: 1, CostUSD: 5},
	}, s.PriceSources)
}
