package archive_test

import "github.com/sessionpipe/sessionpipe/internal/testutil/exporttest"

// The helpers the tests share with the other export packages' tests.
var (
	chunk      = exporttest.Chunk
	restoreAll = exporttest.RestoreAll
)
