package index_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/testutil/indextest"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
	"github.com/sessionpipe/sessionpipe/pipeline/index/api"
	"github.com/sessionpipe/sessionpipe/pipeline/index/store"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
)

// identityHosts are the hosts of testdata/identity: host a has a Claude
// Code and a Codex session both named session-alpha (ccusage's fixtures)
// and an m4dtimes session 12345; host b has another Claude Code
// session-alpha and another m4dtimes 12345, which shares a record id with
// host a's (4 random bytes may repeat) and its first input's timestamp.
var identityHosts = []string{"a", "b"}

// readHost decodes every transcript under dir as written on host, one
// entry list per file, in file order.
func readHost(tb testing.TB, dir, host string) [][]schema.Entry {
	tb.Helper()
	found, err := formats.Walk([]string{dir}, func(err error) { tb.Fatal(err) })
	require.NoError(tb, err)
	var out [][]schema.Entry
	for _, f := range found {
		var es []schema.Entry
		_, err := formats.ReadFile(context.Background(), f.Path, formats.ReadConfig{Config: parse.Config{Host: host, Text: true}},
			func(e *schema.Entry) { es = append(es, *e) }, func(err error) { tb.Fatalf("%s: %v", f.Path, err) })
		require.NoError(tb, err, f.Path)
		out = append(out, es)
	}
	require.NotEmpty(tb, out)
	return out
}

// offlineByHost counts each host's files on their own, as `sessionpipe
// sessions -host H` on that host does, and returns every host's sessions
// and the entries of all hosts.
func offlineByHost(t *testing.T) (want []index.Session, files [][]schema.Entry) {
	t.Helper()
	for _, host := range identityHosts {
		hostFiles := readHost(t, "testdata/identity/"+host, host)
		mem := index.NewAggregator(price.Default())
		for _, f := range hostFiles {
			for i := range f {
				mem.Add(&f[i])
			}
		}
		want = append(want, mem.Sessions()...)
		files = append(files, hostFiles...)
	}
	return want, files
}

func refOf(s index.Session) index.SessionRef {
	return index.SessionRef{Format: s.Format, Host: s.Host, SessionID: s.SessionID}
}

