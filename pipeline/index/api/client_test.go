package api_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/index/api"
)

// The client's errors say what the API said: the status, its message as
// sent, the candidates of an ambiguous id; a body that is not the API's
// JSON leaves the message empty; an API that cannot be reached names its
// address; the token goes as a bearer token.
func TestClient_Errors(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get("Authorization") != "Bearer t":
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":"missing or wrong bearer token"}`))
		case r.URL.EscapedPath() == "/api/sessions/a%2Fb":
			w.WriteHeader(http.StatusConflict)
			w.Write([]byte(`{"error":"session \"a/b\" \u001b: 2 sessions","candidates":[{"format":"pi","host":"h1","session_id":"a/b"},{"format":"pi","host":"h2","session_id":"a/b"}]}`))
		case r.URL.Path == "/api/usage":
			w.WriteHeader(http.StatusBadGateway)
			w.Write([]byte("<html>proxy</html>"))
		default:
			require.Equal(t, "5", r.URL.Query().Get("limit"))
			w.Write([]byte(`{"alerts":[],"suppressed":[],"suppressed_total":3}`))
		}
	}))
	defer srv.Close()
	c := &api.Client{URL: srv.URL + "/", Token: "t"}

	a, err := c.Alerts(t.Context(), url.Values{"limit": {"5"}})
	require.NoError(t, err)
	require.Equal(t, uint64(3), a.SuppressedTotal)

	_, err = c.Session(t.Context(), "a/b", nil)
	var e *api.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, http.StatusConflict, e.Code)
	require.Equal(t, "session \"a/b\" \x1b: 2 sessions", e.Message)
	require.Len(t, e.Candidates, 2)
	require.Equal(t, "h2", e.Candidates[1].Host)

	_, err = c.Usage(t.Context(), nil)
	require.ErrorAs(t, err, &e)
	require.Equal(t, http.StatusBadGateway, e.Code)
	require.Empty(t, e.Message)
	require.Contains(t, err.Error(), srv.URL+" /api/usage: 502 Bad Gateway")

	_, err = (&api.Client{URL: srv.URL}).Sessions(t.Context(), nil)
	require.ErrorAs(t, err, &e)
	require.Equal(t, http.StatusUnauthorized, e.Code)
	require.Equal(t, "missing or wrong bearer token", e.Message)

	_, err = (&api.Client{URL: "http://127.0.0.1:1"}).Sessions(t.Context(), nil)
	require.ErrorContains(t, err, "cannot reach the indexer at http://127.0.0.1:1")
	require.False(t, errors.As(err, &e))
}
