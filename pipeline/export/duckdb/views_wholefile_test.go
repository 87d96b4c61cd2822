package duckdb_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/price"
)

// The whole-file formats give the views the Go aggregator's sessions:
// Amp threads (message usage and ledger events), a Droid session total,
// a Gemini CLI session-*.json; and an Amp thread read in two versions, as
// the tailer publishes a document rewritten while it follows it (the
// reply again under its key once its usage arrived): one assistant
// message and one call, at the larger total.
func TestDuckDBInit_WholeFile(t *testing.T) {
	tmp := t.TempDir()
	droid := filepath.Join(tmp, "0b7c.settings.json")
	data, err := os.ReadFile("../../formats/droid/testdata/settings/input.json")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(droid, data, 0o644))
	thread, err := os.ReadFile("../../formats/amp/testdata/thread/input.json")
	require.NoError(t, err)
	// The earlier version: reply 3 without its token counts yet.
	early := strings.Replace(string(thread), `"inputTokens": 6,
        "outputTokens": 14,
        "cacheCreationInputTokens": 120,
        "cacheReadInputTokens": 10800,`, "", 1)
	require.NotEqual(t, string(thread), early)
	v1 := filepath.Join(tmp, "v1", "T-5f1c9a2e.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(v1), 0o755))
	require.NoError(t, os.WriteFile(v1, []byte(early), 0o644))
	entries := offlineEntries(t, v1, "../../formats/amp/testdata/thread/input.json", "../../formats/amp/testdata/ledger/input.json",
		droid, "../../formats/gemini/testdata/document/input.json")
	want := goSessions(entries, price.Default())
	require.Len(t, want, 4)
	dir := t.TempDir()
	exportTo(t, dir, entries, 1)
	db := openViews(t, duckDBInit(dir))
	got := viewSessions(t, db)
	requireSameSessions(t, want, got)
	for _, s := range got {
		switch s.SessionID {
		case "T-5f1c9a2e-7d3b-4c8a-9e21-0b6d4f3a8c11":
			require.Equal(t, [3]int64{2, 2, 2}, [3]int64{s.APICalls, s.AssistantMessages, s.UserMessages})
		case "0b7c":
			require.Equal(t, [2]int64{1, 0}, [2]int64{s.APICalls, s.AssistantMessages})
		}
	}
}
