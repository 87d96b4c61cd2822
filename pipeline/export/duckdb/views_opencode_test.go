package duckdb_test

import (
	"bufio"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/opencode"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
)

// OpenCode's message rows as the tailer publishes them, every version of
// a message (msg_a002 streaming without tokens, then with them) a row of
// its own with the same key: the views count the message once and its
// call at its largest usage, as the Go aggregator does; the recorded cost
// is the cost.
func TestDuckDBInit_OpenCode(t *testing.T) {
	f, err := os.Open("../../formats/opencode/testdata/session/input.jsonl")
	require.NoError(t, err)
	defer f.Close()
	p := opencode.New(parse.Config{Path: "/h/.local/share/opencode/opencode.db", Host: "test-host"})
	var entries []schema.Entry
	sc := bufio.NewScanner(f)
	for n := int64(1); sc.Scan(); n++ {
		entries, err = p.Parse(entries, jsonl.Line{Bytes: sc.Bytes(), Number: n})
		require.NoError(t, err)
	}
	want := goSessions(entries, price.Default())
	require.Len(t, want, 4)
	dir := t.TempDir()
	exportTo(t, dir, entries, 1)
	db := openViews(t, duckDBInit(dir))
	got := viewSessions(t, db)
	requireSameSessions(t, want, got)
	for _, s := range got {
		if s.SessionID == "ses_main" {
			require.Equal(t, [3]int64{1, 1, 1}, [3]int64{s.APICalls, s.AssistantMessages, s.UserMessages})
			require.Equal(t, int64(15800), s.Total)
		}
	}
}
