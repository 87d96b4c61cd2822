package api_test

import (
	"bufio"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/testutil/indextest"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/api"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
)

func TestIndexer_API(t *testing.T) {
	t.Parallel()
	files := indextest.ReadFiles(t, "../../../testdata/corpus")
	stream := indextest.Interleave(files, rand.New(rand.NewPCG(5, 5)))
	js := indextest.NewStream(t, bus.StreamConfig{})
	half := len(stream) / 2
	last := indextest.Publish(t, js, stream[:half])
	ix, _ := indextest.RunIndexer(t, index.IndexerConfig{JS: js, Dir: t.TempDir(), Pricer: price.Default(), CommitInterval: 10 * time.Millisecond})
	indextest.WaitApplied(t, ix, last)
	const token = "s3cret"
	srv := httptest.NewServer(api.Handler(ix, api.Config{Token: token}))
	defer srv.Close()

	t.Run("Auth", func(t *testing.T) {
		var e map[string]string
		require.Equal(t, http.StatusUnauthorized, indextest.GetJSON(t, srv, "/api/sessions", "", &e))
		require.Contains(t, e["error"], "bearer token")
		require.Equal(t, http.StatusUnauthorized, indextest.GetJSON(t, srv, "/api/sessions", "wrong", &e))
		var h map[string]any
		require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, "/healthz", "", &h), "health needs no token")
		require.Equal(t, "ok", h["status"])
	})

	all, err := ix.Sessions()
	require.NoError(t, err)
	// As a client sees them: through JSON.
	data, err := json.Marshal(all)
	require.NoError(t, err)
	all = nil
	require.NoError(t, json.Unmarshal(data, &all))
	t.Run("Sessions", func(t *testing.T) {
		var got []index.Session
		cursor := ""
		for {
			var page struct {
				Sessions   []index.Session `json:"sessions"`
				NextCursor string          `json:"next_cursor"`
			}
			require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, "/api/sessions?limit=3&cursor="+url.QueryEscape(cursor), token, &page))
			got = append(got, page.Sessions...)
			if page.NextCursor == "" {
				break
			}
			cursor = page.NextCursor
		}
		require.ElementsMatch(t, all, got)
		for i := 1; i < len(got); i++ {
			require.False(t, got[i].LastTS.After(got[i-1].LastTS), "most recent first")
		}
		var filtered struct{ Sessions []index.Session }
		require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, "/api/sessions?format=codex&sort=cost_usd", token, &filtered))
		for _, s := range filtered.Sessions {
			require.Equal(t, "codex", string(s.Format))
		}
		require.NotEmpty(t, filtered.Sessions)
		for _, bad := range []string{"limit=0", "limit=x", "since=yesterday", "sort=random", "cursor=%21%21"} {
			var e map[string]string
			require.Equal(t, http.StatusBadRequest, indextest.GetJSON(t, srv, "/api/sessions?"+bad, token, &e), bad)
			require.NotEmpty(t, e["error"], bad)
		}
	})

	t.Run("Session", func(t *testing.T) {
		var best index.Session
		for _, s := range all {
			if s.Turns > best.Turns {
				best = s
			}
		}
		var got struct {
			Session index.Session `json:"session"`
			Turns   []index.Turn  `json:"turns"`
		}
		require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, "/api/sessions/"+url.PathEscape(best.SessionID), token, &got))
		require.Equal(t, best.SessionID, got.Session.SessionID)
		require.GreaterOrEqual(t, int64(len(got.Turns)), best.Turns)
		var calls int64
		for _, turn := range got.Turns {
			calls += turn.APICalls
		}
		require.Equal(t, best.APICalls, calls)
		var e map[string]string
		require.Equal(t, http.StatusNotFound, indextest.GetJSON(t, srv, "/api/sessions/nope", token, &e))
		require.Contains(t, e["error"], `"nope" not found`)
	})

	t.Run("Usage", func(t *testing.T) {
		var got struct {
			GroupBy string           `json:"group_by"`
			Rows    []index.UsageRow `json:"rows"`
		}
		require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, "/api/usage?group_by=model", token, &got))
		require.Equal(t, "model", got.GroupBy)
		var total, want int64
		for _, r := range got.Rows {
			total += r.TotalTokens
		}
		for _, s := range all {
			want += s.TotalTokens
		}
		require.Equal(t, want, total)
		var e map[string]string
		require.Equal(t, http.StatusBadRequest, indextest.GetJSON(t, srv, "/api/usage?group_by=weekday", token, &e))
		require.Contains(t, e["error"], "group_by")
	})

	t.Run("Metrics", func(t *testing.T) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		text := string(body)
		require.Contains(t, text, "# TYPE sessionpipe_tokens_total counter")
		require.Contains(t, text, `sessionpipe_tokens_total{host="h",model=`)
		require.Contains(t, text, "sessionpipe_index_applied_seq ")
	})

	t.Run("Events", func(t *testing.T) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/api/events", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
		r := bufio.NewReader(resp.Body)
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(line, ":"), "a comment opens the stream: %q", line)
		indextest.Publish(t, js, stream[half:])
		for {
			line, err := r.ReadString('\n')
			require.NoError(t, err)
			if line == "event: session\n" {
				data, err := r.ReadString('\n')
				require.NoError(t, err)
				var s index.Session
				require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(data, "data: ")), &s), data)
				require.NotEmpty(t, s.SessionID)
				return
			}
		}
	})
}
