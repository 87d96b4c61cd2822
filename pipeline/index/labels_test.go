package index_test

import (
	"cmp"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/testutil/indextest"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
	"github.com/sessionpipe/sessionpipe/pipeline/index/api"
	"github.com/sessionpipe/sessionpipe/pipeline/index/store"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
)

// teamOf labels a session's entries as a fleet's hosts would: by team,
// with a cost centre for some, and nothing for others.
func teamOf(session string) map[string]string {
	h := fnv.New32a()
	h.Write([]byte(session))
	switch h.Sum32() % 3 {
	case 0:
		return map[string]string{"team": "infra", "cost_centre": "42"}
	case 1:
		return map[string]string{"team": "research"}
	}
	return nil
}

// labelled returns the corpus with every entry labelled by teamOf its
// session, in a random interleaving of its files.
func labelled(t *testing.T) []*schema.Entry {
	t.Helper()
	files := indextest.ReadFiles(t, "../../testdata/corpus")
	stream := indextest.Interleave(files, rand.New(rand.NewPCG(3, 3)))
	for _, e := range stream {
		e.Labels = teamOf(e.SessionID)
	}
	return stream
}

// The indexer's HTTP API groups usage by a label and filters sessions and
// usage by labels; label:team alert rules fire once per team. Every call
// is labelled by its session here, so usage by team must be the sum of
// the sessions of each team.
func TestIndexer_Labels(t *testing.T) {
	t.Parallel()
	stream := labelled(t)
	rules, err := alert.Parse("rules.yaml", []byte("rules:\n  - name: team-spend\n    scope: label:team\n    metric: total_tokens\n    above: 1000\n    window: 366d\n"))
	require.NoError(t, err)
	js := indextest.NewStream(t, bus.StreamConfig{})
	last := indextest.Publish(t, js, stream)
	ix, _ := indextest.RunIndexer(t, index.IndexerConfig{JS: js, Dir: t.TempDir(), Pricer: price.Default(), Rules: rules, AlertMaxLag: -1,
		CommitInterval: 10 * time.Millisecond})
	indextest.WaitApplied(t, ix, last)
	srv := httptest.NewServer(api.Handler(ix, api.Config{}))
	defer srv.Close()

	all, err := ix.Sessions()
	require.NoError(t, err)
	type sums struct {
		calls, tokens int64
		cost          float64
		sessions      []string
	}
	byTeam := map[string]*sums{}
	for _, s := range all {
		require.Equal(t, teamOf(s.SessionID), s.Labels, "session %s", s.SessionID)
		team := s.Labels["team"]
		if byTeam[team] == nil {
			byTeam[team] = &sums{}
		}
		b := byTeam[team]
		b.calls += s.APICalls
		b.tokens += s.TotalTokens
		b.cost += s.CostUSD
		b.sessions = append(b.sessions, s.SessionID)
	}
	require.Len(t, byTeam, 3, "infra, research and no team")

	t.Run("GroupByLabel", func(t *testing.T) {
		var got struct {
			GroupBy string           `json:"group_by"`
			Rows    []index.UsageRow `json:"rows"`
		}
		require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, "/api/usage?group_by=label:team", "", &got))
		require.Equal(t, "label:team", got.GroupBy)
		keys := make([]string, 0, len(got.Rows))
		for _, r := range got.Rows {
			keys = append(keys, r.Key)
			w := byTeam[r.Key]
			require.NotNil(t, w, "group %q", r.Key)
			require.Equal(t, w.calls, r.Calls, "group %q", r.Key)
			require.Equal(t, w.tokens, r.TotalTokens, "group %q", r.Key)
			require.InDelta(t, w.cost, r.CostUSD, 1e-6, "group %q", r.Key)
		}
		require.True(t, slices.IsSorted(keys))
		require.Subset(t, keys, []string{"infra", "research"})
	})

	t.Run("UsageFilter", func(t *testing.T) {
		var got struct {
			Rows []index.UsageRow `json:"rows"`
		}
		require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, "/api/usage?group_by=label:cost_centre&label=team:infra", "", &got))
		require.Len(t, got.Rows, 1)
		require.Equal(t, "42", got.Rows[0].Key)
		require.Equal(t, byTeam["infra"].tokens, got.Rows[0].TotalTokens)

		require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, "/api/usage?group_by=host&label=team:infra&label=cost_centre:42", "", &got))
		require.Len(t, got.Rows, 1)
		require.Equal(t, byTeam["infra"].tokens, got.Rows[0].TotalTokens)

		require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, "/api/usage?group_by=host&label=team:research&label=cost_centre:42", "", &got))
		require.Empty(t, got.Rows, "no research call has a cost centre")
	})

	t.Run("SessionsFilter", func(t *testing.T) {
		for _, team := range []string{"infra", "research"} {
			var page struct {
				Sessions []index.Session `json:"sessions"`
			}
			require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, "/api/sessions?limit=1000&label=team:"+team, "", &page))
			var ids []string
			for _, s := range page.Sessions {
				require.Equal(t, team, s.Labels["team"])
				ids = append(ids, s.SessionID)
			}
			slices.Sort(ids)
			want := slices.Clone(byTeam[team].sessions)
			slices.Sort(want)
			require.Equal(t, want, ids)
		}
		var page struct {
			Sessions []index.Session `json:"sessions"`
		}
		require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, "/api/sessions?sort=cost_usd&label=team:nobody", "", &page))
		require.Empty(t, page.Sessions)
	})

	t.Run("BadRequests", func(t *testing.T) {
		for _, path := range []string{
			"/api/usage?group_by=label:", "/api/usage?group_by=label:Team", "/api/usage?label=team",
			"/api/sessions?label=team:", "/api/sessions?label=team:a&label=team:b",
		} {
			var e map[string]string
			require.Equal(t, http.StatusBadRequest, indextest.GetJSON(t, srv, path, "", &e), path)
			require.NotEmpty(t, e["error"], path)
		}
	})

	t.Run("Alerts", func(t *testing.T) {
		var fired []string
		for _, e := range ix.Alerts(0) {
			require.Equal(t, "team-spend", e.Rule)
			require.Equal(t, alert.Scope("label:team"), e.Scope)
			fired = append(fired, e.Key)
		}
		// A windowed key re-arms when its window empties (the corpus
		// spans more than the window, and the clock slides it): each team
		// fires at least once, and nothing else does.
		slices.Sort(fired)
		fired = slices.Compact(fired)
		var want []string
		for team, s := range byTeam {
			if team != "" && s.tokens > 1000 {
				want = append(want, team)
			}
		}
		slices.Sort(want)
		require.NotEmpty(t, want)
		require.Equal(t, want, fired, "firings per team over the threshold, none for calls without a team")
	})
}

