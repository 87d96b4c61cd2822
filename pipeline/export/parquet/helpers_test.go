package parquet_test

import "github.com/sessionpipe/sessionpipe/internal/testutil/exporttest"

// The helpers the tests share with the other export packages' tests.
var (
	corpusEntries    = exporttest.CorpusEntries
	generatedEntries = exporttest.GeneratedEntries
	fullEntry        = exporttest.FullEntry
	emptyEntry       = exporttest.EmptyEntry
	zeroUsageEntry   = exporttest.ZeroUsageEntry
	mustWriter       = exporttest.MustWriter
	writeAll         = exporttest.WriteAll
	openDuckDB       = exporttest.OpenDuckDB
	glob             = exporttest.Glob
	readBack         = exporttest.ReadBack
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
)

type readRow = exporttest.ReadRow
