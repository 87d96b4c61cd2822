package index_test

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/testutil/indextest"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/internal/testutil/testcorpus"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
	"github.com/sessionpipe/sessionpipe/pipeline/index/api"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
)

// TestIndexer_EqualsOfflineAcrossRestarts publishes every sample of
// testdata and a generated tree to a stream, then indexes it with
// restarts at random points, some after a commit and some not (the
// state is then behind what the consumer acknowledged), and with a
// second publication of everything (every message a duplicate, dropped by
// the stream, and a re-send of the first half past any duplicate window:
// stored again). The indexer's sessions equal those of an in-memory
// Aggregator over the same files.
func TestIndexer_EqualsOfflineAcrossRestarts(t *testing.T) {
	t.Parallel()
	files := indextest.ReadFiles(t, testcorpus.Generate(t, 1<<20, 31), "../../testdata/corpus")
	rng := rand.New(rand.NewPCG(3, 4))
	stream := indextest.Interleave(files, rng)
	mem := indextest.MustNew(t, index.Config{Pricer: price.Default()})
	for _, e := range stream {
		mem.Add(e)
	}
	want := mem.Sessions()

	js := indextest.NewStream(t, bus.StreamConfig{DuplicateWindow: time.Minute})
	half := len(stream) / 2
	indextest.Publish(t, js, stream[:half])

	dir := t.TempDir()
	cfg := index.IndexerConfig{JS: js, Dir: dir, Pricer: price.Default(), CommitInterval: 10 * time.Millisecond, MaxFacts: 300}
	ix, stop := indextest.RunIndexer(t, cfg)
	last := indextest.Publish(t, js, stream[half:])
	// Restart a few times while it applies.
	for range 4 {
		natstest.CheckFor(t, 30*time.Second, time.Millisecond, func() error {
			if ix.Stats().Applied == 0 {
				return errors.New("nothing applied yet")
			}
			return nil
		})
		require.NoError(t, stop())
		ix, stop = indextest.RunIndexer(t, cfg)
	}
	indextest.WaitApplied(t, ix, last)
	got, err := ix.Sessions()
	require.NoError(t, err)
	require.Equal(t, want, got)

	// The same entries again: duplicates inside the window are dropped
	// by the stream, and those the stream stores again (purged ids: a
	// re-send after the window) are skipped by the aggregates.
	require.NoError(t, stop())
	require.NoError(t, js.Conn().Flush())
	s, err := js.Stream(t.Context(), bus.DefaultStream)
	require.NoError(t, err)
	cfgDup := s.CachedInfo().Config
	cfgDup.Duplicates = time.Millisecond * 100
	_, err = js.UpdateStream(t.Context(), cfgDup)
	require.NoError(t, err)
	changed := time.Now()
	natstest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if time.Since(changed) < 300*time.Millisecond {
			return errors.New("the duplicate window has not passed")
		}
		return nil
	})
	before := last
	last = indextest.Publish(t, js, stream[:half])
	require.Greater(t, last, before+uint64(half)/2, "the stream stored the re-sent entries again")
	ix, stop = indextest.RunIndexer(t, cfg)
	indextest.WaitApplied(t, ix, last)
	got, err = ix.Sessions()
	require.NoError(t, err)
	require.Equal(t, want, got, "entries stored twice count once")
	require.Positive(t, ix.Stats().Entries)
	require.NoError(t, stop())
}

