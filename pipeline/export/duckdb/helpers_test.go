package duckdb_test

import "github.com/sessionpipe/sessionpipe/internal/testutil/exporttest"

// The helpers the tests share with the other export packages' tests.
var (
	repoRoot    = exporttest.RepoRoot
	cloneEntry  = exporttest.CloneEntry
	openDuckDB  = exporttest.OpenDuckDB
	glob        = exporttest.Glob
	readBack    = exporttest.ReadBack
	list        = exporttest.List
	want        = exporttest.Want
	duckDBInit  = exporttest.DuckDBInit
	mustCompact = exporttest.MustCompact
	counts      = exporttest.Counts
	keys        = exporttest.Keys
)
