package export_test

import "github.com/sessionpipe/sessionpipe/internal/testutil/exporttest"

// The helpers the tests share with the other export packages' tests.
var (
	repoRoot         = exporttest.RepoRoot
	corpusEntries    = exporttest.CorpusEntries
	generatedEntries = exporttest.GeneratedEntries
	treeEntries      = exporttest.TreeEntries
	cloneEntry       = exporttest.CloneEntry
	fullEntry        = exporttest.FullEntry
	emptyEntry       = exporttest.EmptyEntry
	zeroUsageEntry   = exporttest.ZeroUsageEntry
	mustWriter       = exporttest.MustWriter
	writeAll         = exporttest.WriteAll
	openDuckDB       = exporttest.OpenDuckDB
	glob             = exporttest.Glob
	readBack         = exporttest.ReadBack
	labelsOf         = exporttest.LabelsOf
	i64              = exporttest.I64
	str              = exporttest.Str
	list             = exporttest.List
	want             = exporttest.Want
	duckDBInit       = exporttest.DuckDBInit
	mustCompact      = exporttest.MustCompact
	checkDir         = exporttest.CheckDir
	counts           = exporttest.Counts
	listedOnDisk     = exporttest.ListedOnDisk
	scan             = exporttest.Scan
	keys             = exporttest.Keys
	chunk            = exporttest.Chunk
	restoreAll       = exporttest.RestoreAll
)

type readRow = exporttest.ReadRow