// A state that belongs to another stream (deleted and recreated) is
// rebuilt from the new stream, never applied to; entries that aged out of
// the stream before they were indexed are counted as a gap and the rest
// is indexed.
func TestIndexer_OtherStreamAndAgedOut(t *testing.T) {
	t.Parallel()
	files := indextest.ReadFiles(t, "../../testdata/corpus")
	stream := indextest.Interleave(files, rand.New(rand.NewPCG(1, 1)))
	js := indextest.NewStream(t, bus.StreamConfig{})
	last := indextest.Publish(t, js, stream)
	dir := t.TempDir()
	cfg := index.IndexerConfig{JS: js, Dir: dir, CommitInterval: 10 * time.Millisecond}
	ix, stop := indextest.RunIndexer(t, cfg)
	indextest.WaitApplied(t, ix, last)
	all, err := ix.Sessions()
	require.NoError(t, err)
	require.NotEmpty(t, all)
	require.NoError(t, stop())

	// Recreated with only the first file's entries.
	require.NoError(t, js.DeleteStream(t.Context(), bus.DefaultStream))
	_, err = bus.EnsureStream(t.Context(), js, bus.StreamConfig{})
	require.NoError(t, err)
	first := make([]*schema.Entry, 0, len(files[0]))
	for i := range files[0] {
		first = append(first, &files[0][i])
	}
	last = indextest.Publish(t, js, first)
	mem := indextest.MustNew(t, index.Config{})
	for _, e := range first {
		mem.Add(e)
	}
	ix, stop = indextest.RunIndexer(t, cfg)
	indextest.WaitApplied(t, ix, last)
	got, err := ix.Sessions()
	require.NoError(t, err)
	require.Equal(t, mem.Sessions(), got, "the old state was discarded, not added to")
	require.Equal(t, uint64(1), ix.Stats().Rebuilds)
	require.NoError(t, stop())

	// The oldest messages purged while the indexer was down, and more
	// published: the indexer reports the gap and indexes what is there.
	rest := stream[len(first):]
	indextest.Publish(t, js, rest[:len(rest)/2])
	s, err := js.Stream(t.Context(), bus.DefaultStream)
	require.NoError(t, err)
	require.NoError(t, s.Purge(t.Context()))
	last = indextest.Publish(t, js, rest[len(rest)/2:])
	ix, stop = indextest.RunIndexer(t, cfg)
	indextest.WaitApplied(t, ix, last)
	st := ix.Stats()
	require.Positive(t, st.GapMessages, "the purged messages are reported")
	require.NoError(t, stop())
}

// An alert fires once per session, is published on the alerts subject
// with its id, kept in the recent list, and neither refires nor is lost
// across a restart.
func TestIndexer_Alerts(t *testing.T) {
	t.Parallel()
	files := indextest.ReadFiles(t, "../../testdata/corpus")
	stream := indextest.Interleave(files, rand.New(rand.NewPCG(9, 9)))
	mem := indextest.MustNew(t, index.Config{})
	for _, e := range stream {
		mem.Add(e)
	}
	var big int
	for _, s := range mem.Sessions() {
		if s.TotalTokens > 10000 {
			big++
		}
	}
	require.Positive(t, big)
	rules, err := alert.Parse("rules.yaml", []byte("rules:\n  - name: big-session\n    scope: session\n    metric: total_tokens\n    above: 10000\n"))
	require.NoError(t, err)

	js := indextest.NewStream(t, bus.StreamConfig{})
	half := len(stream) / 2
	last := indextest.Publish(t, js, stream[:half])
	cfg := index.IndexerConfig{JS: js, Dir: t.TempDir(), Rules: rules, AlertMaxLag: -1, CommitInterval: 10 * time.Millisecond}
	ix, stop := indextest.RunIndexer(t, cfg)
	indextest.WaitApplied(t, ix, last)
	require.NoError(t, stop())
	last = indextest.Publish(t, js, stream[half:])
	ix, stop = indextest.RunIndexer(t, cfg)
	indextest.WaitApplied(t, ix, last)
	require.NoError(t, stop())

	alerts, err := js.Stream(t.Context(), index.AlertStreamName(bus.DefaultStream))
	require.NoError(t, err)
	info, err := alerts.Info(t.Context())
	require.NoError(t, err)
	require.Equal(t, uint64(big), info.State.Msgs, "one alert per big session, none again after the restart")
	recent := ix.Alerts(0)
	require.Len(t, recent, big)
	seen := map[string]bool{}
	for _, e := range recent {
		require.Equal(t, "big-session", e.Rule)
		require.False(t, seen[e.Key], "session %s fired twice", e.Key)
		seen[e.Key] = true
		require.Greater(t, e.Value, 10000.0)
	}
}