// Labels survive the store: an Aggregator resumed from its state answers
// as the one that built it, and usage by a label is the same whatever
// the order the files arrive in.
func TestAggregator_LabelsStored(t *testing.T) {
	t.Parallel()
	stream := labelled(t)
	mem := indextest.MustNew(t, index.Config{Pricer: price.Default()})
	for _, e := range stream {
		mem.Add(e)
	}
	dir := t.TempDir()
	st, err := store.Open(store.Config{Dir: dir})
	require.NoError(t, err)
	a := indextest.MustNew(t, index.Config{Pricer: price.Default(), Store: st, Seed: 1})
	rng := rand.New(rand.NewPCG(8, 8))
	for i := len(stream) - 1; i >= 0; i-- { // another order
		a.Add(stream[i])
		if rng.IntN(50) == 0 {
			require.NoError(t, a.Commit(nil, 50))
		}
	}
	require.NoError(t, a.Commit(nil, 50))
	require.NoError(t, st.Close())
	st, err = store.Open(store.Config{Dir: dir})
	require.NoError(t, err)
	defer st.Close()
	got := indextest.MustNew(t, index.Config{Pricer: price.Default(), Store: st})

	for _, q := range []index.UsageQuery{
		{GroupBy: index.GroupBy("label:team")},
		{GroupBy: index.GroupBy("label:cost_centre")},
		{GroupBy: index.ByDay, Labels: map[string]string{"team": "research"}},
	} {
		w, err := mem.Usage(q)
		require.NoError(t, err)
		g, err := got.Usage(q)
		require.NoError(t, err)
		require.Equal(t, len(w), len(g), "%+v", q)
		for i := range w {
			require.Equal(t, w[i].Key, g[i].Key)
			require.Equal(t, w[i].TotalTokens, g[i].TotalTokens)
			require.Equal(t, w[i].Calls, g[i].Calls)
			require.LessOrEqual(t, math.Abs(w[i].CostUSD-g[i].CostUSD), 1e-9)
		}
	}
	q := index.SessionQuery{Labels: map[string]string{"team": "infra"}, Limit: index.MaxLimit}
	w, _, err := mem.Query(q)
	require.NoError(t, err)
	g, _, err := got.Query(q)
	require.NoError(t, err)
	require.NotEmpty(t, w)
	require.Equal(t, w, g)
	slices.SortFunc(w, func(x, y index.Session) int { return cmp.Compare(x.SessionID, y.SessionID) })
	for _, s := range w {
		require.Equal(t, "infra", s.Labels["team"])
	}
}
