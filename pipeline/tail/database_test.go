package tail

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/internal/testutil/opencodetest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/opencode"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/schema"
)

// openCodeRows reads the rows of the opencode package's golden case.
func openCodeRows(t *testing.T) []opencode.Row {
	t.Helper()
	f, err := os.Open("../formats/opencode/testdata/session/input.jsonl")
	require.NoError(t, err)
	defer f.Close()
	var rows []opencode.Row
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r opencode.Row
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		if r.Data != nil {
			rows = append(rows, r)
		}
	}
	return rows
}

// versions returns the opencode entries of the stream by (key, version):
// how many times each version of each message was stored.
func versions(msgs []got) map[string]int {
	out := map[string]int{}
	for _, g := range msgs {
		if g.entry.Format == schema.FormatOpenCode {
			out[g.entry.Key()+"@"+time.UnixMilli(g.entry.Line).UTC().Format(time.RFC3339Nano)]++
		}
	}
	return out
}

// waitVersions waits until the stream holds n distinct message versions.
func (h *harness) waitVersions(n int) map[string]int {
	h.t.Helper()
	var v map[string]int
	natstest.CheckFor(h.t, time.Minute, 20*time.Millisecond, func() error {
		all, err := h.tryStream()
		if err != nil {
			return err
		}
		if v = versions(all); len(v) != n {
			return fmt.Errorf("stream holds %d versions, want %d", len(v), n)
		}
		return nil
	})
	return v
}

// An OpenCode database under the watches is polled read-only while the
// agent writes it (WAL, its connection open): each message row is
// published once per version, as the rows are committed; a message that
// grows as it streams is published again with the same key and usage key.
// A write transaction held open by the agent blocks nothing, and its row
// arrives once committed.
func TestTailer_FollowsOpenCodeDatabase(t *testing.T) {
	h := newHarness(t)
	rows := openCodeRows(t)
	w := opencodetest.Create(t, filepath.Join(h.dir, "opencode.db"))
	w.Session("ses_main", "", "/home/u/proj", "Fix the build")
	w.Put(rows[0])
	w.Put(rows[1]) // msg_a002 streaming: no tokens yet
	h.start(func(c *Config) { c.DatabasePoll = 20 * time.Millisecond })
	h.waitVersions(2)

	tx := w.Begin()
	_, err := tx.Exec(`UPDATE message SET time_updated = ?, data = ? WHERE id = ?`, rows[2].TimeUpdated, string(rows[2].Data), rows[2].ID)
	require.NoError(t, err)
	h.settle(false) // polled beside the open transaction: nothing new, nothing blocked
	require.Len(t, versions(h.stream()), 2)
	require.NoError(t, tx.Commit())
	for _, r := range rows[3:5] {
		r.TimeUpdated += 10_000 // written after msg_a002's last version, as the agent's clock goes
		w.Put(r)
	}
	v := h.waitVersions(5)
	for k, n := range v {
		require.Equal(t, 1, n, "%s stored once", k)
	}

	var final *schema.Entry
	for _, g := range h.stream() {
		if g.entry.EntryID == "msg_a002" && g.entry.Usage != nil {
			final = &g.entry
		}
	}
	require.NotNil(t, final, "the grown version of msg_a002")
	require.Equal(t, "opencode:ses_main:msg_a002", final.UsageKey)
	require.Equal(t, int64(15800), final.Usage.Total())
	require.Equal(t, "testhost", final.Host)
	require.FileExists(t, filepath.Join(h.state, databaseCheckpointFile))
}

