package index_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sessionpipe/sessionpipe/schema"
	"github.com/stretchr/testify/require"
)

// Helpers of the tests that read the indexer through its API (copies of
// those of pipeline/index/api's tests).

// getJSON GETs path and decodes the JSON answer into v; it returns the
// status.
func getJSON(t *testing.T, srv *httptest.Server, path, token string, v any) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"), path)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(v), path)
	return resp.StatusCode
}

// do sends a GET of path to h as a client would, with the Host and
// Authorization given, and returns the status and body.
func do(t *testing.T, h http.Handler, host, path, authorization string) (int, string) {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, path, nil)
	req.Host = host
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// callsOfModels returns one session whose API calls use models distinct
// models, each call 10 input and 1 output tokens.
func callsOfModels(models int) []*schema.Entry {
	entries := make([]*schema.Entry, models)
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for i := range entries {
		id := fmt.Sprintf("msg-%d", i)
		entries[i] = &schema.Entry{
			Format: schema.FormatClaudeCode, Host: "h", Path: "/home/u/.claude/projects/p/s.jsonl", Line: int64(i + 1),
			SessionID: "s", EntryID: fmt.Sprintf("e%d", i), TS: t0.Add(time.Duration(i) * time.Millisecond),
			Kind: schema.KindMessage, Role: schema.RoleAssistant, MessageID: id, Model: fmt.Sprintf("model-%05d", i),
			Usage: &schema.Usage{Input: 10, Output: 1}, UsageKey: "claude:" + id + ":req",
		}
	}
	return entries
}
