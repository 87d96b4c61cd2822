package duckdb_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The README shows the example queries of docs/duckdb.md, which
// TestDuckDBInit_DocQueries runs: they must be the same text.
func TestREADME_DuckDBQueries(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	require.NoError(t, err)
	doc := docQueries(t)
	blocks := regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	require.Len(t, blocks, len(doc), "the README shows every example query")
	for _, m := range blocks {
		name, _, _ := strings.Cut(m[1], "\n")
		want, ok := doc[strings.TrimPrefix(name, "-- ")]
		require.True(t, ok, "README query %q is not in docs/duckdb.md", name)
		require.Equal(t, want, m[1], "README query %q differs from docs/duckdb.md", name)
	}
}