// TestIndexer_SessionIdentity feeds the sessions of two agents and two
// hosts that share ids through an in-process JetStream server to an
// indexer, and compares what it serves with each host's files counted
// offline on their own: every session is there once, with its own numbers
// (none merged with another of its id); usage by host and format adds up;
// a session-scope alert fires for each session over the threshold, naming
// it by format, host and id; and the API finds a session by a bare id only
// when one session has it, answering 409 with the candidates otherwise.
func TestIndexer_SessionIdentity(t *testing.T) {
	t.Parallel()
	want, files := offlineByHost(t)
	refs := make([]index.SessionRef, 0, len(want))
	for _, s := range want {
		refs = append(refs, refOf(s))
	}
	require.ElementsMatch(t, []index.SessionRef{
		{Format: schema.FormatClaudeCode, Host: "a", SessionID: "session-alpha"},
		{Format: schema.FormatCodex, Host: "a", SessionID: "session-alpha"},
		{Format: schema.FormatM4dtimes, Host: "a", SessionID: "12345"},
		{Format: schema.FormatClaudeCode, Host: "b", SessionID: "session-alpha"},
		{Format: schema.FormatM4dtimes, Host: "b", SessionID: "12345"},
	}, refs, "the fixture: two agents and two hosts sharing ids")

	js := indextest.NewStream(t, bus.StreamConfig{})
	last := indextest.Publish(t, js, indextest.Interleave(files, rand.New(rand.NewPCG(21, 1))))
	rules, err := alert.Parse("rules.yaml", []byte("rules:\n  - {name: big-session, scope: session, metric: total_tokens, above: 900}\n"))
	require.NoError(t, err)
	ix, _ := indextest.RunIndexer(t, index.IndexerConfig{JS: js, Dir: t.TempDir(), Pricer: price.Default(), CommitInterval: 10 * time.Millisecond,
		Rules: rules, AlertMaxLag: -1})
	indextest.WaitApplied(t, ix, last)
	srv := httptest.NewServer(api.Handler(ix, api.Config{}))
	defer srv.Close()

	t.Run("LiveEqualsOffline", func(t *testing.T) {
		got, err := ix.Sessions()
		require.NoError(t, err)
		require.ElementsMatch(t, want, got)

		var page struct{ Sessions []index.Session }
		require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, "/api/sessions?limit=1000", "", &page))
		require.Len(t, page.Sessions, len(want), "the API lists every session once")
		for _, s := range page.Sessions {
			require.NotEmpty(t, s.Format)
			require.NotEmpty(t, s.Host, "every row carries its host")
		}
	})

	t.Run("UsageByHostAndFormat", func(t *testing.T) {
		for _, g := range []index.GroupBy{index.ByHost, index.ByFormat} {
			wantCalls, wantTokens := map[string]int64{}, map[string]int64{}
			for _, s := range want {
				k := s.Host
				if g == index.ByFormat {
					k = string(s.Format)
				}
				wantCalls[k] += s.APICalls
				wantTokens[k] += s.TotalTokens
			}
			rows, err := ix.Usage(index.UsageQuery{GroupBy: g})
			require.NoError(t, err)
			gotCalls, gotTokens := map[string]int64{}, map[string]int64{}
			for _, r := range rows {
				gotCalls[r.Key], gotTokens[r.Key] = r.Calls, r.TotalTokens
			}
			require.Equal(t, wantCalls, gotCalls, "calls by %s", g)
			require.Equal(t, wantTokens, gotTokens, "tokens by %s", g)
		}
	})

	t.Run("AlertsNameTheSession", func(t *testing.T) {
		var over []string
		for _, s := range want {
			if s.TotalTokens > 900 {
				over = append(over, alert.SessionKey(s.Format, s.Host, s.SessionID))
			}
		}
		require.Len(t, over, 4, "both session-alpha of host a, b's session-alpha and b's 12345")
		var fired []string
		for _, e := range ix.Alerts(0) {
			require.Equal(t, alert.SessionKey(e.Format, e.Host, e.SessionID), e.Key, "the alert names the session it is keyed by")
			fired = append(fired, e.Key)
		}
		require.ElementsMatch(t, over, fired, "one alert per session over the threshold")
	})

	t.Run("BareIDIsAmbiguous", func(t *testing.T) {
		type conflict struct {
			Error      string             `json:"error"`
			Candidates []index.SessionRef `json:"candidates"`
		}
		var c conflict
		require.Equal(t, http.StatusConflict, indextest.GetJSON(t, srv, "/api/sessions/session-alpha", "", &c))
		require.Equal(t, []index.SessionRef{
			{Format: schema.FormatClaudeCode, Host: "a", SessionID: "session-alpha"},
			{Format: schema.FormatClaudeCode, Host: "b", SessionID: "session-alpha"},
			{Format: schema.FormatCodex, Host: "a", SessionID: "session-alpha"},
		}, c.Candidates)
		require.Contains(t, c.Error, "ambiguous")

		c = conflict{}
		require.Equal(t, http.StatusConflict, indextest.GetJSON(t, srv, "/api/sessions/session-alpha?format=claude-code", "", &c),
			"a format alone leaves two hosts")
		require.Len(t, c.Candidates, 2)
		c = conflict{}
		require.Equal(t, http.StatusConflict, indextest.GetJSON(t, srv, "/api/sessions/12345", "", &c))
		require.Len(t, c.Candidates, 2)

		for _, s := range want {
			var d struct {
				Session index.Session `json:"session"`
				Turns   []index.Turn  `json:"turns"`
			}
			q := url.Values{"format": {string(s.Format)}, "host": {s.Host}}
			path := "/api/sessions/" + url.PathEscape(s.SessionID) + "?" + q.Encode()
			require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, path, "", &d), path)
			require.Equal(t, viaJSON(t, s), d.Session, path)
			var calls int64
			for _, turn := range d.Turns {
				calls += turn.APICalls
			}
			require.Equal(t, s.APICalls, calls, "%s: the turns are the session's own", path)
		}

		// Unique: a bare id, or a format that leaves one host.
		var d struct{ Session index.Session }
		require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, "/api/sessions/session-alpha?format=codex", "", &d))
		require.Equal(t, "a", d.Session.Host)
		require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, "/api/sessions/12345?host=b", "", &d))
		require.Equal(t, schema.FormatM4dtimes, d.Session.Format)

		var e map[string]string
		require.Equal(t, http.StatusNotFound, indextest.GetJSON(t, srv, "/api/sessions/session-alpha?format=codex&host=b", "", &e))
		require.Equal(t, http.StatusNotFound, indextest.GetJSON(t, srv, "/api/sessions/nope", "", &e))
		require.Equal(t, http.StatusBadRequest, indextest.GetJSON(t, srv, "/api/sessions/session-alpha?format=cobol", "", &e))
	})
}