// Stopped and started again, the tailer goes on from its checkpoint: the
// rows written meanwhile are published, those published before are not.
// With a checkpoint that trails what was acknowledged (a kill -9 before the
// save), the rows since are sent again with the same keys, and the counts
// are the same.
func TestTailer_OpenCodeRestartNeitherLosesNorDoubles(t *testing.T) {
	h := newHarness(t)
	rows := openCodeRows(t)
	w := opencodetest.Create(t, filepath.Join(h.dir, "opencode.db"))
	w.Session("ses_main", "", "/home/u/proj", "Fix the build")
	w.Session("ses_child", "ses_main", "/home/u/proj", "Explore")
	poll := func(c *Config) { c.DatabasePoll = 20 * time.Millisecond }
	w.Put(rows[0])
	w.Put(rows[1])
	h.start(poll)
	h.waitVersions(2)
	h.stop()
	cp := filepath.Join(h.state, databaseCheckpointFile)
	early, err := os.ReadFile(cp)
	require.NoError(t, err)

	w.Put(rows[2])
	w.Put(rows[3])
	h.start(poll)
	v := h.waitVersions(4)
	h.settle(false)
	h.stop()
	for k, n := range v {
		require.Equal(t, 1, n, "%s stored once across a restart", k)
	}

	// As if killed before the last save: the checkpoint trails.
	require.NoError(t, os.WriteFile(cp, early, 0o644))
	w.Put(rows[4])
	w.Put(rows[5])
	h.start(poll)
	h.waitVersions(6)
	h.settle(false)

	agg := index.NewAggregator(nil)
	for _, g := range h.stream() {
		if g.entry.Format == schema.FormatOpenCode {
			agg.Add(&g.entry)
		}
	}
	var in, out, calls, replies int64
	for _, s := range agg.Sessions() {
		in += s.InputTokens
		out += s.OutputTokens
		calls += s.APICalls
		replies += s.AssistantMessages
	}
	require.Equal(t, int64(1200+500), in)
	require.Equal(t, int64(400+100+123), out)
	require.Equal(t, int64(3), calls)
	require.Equal(t, int64(3), replies, "msg_a002 once though two versions were published, one of them twice")
}

// A file named as OpenCode's database that is not one is counted as
// skipped, not polled again until it changes, and stops nothing.
func TestTailer_NotAnOpenCodeDatabase(t *testing.T) {
	h := newHarness(t)
	h.write("opencode.db", "not sqlite\n")
	h.start(func(c *Config) { c.DatabasePoll = 20 * time.Millisecond })
	natstest.CheckFor(t, time.Minute, 10*time.Millisecond, func() error {
		if h.tl.Metrics().Snapshot().Skipped != 1 {
			return fmt.Errorf("not skipped yet")
		}
		return nil
	})
	h.settle(true)
	require.Empty(t, versions(h.stream()))
}

// Goose's sessions.db is polled the same way: a session row updated in
// place as the session goes on is published at each change, also when two
// updates fall in one second of updated_at, and the consumers keep its
// largest total.
func TestTailer_FollowsGooseDatabase(t *testing.T) {
	h := newHarness(t)
	dir := filepath.Join(h.dir, "goose", "sessions")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	w := opencodetest.CreateGoose(t, filepath.Join(dir, "sessions.db"))
	put := func(in, out int64) {
		_, err := w.Exec(`INSERT INTO sessions (id, working_dir, created_at, updated_at, provider_name, model_config_json, accumulated_input_tokens, accumulated_output_tokens)
VALUES ('20260501_1', '/w', '2026-05-01 01:02:03', '2026-05-01 01:10:00', 'anthropic', '{"model_name":"claude-sonnet-4-20250514"}', ?, ?)
ON CONFLICT (id) DO UPDATE SET accumulated_input_tokens = excluded.accumulated_input_tokens, accumulated_output_tokens = excluded.accumulated_output_tokens`, in, out)
		require.NoError(t, err)
	}
	put(100, 10)
	h.start(func(c *Config) { c.DatabasePoll = 20 * time.Millisecond })
	largest := func() int64 {
		var n int64
		for _, g := range h.stream() {
			if g.entry.Format == schema.FormatGoose && g.entry.Usage.Total() > n {
				n = g.entry.Usage.Total()
			}
		}
		return n
	}
	natstest.CheckFor(t, time.Minute, 20*time.Millisecond, func() error {
		if n := largest(); n != 110 {
			return fmt.Errorf("largest total %d", n)
		}
		return nil
	})
	put(300, 50) // the same updated_at
	natstest.CheckFor(t, time.Minute, 20*time.Millisecond, func() error {
		if n := largest(); n != 350 {
			return fmt.Errorf("largest total %d", n)
		}
		return nil
	})
	for _, g := range h.stream() {
		if g.entry.Format == schema.FormatGoose {
			require.Equal(t, "goose:20260501_1", g.entry.UsageKey)
			require.Equal(t, "20260501_1", g.entry.SessionID)
		}
	}
}

