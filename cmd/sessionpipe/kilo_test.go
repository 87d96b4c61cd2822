package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/opencodetest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/opencode"
)

// kiloRows reads the rows of the kilo package's golden case (generated:
// no public Kilo database is licensed for copying), with time_created and
// time_updated set to their ordinal: a row given again is an update.
func kiloRows(t *testing.T) []opencode.Row {
	t.Helper()
	f, err := os.Open("../../pipeline/formats/kilo/testdata/session/input.jsonl")
	require.NoError(t, err)
	defer f.Close()
	var rows []opencode.Row
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r opencode.Row
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		r.TimeCreated, r.TimeUpdated = int64(len(rows)+1), int64(len(rows)+1)
		rows = append(rows, r)
	}
	require.NoError(t, sc.Err())
	return rows
}

// kiloDB writes the golden rows into a kilo.db (Kilo keeps OpenCode's
// tables; WAL, then closed) in a new directory and returns it.
func kiloDB(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	db := opencodetest.Create(t, filepath.Join(root, "kilo.db"))
	db.LoadJSONL(kiloRows(t))
	db.Close()
	return root
}

// sessions reads a Kilo database (by its name kilo.db) as Kilo's, not
// OpenCode's: the figures are those the kilo package's
// TestParse_SessionsAsCcusage computed by hand from the same rows
// (msg_a02 once, in its last version).
func TestSessions_KiloDatabase(t *testing.T) {
	root := kiloDB(t)
	for _, path := range []string{root, filepath.Join(root, "kilo.db")} {
		got := ours(t, path)
		require.Len(t, got, 2)
		figures := map[string][6]int64{}
		for _, s := range got {
			require.Equal(t, "kilo", string(s.Format))
			figures[s.SessionID] = [6]int64{s.InputTokens, s.OutputTokens, s.CacheReadTokens, s.CacheWriteTokens, s.TotalTokens, s.APICalls}
			if s.SessionID == "ses_k1" {
				require.Equal(t, int64(2), s.UserMessages)
				require.Equal(t, int64(3), s.AssistantMessages)
				require.Equal(t, "/home/u/proj", s.CWD)
			}
		}
		require.Equal(t, map[string][6]int64{
			"ses_k1": {1500, 664, 11200, 800, 14164, 3},
			"ses_k2": {100, 70, 10, 0, 180, 1},
		}, figures, path)
	}
}

// With no PATH, sessions reads Kilo's database in its well-known place:
// $KILO_DATA_DIR/kilo.db, else ~/.local/share/kilo/kilo.db.
func TestSessions_KiloWellKnownLocation(t *testing.T) {
	for _, viaEnv := range []bool{false, true} {
		home := t.TempDir()
		for _, k := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_AGENT_DIR", "COPILOT_HOME", "OPENCODE_DATA_DIR", "XDG_DATA_HOME", "GOOSE_PATH_ROOT", "KILO_DATA_DIR"} {
			t.Setenv(k, "")
		}
		t.Setenv("HOME", home)
		dir := filepath.Join(home, ".local", "share", "kilo")
		if viaEnv {
			dir = filepath.Join(home, "elsewhere")
			t.Setenv("KILO_DATA_DIR", dir)
		}
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.Rename(filepath.Join(kiloDB(t), "kilo.db"), filepath.Join(dir, "kilo.db")))
		got := ours(t)
		require.Len(t, got, 2, "KILO_DATA_DIR %v", viaEnv)
		for _, s := range got {
			require.Equal(t, "kilo", string(s.Format))
		}
	}
}