// The Aggregator finds the sessions of an id, in memory as in a store,
// cached or not.
func TestAggregator_Find(t *testing.T) {
	t.Parallel()
	_, files := offlineByHost(t)
	want := []index.SessionRef{
		{Format: schema.FormatClaudeCode, Host: "a", SessionID: "session-alpha"},
		{Format: schema.FormatClaudeCode, Host: "b", SessionID: "session-alpha"},
		{Format: schema.FormatCodex, Host: "a", SessionID: "session-alpha"},
	}
	mem := index.NewAggregator(nil)
	st, err := store.Open(store.Config{Dir: t.TempDir()})
	require.NoError(t, err)
	defer st.Close()
	stored := indextest.MustNew(t, index.Config{Store: st})
	for _, f := range files {
		for i := range f {
			mem.Add(&f[i])
			stored.Add(&f[i])
		}
	}
	got, err := mem.Find("session-alpha")
	require.NoError(t, err)
	require.Equal(t, want, got)
	got, err = stored.Find("session-alpha")
	require.NoError(t, err)
	require.Equal(t, want, got, "before a commit: from the cache")
	require.NoError(t, stored.Commit(nil, 1))
	require.NoError(t, stored.Commit(nil, 1)) // evicts what the first left
	got, err = stored.Find("session-alpha")
	require.NoError(t, err)
	require.Equal(t, want, got, "after: from the store")
	got, err = stored.Find("session-alph")
	require.NoError(t, err)
	require.Empty(t, got, "an id is not a prefix")
	s, ok := stored.Session(schema.FormatClaudeCode, "b", "session-alpha")
	require.True(t, ok)
	require.Equal(t, int64(2), s.APICalls)
	_, ok = stored.Session(schema.FormatCodex, "b", "session-alpha")
	require.False(t, ok)
}

// viaJSON returns s as a client reads it.
func viaJSON(t *testing.T, s index.Session) index.Session {
	t.Helper()
	data, err := json.Marshal(s)
	require.NoError(t, err)
	var out index.Session
	require.NoError(t, json.Unmarshal(data, &out))
	return out
}

