//go:build !race

// The race detector makes sync.Pool drop items on purpose, so that
// allocations cannot be counted under it.

package redact_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/redact"
)

// TestRedactor_NoAllocationWhenNothingFound checks that text, JSON and an
// entry without secrets cost no allocation.
func TestRedactor_NoAllocationWhenNothingFound(t *testing.T) {
	r := mustNew(t, redact.Config{})
	texts := ordinary(1)
	docs := make([][]byte, len(texts))
	for i, s := range texts {
		docs[i], _ = json.Marshal(map[string]string{"text": s + "\n\"quoted\" \\ \u00e9"})
	}
	allocs := testing.AllocsPerRun(20, func() {
		for i, s := range texts {
			if r.String(s, nil) != s || len(r.JSON(docs[i], nil)) != len(docs[i]) {
				panic("changed")
			}
		}
	})
	require.Zero(t, allocs)
}
