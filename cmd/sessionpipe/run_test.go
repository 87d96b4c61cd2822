package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/index"
)

// The live path (files → tailer → JetStream → aggregates) gives exactly
// the numbers of the offline path (files → aggregates), and running again
// on the same state changes nothing: nothing lost, nothing doubled.
func TestRun_OnceMatchesSessions(t *testing.T) {
	offline := ours(t, corpus)
	data := t.TempDir()
	for round := range 2 {
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), []string{"run", "-once", "-json", "-data-dir", data, "-nats-port", "-1", "-http", "", "-metrics", "127.0.0.1:0", corpus}, &stdout, &stderr)
		require.Equal(t, exitOK, code, "round %d: %s", round, stderr.String())
		var live []index.Session
		require.NoError(t, json.Unmarshal(stdout.Bytes(), &live), "round %d", round)
		require.Equal(t, len(offline), len(live), "round %d", round)
		require.Equal(t, offline, live, "round %d", round)
	}
}