// Two indexers of one consumer name: one applies the stream, the other
// stands by (serving its own state); when the active one stops, the
// stand-by takes the lease over, catches up from its own state and
// counts exactly what the stream holds: a handover counts nothing twice
// and misses nothing.
func TestIndexer_ActiveAndStandby(t *testing.T) {
	t.Parallel()
	files := indextest.ReadFiles(t, "../../testdata/corpus", testcorpus.Generate(t, 1<<20, 17))
	stream := indextest.Interleave(files, rand.New(rand.NewPCG(2, 2)))
	mem := indextest.MustNew(t, index.Config{})
	for _, e := range stream {
		mem.Add(e)
	}
	js := indextest.NewStream(t, bus.StreamConfig{})
	half := len(stream) / 2
	last := indextest.Publish(t, js, stream[:half])

	cfg := index.IndexerConfig{JS: js, Name: "shared", CommitInterval: 10 * time.Millisecond, LeaseTTL: 2 * time.Second}
	cfgA, cfgB := cfg, cfg
	cfgA.Dir, cfgB.Dir = t.TempDir(), t.TempDir()
	a, stopA := indextest.RunIndexer(t, cfgA)
	indextest.WaitApplied(t, a, last)
	require.True(t, a.Active())
	b, stopB := indextest.RunIndexer(t, cfgB)
	natstest.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		if b.Active() {
			return errors.New("the stand-by took the lease while it was held")
		}
		return nil
	})
	require.False(t, b.Active(), "one active indexer per consumer name")
	last = indextest.Publish(t, js, stream[half:])
	indextest.WaitApplied(t, a, last)
	require.Zero(t, b.Stats().Applied, "the stand-by applies nothing while it stands by")

	require.NoError(t, stopA())
	natstest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if !b.Active() {
			return errors.New("no handover yet")
		}
		return nil
	})
	indextest.WaitApplied(t, b, last)
	got, err := b.Sessions()
	require.NoError(t, err)
	require.Equal(t, mem.Sessions(), got)
	require.NoError(t, stopB())
}

// A record of the state that no longer decodes (a disk's bad day) makes
// the indexer rebuild its state from the stream instead of failing at
// every start or counting from a broken base.
func TestIndexer_CorruptRecordRebuilds(t *testing.T) {
	t.Parallel()
	files := indextest.ReadFiles(t, "../../testdata/corpus")
	stream := indextest.Interleave(files, rand.New(rand.NewPCG(4, 4)))
	mem := indextest.MustNew(t, index.Config{})
	for _, e := range stream {
		mem.Add(e)
	}
	js := indextest.NewStream(t, bus.StreamConfig{})
	half := len(stream) / 2
	last := indextest.Publish(t, js, stream[:half])
	cfg := index.IndexerConfig{JS: js, Dir: t.TempDir(), CommitInterval: 10 * time.Millisecond, MaxFacts: 1}
	ix, stop := indextest.RunIndexer(t, cfg)
	indextest.WaitApplied(t, ix, last)
	require.NoError(t, stop())

	// Garble every stored fact and session.
	db, err := pebble.Open(filepath.Join(cfg.Dir, "state"), &pebble.Options{})
	require.NoError(t, err)
	var keys [][]byte
	for _, p := range []string{"f", "s"} {
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte(p), UpperBound: []byte{p[0] + 1}})
		require.NoError(t, err)
		for ok := it.First(); ok; ok = it.Next() {
			keys = append(keys, append([]byte(nil), it.Key()...))
		}
		require.NoError(t, it.Close())
	}
	require.NotEmpty(t, keys)
	for _, k := range keys {
		require.NoError(t, db.Set(k, []byte("garbage"), pebble.Sync))
	}
	require.NoError(t, db.Close())

	last = indextest.Publish(t, js, stream[half:])
	ix, stop = indextest.RunIndexer(t, cfg)
	indextest.WaitApplied(t, ix, last)
	got, err := ix.Sessions()
	require.NoError(t, err)
	require.Equal(t, mem.Sessions(), got)
	require.Equal(t, uint64(1), ix.Stats().Rebuilds)
	require.NoError(t, stop())
}

