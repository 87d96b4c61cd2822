package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// Without a terminal, top prints one view; an indexer that is not
// running is an error that says where it looked.
func TestTop_OnceWithoutIndexer(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"top", "-api", "http://127.0.0.1:1"}, &stdout, &stderr)
	require.Equal(t, exitError, code)
	require.Contains(t, stdout.String(), "cannot reach the indexer at http://127.0.0.1:1")
	require.Contains(t, stderr.String(), "cannot reach the indexer")
}