// TestIndexer_RebuildsAStateOfLayout1 starts an indexer on a state that
// the code before layout 2 wrote (testdata/identity/layout1: the entries
// of testdata/identity applied, host a's files then host b's, one message
// each, sessions keyed by format and id, so that b's session-alpha and
// 12345 were merged into a's). The indexer must not resume it (its keys
// would be misread and its sessions stay merged) but rebuild it from the
// stream: the sessions are then the offline ones, and a restart resumes
// the rebuilt state without rebuilding again. doctor's CheckStore reports
// the layout.
func TestIndexer_RebuildsAStateOfLayout1(t *testing.T) {
	t.Parallel()
	want, _ := offlineByHost(t)
	var entries []*schema.Entry
	for _, host := range identityHosts {
		for _, f := range readHost(t, "testdata/identity/"+host, host) {
			for i := range f {
				entries = append(entries, &f[i])
			}
		}
	}
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS("testdata/identity/layout1")))
	sum, err := index.CheckStore(dir)
	require.NoError(t, err)
	require.Equal(t, 1, sum.Layout)
	require.Equal(t, uint64(len(entries)), sum.Seq, "the state applied every entry")

	js := indextest.NewStream(t, bus.StreamConfig{})
	last := indextest.Publish(t, js, entries)
	require.Equal(t, uint64(len(entries)), last)
	cfg := index.IndexerConfig{JS: js, Dir: dir, Pricer: price.Default(), CommitInterval: 10 * time.Millisecond}
	ix, stop := indextest.RunIndexer(t, cfg)
	indextest.WaitApplied(t, ix, last)
	require.Equal(t, uint64(1), ix.Stats().Rebuilds, "the state of layout 1 is rebuilt")
	require.Equal(t, uint64(len(entries)), ix.Stats().Entries, "from the start of the stream")
	got, err := ix.Sessions()
	require.NoError(t, err)
	require.ElementsMatch(t, want, got)
	require.NoError(t, stop())

	sum, err = index.CheckStore(dir)
	require.NoError(t, err)
	require.Equal(t, index.StoreLayout, sum.Layout)
	ix, _ = indextest.RunIndexer(t, cfg)
	indextest.WaitApplied(t, ix, last)
	require.Zero(t, ix.Stats().Rebuilds, "a state of this layout is resumed")
	require.Zero(t, ix.Stats().Entries)
	got, err = ix.Sessions()
	require.NoError(t, err)
	require.ElementsMatch(t, want, got)
}

// An Aggregator refuses a store of another layout.
func TestAggregator_RefusesAnotherLayout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS("testdata/identity/layout1")))
	st, err := store.Open(store.Config{Dir: dir})
	require.NoError(t, err)
	defer st.Close()
	_, err = index.New(index.Config{Store: st})
	var le *index.LayoutError
	require.ErrorAs(t, err, &le)
	require.Equal(t, index.LayoutError{Have: 1, Want: index.StoreLayout}, *le)
	require.ErrorIs(t, err, index.ErrLayout)
}

// A Claude Code transcript copied to a second host (a synced ~/.claude)
// is one record set: its API calls count once, in the session of the
// host that sorts first, whichever host's copy arrives first; an m4dtimes
// file of the same name on two hosts is two conversations (its ids are
// per host) and counts on each.
func TestAggregator_CopyOnTwoHosts(t *testing.T) {
	t.Parallel()
	claude := "testdata/identity/a/claude"
	m4d := "testdata/identity/a/m4dtimes"
	for _, order := range [][]string{{"a", "b"}, {"b", "a"}} {
		mem := index.NewAggregator(price.Default())
		for _, host := range order {
			for _, dir := range []string{claude, m4d} {
				for _, f := range readHost(t, dir, host) {
					for i := range f {
						mem.Add(&f[i])
					}
				}
			}
		}
		calls := map[index.SessionRef]int64{}
		for _, s := range mem.Sessions() {
			calls[refOf(s)] = s.APICalls
		}
		require.Equal(t, map[index.SessionRef]int64{
			{Format: schema.FormatClaudeCode, Host: "a", SessionID: "session-alpha"}: 3,
			{Format: schema.FormatClaudeCode, Host: "b", SessionID: "session-alpha"}: 0,
			{Format: schema.FormatM4dtimes, Host: "a", SessionID: "12345"}:           2,
			{Format: schema.FormatM4dtimes, Host: "b", SessionID: "12345"}:           2,
		}, calls, "hosts read in the order %v", order)
	}
}