// An entry published on one host's subject (all a tailer's identity may
// publish on) whose body names another host is skipped, not filed under
// the other host.
func TestIndexer_BodyHostMustMatchSubject(t *testing.T) {
	t.Parallel()
	js := indextest.NewStream(t, bus.StreamConfig{})
	e := schema.Entry{Format: schema.FormatPi, Host: "host-b", SessionID: "s", EntryID: "e1", Kind: schema.KindMessage,
		Role: schema.RoleUser, Text: "forged", TS: time.Now()}
	m := bus.EntryMsg(bus.DefaultPrefix, &e, nil)
	m.Subject = bus.EntrySubject(bus.DefaultPrefix, "host-a", "pi") // what host-a's identity may publish
	ok := e
	ok.Host, ok.EntryID = "host-a", "e2"
	p, err := bus.NewPublisher(js, bus.PublisherConfig{})
	require.NoError(t, err)
	require.NoError(t, p.Publish(t.Context(), m, nil))
	require.NoError(t, p.Publish(t.Context(), bus.EntryMsg(bus.DefaultPrefix, &ok, nil), nil))
	require.NoError(t, p.Close(t.Context()))
	ix, stop := indextest.RunIndexer(t, index.IndexerConfig{JS: js, Dir: t.TempDir(), CommitInterval: 10 * time.Millisecond})
	indextest.WaitApplied(t, ix, 2)
	all, err := ix.Sessions()
	require.NoError(t, err)
	require.Len(t, all, 1)
	require.Equal(t, "host-a", all[0].Host)
	require.Equal(t, int64(1), all[0].UserMessages)
	require.Equal(t, uint64(1), ix.Stats().Forged)
	require.NoError(t, stop())
}

// History older than the max lag (the default hour) fires no alert: none
// is published or listed, but each firing kept back is listed as
// suppressed, with its reason, by Indexer.SuppressedAlerts and
// /api/alerts, so a rule tried on history says what it would have done.
func TestIndexer_AlertsOnHistorySuppressedAndListed(t *testing.T) {
	t.Parallel()
	files := indextest.ReadFiles(t, "../../testdata/corpus")
	stream := indextest.Interleave(files, rand.New(rand.NewPCG(9, 9)))
	mem := indextest.MustNew(t, index.Config{})
	for _, e := range stream {
		mem.Add(e)
	}
	var big int
	for _, s := range mem.Sessions() {
		if s.TotalTokens > 10000 {
			big++
		}
	}
	require.Positive(t, big)
	rules, err := alert.Parse("rules.yaml", []byte("rules:\n  - name: big-session\n    scope: session\n    metric: total_tokens\n    above: 10000\n"))
	require.NoError(t, err)
	js := indextest.NewStream(t, bus.StreamConfig{})
	last := indextest.Publish(t, js, stream)
	ix, stop := indextest.RunIndexer(t, index.IndexerConfig{JS: js, Dir: t.TempDir(), Rules: rules, CommitInterval: 10 * time.Millisecond})
	indextest.WaitApplied(t, ix, last)

	require.Empty(t, ix.Alerts(0), "the samples are older than an hour")
	supp, total := ix.SuppressedAlerts(0)
	require.Len(t, supp, big)
	require.Equal(t, uint64(big), total)
	for _, e := range supp {
		require.Equal(t, "big-session", e.Rule)
		require.Contains(t, e.Suppressed, "older than the max lag 1h0m0s")
	}

	rec := httptest.NewRecorder()
	api.Handler(ix, api.Config{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/api/alerts", nil))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var body struct {
		Alerts          []alert.Event
		Suppressed      []alert.Event
		SuppressedTotal uint64 `json:"suppressed_total"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
	require.Empty(t, body.Alerts)
	require.Len(t, body.Suppressed, big)
	require.Equal(t, uint64(big), body.SuppressedTotal)
	require.NoError(t, stop())

	alerts, err := js.Stream(t.Context(), index.AlertStreamName(bus.DefaultStream))
	require.NoError(t, err)
	info, err := alerts.Info(t.Context())
	require.NoError(t, err)
	require.Zero(t, info.State.Msgs, "nothing published")
}
