package api_test

import (
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/testutil/indextest"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/api"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
)

// The API of the dashboard: the first page of sessions carries the
// total, later pages (by cursor) do not; q searches; usage by bucket sums
// to the same total as without, in any time zone; tz and bucket are
// checked, naming the parameter.
func TestIndexer_APIForTheDashboard(t *testing.T) {
	t.Parallel()
	files := indextest.ReadFiles(t, "../../../testdata/corpus")
	js := indextest.NewStream(t, bus.StreamConfig{})
	last := indextest.Publish(t, js, indextest.Interleave(files, rand.New(rand.NewPCG(9, 9))))
	ix, _ := indextest.RunIndexer(t, index.IndexerConfig{JS: js, Dir: t.TempDir(), Pricer: price.Default(), CommitInterval: 10 * time.Millisecond})
	indextest.WaitApplied(t, ix, last)
	srv := httptest.NewServer(api.Handler(ix, api.Config{}))
	defer srv.Close()
	all, err := ix.Sessions()
	require.NoError(t, err)

	var first sessionsAnswer
	var next struct {
		sessionsAnswer
		NextCursor string `json:"next_cursor"`
	}
	require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, "/api/sessions?limit=2", "", &next))
	require.NotNil(t, next.Total)
	listed := *next.Total
	require.Positive(t, listed)
	require.LessOrEqual(t, listed, len(all), "bookkeeping-only sessions are not listed")
	require.NotEmpty(t, next.NextCursor)
	require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, "/api/sessions?limit=2&cursor="+next.NextCursor, "", &first))
	require.Nil(t, first.Total, "a later page does not count again")

	require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, "/api/sessions?q=TEST-SESSION", "", &first))
	require.Equal(t, 1, *first.Total)
	require.Equal(t, "test-session-id", first.Sessions[0].SessionID)

	var plain, bucketed, zoned usageAnswer
	require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, "/api/usage?group_by=model", "", &plain))
	require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, "/api/usage?group_by=model&bucket=day", "", &bucketed))
	require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, "/api/usage?group_by=host&bucket=hour&tz="+url.QueryEscape("Asia/Kolkata"), "", &zoned))
	require.Equal(t, plain.Total, bucketed.Total)
	require.Equal(t, plain.Total, zoned.Total)
	require.Greater(t, len(bucketed.Rows), len(plain.Rows))
	for _, r := range zoned.Rows {
		if r.Bucket != "unknown" {
			require.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d\+05:30$`, r.Bucket)
		}
	}

	for path, want := range map[string]string{
		"/api/usage?tz=Mars%2FOlympus":  `tz "Mars/Olympus"`,
		"/api/usage?tz=Local":           `tz "Local"`,
		"/api/usage?bucket=week":        `bucket "week"`,
		"/api/sessions?tz=Nowhere":      `tz "Nowhere"`,
		"/api/usage?since=2026-13-01":   `since "2026-13-01"`,
		"/api/sessions?until=yesterday": `until "yesterday"`,
	} {
		var e map[string]string
		require.Equal(t, http.StatusBadRequest, indextest.GetJSON(t, srv, path, "", &e), path)
		require.Contains(t, e["error"], want, path)
	}

	// A date is a day of tz: in Kolkata, 2025-12-24 starts at 18:30Z the
	// day before.
	var day usageAnswer
	require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, "/api/usage?group_by=day&tz=Asia%2FKolkata&since=2025-12-24&until=2025-12-24", "", &day))
	for _, r := range day.Rows {
		require.Equal(t, "2025-12-24", r.Key)
	}
}
