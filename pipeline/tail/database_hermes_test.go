package tail

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/internal/testutil/opencodetest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/hermes"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/schema"
)

// hermesSession inserts a Hermes session row as the agent creates it.
func hermesSession(t *testing.T, db *sql.DB, id string, started float64) {
	t.Helper()
	_, err := db.Exec(`INSERT INTO sessions (id, source, model, billing_provider, started_at) VALUES (?, 'cli', 'claude-sonnet-4-20250514', 'anthropic', ?)`, id, started)
	require.NoError(t, err)
}

// hermesAdd adds one API call's usage to a session as Hermes's
// background token writer does (update_token_counts in delta mode): the
// counters grow, and no time column moves.
func hermesAdd(t testing.TB, db *sql.DB, id string, in, out, cacheRead int64) {
	t.Helper()
	_, err := db.Exec(`UPDATE sessions SET input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
cache_read_tokens = cache_read_tokens + ?, api_call_count = COALESCE(api_call_count, 0) + 1 WHERE id = ?`, in, out, cacheRead, id)
	require.NoError(t, err)
}

// hermesEntries returns the hermes entries of the stream.
func hermesEntries(msgs []got) []schema.Entry {
	var out []schema.Entry
	for _, g := range msgs {
		if g.entry.Format == schema.FormatHermes {
			out = append(out, g.entry)
		}
	}
	return out
}

// waitHermes waits until the stream holds a hermes entry of session id
// with usage total n, and returns the hermes entries.
func (h *harness) waitHermes(id string, n int64) []schema.Entry {
	h.t.Helper()
	var es []schema.Entry
	natstest.CheckFor(h.t, time.Minute, 20*time.Millisecond, func() error {
		all, err := h.tryStream()
		if err != nil {
			return err
		}
		es = hermesEntries(all)
		for _, e := range es {
			if e.SessionID == id && e.Usage != nil && e.Usage.Total() == n {
				return nil
			}
		}
		return fmt.Errorf("no %s entry with total %d in %d hermes entries", id, n, len(es))
	})
	return es
}

// Hermes's state.db (~/.hermes/state.db) under the watches is polled
// read-only while the agent writes it: a session row is published again
// each time its counters grow, though Hermes's token writer moves no time
// column and another session started later (the row's position stays
// behind: without its version the change would be left out), each
// version once; a write transaction held open blocks nothing.
func TestTailer_FollowsHermesDatabase(t *testing.T) {
	h := newHarness(t)
	dir := filepath.Join(h.dir, ".hermes")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	w := opencodetest.CreateHermes(t, filepath.Join(dir, hermes.DatabaseName))
	hermesSession(t, w, "s_old", 1750000000)
	hermesAdd(t, w, "s_old", 100, 10, 0)
	hermesSession(t, w, "s_new", 1750000600)
	hermesAdd(t, w, "s_new", 50, 5, 0)
	h.start(func(c *Config) { c.DatabasePoll = 20 * time.Millisecond })
	h.waitHermes("s_old", 110)
	h.waitHermes("s_new", 55)

	hermesAdd(t, w, "s_old", 200, 20, 1000)
	h.waitHermes("s_old", 1330)
	tx, err := w.Begin()
	require.NoError(t, err)
	_, err = tx.Exec(`UPDATE sessions SET input_tokens = input_tokens + 1 WHERE id = 's_new'`)
	require.NoError(t, err)
	h.settle(false) // polled beside the open transaction: nothing new, nothing blocked
	require.NoError(t, tx.Rollback())
	h.settle(false)

	es := hermesEntries(h.stream())
	require.Len(t, es, 3, "each version once")
	agg := index.NewAggregator(nil)
	for i := range es {
		require.Equal(t, "hermes:"+es[i].SessionID, es[i].UsageKey)
		agg.Add(&es[i])
	}
	figures := map[string][3]int64{}
	for _, s := range agg.Sessions() {
		figures[s.SessionID] = [3]int64{s.InputTokens, s.OutputTokens, s.APICalls}
	}
	require.Equal(t, map[string][3]int64{"s_old": {300, 30, 1}, "s_new": {50, 5, 1}}, figures)
}

