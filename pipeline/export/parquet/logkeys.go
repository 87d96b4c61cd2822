package parquet

import "github.com/sessionpipe/sessionpipe/pipeline/export/internal/commit"

// Log attribute keys used by the export package.
const (
	KeyComponent = commit.KeyComponent // subsystem name: "export"
	KeyFile      = commit.KeyFile      // a Parquet file, relative to the output root
	KeyRows      = commit.KeyRows      // rows in a file
	KeyBytes     = commit.KeyBytes     // size of a file
	KeyFirstSeq  = commit.KeyFirstSeq  // stream sequence of a file's first entry
	KeyLastSeq   = commit.KeyLastSeq   // of its last entry
	KeyError     = commit.KeyError     // error text
)