// TestTailer_KillAndRestartOpenCode runs the tailer daemon (cmd/tailer)
// on an OpenCode database that the test writes meanwhile (new messages,
// and messages whose tokens grow as they stream), kills it with SIGKILL at
// random moments and restarts it: at the end the stream, counted as the
// consumers count it, gives exactly the database's numbers.
func TestTailer_KillAndRestartOpenCode(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	d := newDaemon(t, buildTailer(t), h.srv.URL())
	w := opencodetest.Create(t, filepath.Join(d.watch, "opencode.db"))
	w.Session("ses_k", "", "/w", "kill")
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 11))
	now := int64(1767312000000)
	n := 0
	write := func() {
		n++
		now += int64(1 + rng.IntN(50))
		id := fmt.Sprintf("msg_%05d", n)
		w.Put(opencode.Row{ID: id, SessionID: "ses_k", TimeCreated: now, TimeUpdated: now,
			Data: []byte(`{"role":"user","time":{"created":` + strconv.FormatInt(now, 10) + `}}`)})
		n++
		reply := fmt.Sprintf("msg_%05d", n)
		created := now
		for step := range 1 + rng.IntN(3) {
			now += int64(1 + rng.IntN(50))
			w.Put(opencode.Row{ID: reply, SessionID: "ses_k", TimeCreated: created, TimeUpdated: now,
				Data: []byte(fmt.Sprintf(`{"role":"assistant","time":{"created":%d},"modelID":"claude-sonnet-4-5","providerID":"anthropic","cost":0.001,"tokens":{"input":%d,"output":%d,"cache":{"read":%d,"write":0}}}`,
					created, 100*(step+1), 10*(step+1), 1000*(step+1)))})
		}
	}
	for round := range 4 {
		d.start()
		until := time.Now().Add(time.Duration(200+rng.IntN(1500)) * time.Millisecond)
		for time.Now().Before(until) {
			write()
			time.Sleep(time.Duration(5+rng.IntN(30)) * time.Millisecond)
		}
		d.kill()
		t.Logf("round %d: %d rows written", round, n)
	}
	d.start()
	want, err := opencodeTotals(t, w.Path)
	require.NoError(t, err)
	var got schema.Usage
	natstest.CheckFor(t, 2*time.Minute, 50*time.Millisecond, func() error {
		all, err := h.tryStream()
		if err != nil {
			return err
		}
		agg := index.NewAggregator(nil)
		for i := range all {
			if all[i].entry.Format == schema.FormatOpenCode {
				agg.Add(&all[i].entry)
			}
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

// opencodeTotals counts a database read whole, offline.
func opencodeTotals(t *testing.T, path string) (schema.Usage, error) {
	agg := index.NewAggregator(nil)
	_, err := opencode.ReadDB(t.Context(), path, parse.Config{Host: "crashhost"}, func(e *schema.Entry) { agg.Add(e) }, nil)
	var u schema.Usage
	for _, s := range agg.Sessions() {
		u.Input += s.InputTokens
		u.Output += s.OutputTokens
		u.CacheRead += s.CacheReadTokens
	}
	return u, err
}

// The survey of the watches (doctor) lists an agent's database as polled,
// not as left out by its name.
func TestSurveyWatches_Databases(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"opencode.db", "opencode.db-wal", "notes.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644))
	}
	sv, err := SurveyWatches([]string{dir})
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, "opencode.db")}, sv.Databases)
	require.Equal(t, []string{filepath.Join(dir, "notes.txt"), filepath.Join(dir, "opencode.db-wal")}, sv.LeftOut)
}