// Stopped and started again, the tailer publishes exactly the session rows
// that changed meanwhile, though none of their time columns moved (the
// versions acknowledged are in the checkpoint); with a checkpoint that
// trails what was acknowledged (a kill -9 before the save), the rows
// changed since are sent again, and the counts are the same.
func TestTailer_HermesRestartNeitherLosesNorDoubles(t *testing.T) {
	h := newHarness(t)
	w := opencodetest.CreateHermes(t, filepath.Join(h.dir, hermes.DatabaseName))
	hermesSession(t, w, "a", 1750000000)
	hermesAdd(t, w, "a", 100, 10, 0)
	hermesSession(t, w, "b", 1750000600)
	hermesAdd(t, w, "b", 50, 5, 0)
	poll := func(c *Config) { c.DatabasePoll = 20 * time.Millisecond }
	h.start(poll)
	h.waitHermes("a", 110)
	h.waitHermes("b", 55)
	h.settle(false)
	h.stop()
	cp := filepath.Join(h.state, databaseCheckpointFile)
	early, err := os.ReadFile(cp)
	require.NoError(t, err)

	hermesAdd(t, w, "a", 100, 10, 0) // while stopped
	h.start(poll)
	h.waitHermes("a", 220)
	h.settle(false)
	h.stop()
	require.Len(t, hermesEntries(h.stream()), 3, "only the changed row again")

	// As if killed before the last save: the checkpoint trails.
	require.NoError(t, os.WriteFile(cp, early, 0o644))
	hermesAdd(t, w, "b", 50, 5, 0)
	h.start(poll)
	h.waitHermes("b", 110)
	h.settle(false)
	es := hermesEntries(h.stream())
	require.Len(t, es, 5, "a's last version sent again, b's new one")
	agg := index.NewAggregator(nil)
	for i := range es {
		agg.Add(&es[i])
	}
	var in, out, calls int64
	for _, s := range agg.Sessions() {
		in, out, calls = in+s.InputTokens, out+s.OutputTokens, calls+s.APICalls
	}
	require.Equal(t, [3]int64{200 + 100, 20 + 10, 2}, [3]int64{in, out, calls})
}

// A state.db that is not Hermes's (another program's sessions table) is
// counted as skipped once, publishes nothing and sends no dead letter.
func TestTailer_NotAHermesDatabase(t *testing.T) {
	h := newHarness(t)
	db, err := sql.Open("sqlite", filepath.Join(h.dir, hermes.DatabaseName))
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE sessions (token_hash TEXT PRIMARY KEY, user_id INTEGER, expires_at TEXT)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	h.start(func(c *Config) { c.DatabasePoll = 20 * time.Millisecond })
	natstest.CheckFor(t, time.Minute, 10*time.Millisecond, func() error {
		if h.tl.Metrics().Snapshot().Skipped != 1 {
			return fmt.Errorf("not skipped yet")
		}
		return nil
	})
	h.settle(true)
	require.Empty(t, h.stream())
	m := h.tl.Metrics().Snapshot()
	require.Equal(t, int64(1), m.Skipped)
	require.Zero(t, m.ReadErrors)
}

// TestTailer_KillAndRestartHermes runs the tailer daemon (cmd/tailer) on a
// Hermes state.db that the test writes meanwhile as Hermes does (sessions
// started, their counters grown by the token writer without any time
// column moving), kills it with SIGKILL at random moments and restarts
// it: at the end the stream, counted as the consumers count it, gives
// exactly the database's numbers.
func TestTailer_KillAndRestartHermes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	d := newDaemon(t, buildTailer(t), h.srv.URL())
	require.NoError(t, os.MkdirAll(filepath.Join(d.watch, ".hermes"), 0o755))
	path := filepath.Join(d.watch, ".hermes", hermes.DatabaseName)
	w := opencodetest.CreateHermes(t, path)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 13))
	var sessions []string
	started := 1767312000.0
	write := func() {
		if len(sessions) == 0 || rng.IntN(8) == 0 {
			started += float64(1 + rng.IntN(600))
			id := fmt.Sprintf("2026010%d_%06d", 1+len(sessions)%9, len(sessions))
			hermesSession(t, w, id, started)
			sessions = append(sessions, id)
		}
		id := sessions[rng.IntN(len(sessions))]
		hermesAdd(t, w, id, int64(1+rng.IntN(5000)), int64(1+rng.IntN(500)), int64(rng.IntN(20000)))
	}
	for round := range 4 {
		d.start()
		until := time.Now().Add(time.Duration(200+rng.IntN(1500)) * time.Millisecond)
		for time.Now().Before(until) {
			write()
			time.Sleep(time.Duration(5+rng.IntN(30)) * time.Millisecond)
		}
		d.kill()
		t.Logf("round %d: %d sessions", round, len(sessions))
	}
	d.start()
	want := hermesTotals(t, path)
	var got schema.Usage
	natstest.CheckFor(t, 2*time.Minute, 50*time.Millisecond, func() error {
		all, err := h.tryStream()
		if err != nil {
			return err
		}
		agg := index.NewAggregator(nil)
		es := hermesEntries(all)
		for i := range es {
			agg.Add(&es[i])
		}
		got = schema.Usage{}
		for _, s := range agg.Sessions() {
			got.Input += s.InputTokens
			got.Output += s.OutputTokens
			got.CacheRead += s.CacheReadTokens
		}
		if got != want {
			return fmt.Errorf("stream counts %+v, database %+v", got, want)
		}
		return nil
	})
	require.Equal(t, 0, d.term(), "exit code after SIGTERM")
}

