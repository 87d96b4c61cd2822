package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/index"
)

// hostileAPI serves the answers of an indexer whose transcripts hold
// terminal escapes in session ids, prompts and cursors.
func hostileAPI(t *testing.T) string {
	t.Helper()
	answers := map[string]any{
		"/api/sessions": map[string]any{
			"sessions":    []map[string]any{{"session_id": "s\x1b[2J\r\x00", "format": "pi", "models": []string{"m\x1b]0;t\a"}}},
			"next_cursor": "c\x1b[1A",
		},
		"/api/sessions/x": map[string]any{
			"session": map[string]any{"session_id": "s\x1b[2J"},
			"turns":   []map[string]any{{"prompt": "do \x1b[31mthis\x00 " + strings.Repeat("é", 80)}},
		},
		"/api/usage":  map[string]any{"group_by": "model", "rows": []map[string]any{{"key": "k\x1b[H"}}},
		"/api/alerts": map[string]any{"alerts": []map[string]any{{"rule": "r\x1b", "key": "k\r", "host": "h\u009b"}}},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := answers[r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			json.NewEncoder(w).Encode(map[string]string{"error": "no session \x1b[2Jx"})
			return
		}
		json.NewEncoder(w).Encode(a)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// requireNoControls fails if out holds a control character other than
// the newlines that end its lines.
func requireNoControls(t *testing.T, out string) {
	t.Helper()
	for i, r := range out {
		if r != '\n' && (r < 0x20 || r >= 0x7f && r < 0xa0) {
			require.Failf(t, "control character printed", "%q at %d in:\n%s", r, i, out)
		}
	}
}

// What the query commands print for a terminal holds no control
// character from the transcripts; -json prints the API's JSON, escaped
// by JSON itself.
func TestQuery_EscapesControlCharacters(t *testing.T) {
	api := hostileAPI(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"sessions"}, []string{`s\x1b[2J\r\x00`, `m\x1b]0;t\a`, `-cursor c\x1b[1A`}},
		{[]string{"session", "x"}, []string{`s\x1b[2J`, `do \x1b[31mthis\x00 éé`, "é…\n"}},
		{[]string{"usage", "-by", "model"}, []string{`k\x1b[H`}},
		{[]string{"alerts"}, []string{`r\x1b`, `k\r`, `h\u009b`}},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{tc.args[0], "-api", api}, tc.args[1:]...)
			err := run(t.Context(), args, env(nil), &stdout, &stderr)
			require.NoError(t, err, stderr.String())
			requireNoControls(t, stdout.String())
			for _, w := range tc.want {
				require.Contains(t, stdout.String(), w)
			}
		})
	}
	var stdout, stderr bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"sessions", "-json", "-api", api}, env(nil), &stdout, &stderr))
	require.Contains(t, stdout.String(), `"session_id":"s\u001b[2J\r\u0000"`)

	err := run(t.Context(), []string{"session", "-api", api, "missing"}, env(nil), &stdout, &stderr)
	require.ErrorContains(t, err, `no session \x1b[2Jx`)
}

// A -by the API would refuse is refused by the command, in its own words
// (-by, not the API's group_by), before asking; a turn of one call says
// "1 call".
func TestQuery_UsageByAndPlurals(t *testing.T) {
	api := hostileAPI(t)
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"usage", "-api", api, "-by", "team"}, env(nil), &stdout, &stderr)
	require.ErrorContains(t, err, `-by "team": want host, format, model, project, day, hour or label:NAME`)
	require.NotContains(t, err.Error(), "group_by")

	var b bytes.Buffer
	require.NoError(t, writeTurns(&b, []index.Turn{{APICalls: 1, TotalTokens: 10, CostUSD: 0.0019}, {APICalls: 2}}))
	require.Contains(t, b.String(), " 1 call  10 tokens  $0.0019 ")
	require.Contains(t, b.String(), " 2 calls  0 tokens  $0.00 ")
}
