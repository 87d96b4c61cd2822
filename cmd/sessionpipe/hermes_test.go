package main

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/ccusage"
	"github.com/sessionpipe/sessionpipe/internal/testutil/opencodetest"
)

// hermesHome writes the rows of the hermes package's sessions golden case
// (generated from Hermes's schema: no public state.db is licensed for
// copying), each session at its last version, into dir/state.db, as
// Hermes keeps it in its home (~/.hermes, HERMES_HOME), and returns dir.
func hermesHome(t *testing.T, dir string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	db := opencodetest.CreateHermes(t, filepath.Join(dir, "state.db"))
	opencodetest.LoadHermesJSONL(t, db, "../../pipeline/formats/hermes/testdata/sessions/input.jsonl")
	require.NoError(t, db.Close())
	return dir
}

// sessions on Hermes's state.db: one session total per session (its
// sessions row), actual cost, else estimated, used as recorded. Against
// ccusage 20.0.24 on the same database, session by session: the same
// input, output and cache counters; ccusage's total adds
// reasoning_tokens again (Hermes's output already holds them: 110 and
// 3216); the same recorded cost where the actual cost is above 0. The
// costs differ where ccusage reads a NULL actual cost as 0 and a
// recorded 0 as no cost, and prices from its table: the OpenRouter
// session ($0.007 there, its recorded estimate $0.07 here) and the
// subscription session (priced by both: here $6.231381, gpt-5.5's rates
// above 272k tokens on the session total priced as one request; ccusage
// $9.861939, the reasoning priced again within its output, its own rates).
func TestSessions_HermesSameAsCcusageButReasoning(t *testing.T) {
	root := hermesHome(t, t.TempDir())
	got := ours(t, root)
	require.Len(t, got, 3, "the rows without model or usage are no session")
	mine := map[string]ccusage.Usage{}
	for _, s := range got {
		require.Equal(t, "hermes", string(s.Format))
		require.Equal(t, int64(1), s.APICalls, s.SessionID)
		require.Equal(t, int64(0), s.AssistantMessages, "a session total is no reply")
		mine[s.SessionID] = ccusage.Usage{Input: s.InputTokens, Output: s.OutputTokens, CacheRead: s.CacheReadTokens,
			CacheWrite: s.CacheWriteTokens, Total: s.TotalTokens, CostUSD: s.CostUSD}
	}
	theirs := map[string]ccusage.Usage{}
	for _, s := range ccusage.Sessions(t, ccusage.Hermes, root) {
		theirs[s.ID] = s.Usage
	}
	require.Len(t, theirs, 3)
	reasoning := map[string]int64{"20260519_101500_a1b2c3": 110, "20260519_113000_d4e5f6": 0, "20260519_120000_g7h8i9": 3216}
	for id, m := range mine {
		c := theirs[id]
		require.Equal(t, [4]int64{m.Input, m.Output, m.CacheRead, m.CacheWrite}, [4]int64{c.Input, c.Output, c.CacheRead, c.CacheWrite}, id)
		require.Equal(t, m.Total+reasoning[id], c.Total, id)
	}
	cost := func(u map[string]ccusage.Usage) []float64 {
		return []float64{u["20260519_101500_a1b2c3"].CostUSD, u["20260519_113000_d4e5f6"].CostUSD, u["20260519_120000_g7h8i9"].CostUSD}
	}
	require.InDeltaSlice(t, []float64{0.12, 0.07, 6.231381}, cost(mine), 1e-9)
	require.InDeltaSlice(t, []float64{0.12, 0.007, 9.861939}, cost(theirs), 1e-9)
}

// With no PATH, sessions reads Hermes's database in its well-known
// places: ~/.hermes/state.db and each profile's
// ~/.hermes/profiles/<name>/state.db, or the homes HERMES_HOME lists.
func TestSessions_HermesWellKnownLocation(t *testing.T) {
	for _, viaEnv := range []bool{false, true} {
		home := t.TempDir()
		for _, k := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_AGENT_DIR", "COPILOT_HOME", "OPENCODE_DATA_DIR", "XDG_DATA_HOME", "GOOSE_PATH_ROOT", "KILO_DATA_DIR", "HERMES_HOME"} {
			t.Setenv(k, "")
		}
		t.Setenv("HOME", home)
		dir := filepath.Join(home, ".hermes")
		if viaEnv {
			dir = filepath.Join(home, "elsewhere")
			t.Setenv("HERMES_HOME", dir)
		}
		hermesHome(t, dir)
		profile := filepath.Join(dir, "profiles", "work")
		require.NoError(t, os.MkdirAll(profile, 0o755))
		db := opencodetest.CreateHermes(t, filepath.Join(profile, "state.db"))
		opencodetest.PutHermes(t, db, map[string]any{"id": "20260601_090000_p1", "model": "gpt-5", "started_at": 1780000000, "input_tokens": 10, "output_tokens": 1})
		require.NoError(t, db.Close())
		got := ours(t)
		require.Len(t, got, 4, "HERMES_HOME %v", viaEnv)
		for _, s := range got {
			require.Equal(t, "hermes", string(s.Format))
		}
	}
}

// A state.db that is not Hermes's (another program's sessions table) in a
// directory given is counted as skipped, not an error, and the Hermes
// database beside it is read.
func TestSessions_StateDBOfAnotherProgram(t *testing.T) {
	dir := t.TempDir()
	hermesHome(t, filepath.Join(dir, ".hermes"))
	other := filepath.Join(dir, "webapp", "state.db")
	require.NoError(t, os.MkdirAll(filepath.Dir(other), 0o755))
	db, err := sql.Open("sqlite", other)
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE sessions (token_hash TEXT PRIMARY KEY, user_id INTEGER, expires_at TEXT)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"sessions", dir}, &stdout, &stderr)
	require.Equal(t, exitOK, code, "stderr: %s", stderr.String())
	require.Contains(t, stderr.String(), "; 1 skipped (not transcripts)")
	require.Len(t, ours(t, dir), 3)
}