// hermesTotals counts a Hermes database read whole, offline.
func hermesTotals(t *testing.T, path string) schema.Usage {
	agg := index.NewAggregator(nil)
	_, err := hermes.ReadDB(t.Context(), path, parse.Config{Host: "crashhost"}, func(e *schema.Entry) { agg.Add(e) }, nil)
	require.NoError(t, err)
	var u schema.Usage
	for _, s := range agg.Sessions() {
		u.Input += s.InputTokens
		u.Output += s.OutputTokens
		u.CacheRead += s.CacheReadTokens
	}
	return u
}

// With -from-end, the session rows as they are when the database is first
// seen are not new; a row that changes afterwards is published.
func TestTailer_HermesFromEnd(t *testing.T) {
	h := newHarness(t)
	w := opencodetest.CreateHermes(t, filepath.Join(h.dir, hermes.DatabaseName))
	hermesSession(t, w, "a", 1750000000)
	hermesAdd(t, w, "a", 100, 10, 0)
	hermesSession(t, w, "b", 1750000600)
	hermesAdd(t, w, "b", 50, 5, 0)
	h.start(func(c *Config) { c.DatabasePoll = 20 * time.Millisecond; c.FromEnd = true })
	h.settle(true)
	require.Empty(t, hermesEntries(h.stream()))
	hermesAdd(t, w, "a", 1, 1, 0)
	es := h.waitHermes("a", 112)
	h.settle(false)
	require.Len(t, hermesEntries(h.stream()), 1, "only the row changed since: %v", es)
}

// A row without id is one dead letter, not one per poll; a session Hermes
// deletes (its prune) is forgotten by the checkpoint.
func TestTailer_HermesBadRowOnceAndDeletedForgotten(t *testing.T) {
	h := newHarness(t)
	w := opencodetest.CreateHermes(t, filepath.Join(h.dir, hermes.DatabaseName))
	hermesSession(t, w, "a", 1750000000)
	hermesAdd(t, w, "a", 100, 10, 0)
	hermesSession(t, w, "gone", 1750000300)
	hermesAdd(t, w, "gone", 7, 7, 0)
	_, err := w.Exec(`INSERT INTO sessions (id, source, model, started_at, input_tokens) VALUES (NULL, 'cli', 'gpt-5', 1750000500, 5)`)
	require.NoError(t, err)
	h.start(func(c *Config) { c.DatabasePoll = 20 * time.Millisecond })
	h.waitHermes("gone", 14)
	for i := range 3 {
		hermesAdd(t, w, "a", 1, 0, 0)
		h.waitHermes("a", int64(111+i))
	}
	_, err = w.Exec(`DELETE FROM sessions WHERE id = 'gone'`)
	require.NoError(t, err)
	hermesAdd(t, w, "a", 1, 0, 0)
	h.waitHermes("a", 114)
	h.settle(false)
	require.Equal(t, int64(1), h.tl.Metrics().Snapshot().BadLines, "one dead letter sent, not one per poll")
	h.stop()
	dead := 0
	for _, g := range h.stream() {
		if g.dead != nil {
			dead++
			require.Contains(t, g.dead.Error, "hermes: bad session")
		}
	}
	require.Equal(t, 1, dead, "the row without id, once in the stream")
	data, err := os.ReadFile(filepath.Join(h.state, databaseCheckpointFile))
	require.NoError(t, err)
	var doc databaseDoc
	require.NoError(t, json.Unmarshal(data, &doc))
	require.Len(t, doc.Databases, 1)
	require.Equal(t, []string{"a"}, slices.Sorted(maps.Keys(doc.Databases[0].Versions)))
}
