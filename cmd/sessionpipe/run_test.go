package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testcorpus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
)

// The live path (files → tailer → JetStream → aggregates) gives exactly
// the numbers of the offline path (files → aggregates), and running again
// on the same state changes nothing: nothing lost, nothing doubled.
func TestRun_OnceMatchesSessions(t *testing.T) {
	requireLiveEqualsOffline(t, corpus, 2)
}

// Generated sessions of every format with resumed and forked copies, and
// Claude Code compaction and side-question files that replay hundreds of
// main-transcript records with the same ids as sidechain lines: the stream
// used to drop the main file's records as duplicates of the replays when
// a replay file was published first.
func TestRun_OnceMatchesSessionsWithReplays(t *testing.T) {
	requireLiveEqualsOffline(t, testcorpus.Generate(t, 2<<20, 11), 1)
}

// requireLiveEqualsOffline runs `run -once -json` rounds times on one data
// directory and requires the offline sessions each time.
func requireLiveEqualsOffline(t *testing.T, dir string, rounds int) {
	t.Helper()
	offline := ours(t, dir)
	corpus := dir
	data := t.TempDir()
	for round := range rounds {
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), []string{"run", "-once", "-json", "-data-dir", data, "-nats-port", "-1", "-http", "", "-metrics", "127.0.0.1:0", corpus}, &stdout, &stderr)
		require.Equal(t, exitOK, code, "round %d: %s", round, stderr.String())
		var live []index.Session
		require.NoError(t, json.Unmarshal(stdout.Bytes(), &live), "round %d", round)
		require.Equal(t, len(offline), len(live), "round %d", round)
		require.Equal(t, offline, live, "round %d", round)
	}
}
