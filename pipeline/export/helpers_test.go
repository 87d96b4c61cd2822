package export_test

import "github.com/sessionpipe/sessionpipe/internal/testutil/exporttest"

// The helpers the tests share with the other export packages' tests.
var (
	openDuckDB   = exporttest.OpenDuckDB
	glob         = exporttest.Glob
	list         = exporttest.List
	want         = exporttest.Want
	listedOnDisk = exporttest.ListedOnDisk
	keys         = exporttest.Keys
	chunk        = exporttest.Chunk
)
