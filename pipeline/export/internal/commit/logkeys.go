package commit

// Log attribute keys used by the export packages.
const (
	KeyComponent = "component" // subsystem name: "export"
	KeyFile      = "file"      // a Parquet file, relative to the output root
	KeyRows      = "rows"      // rows in a file
	KeyBytes     = "bytes"     // size of a file
	KeyFirstSeq  = "first_seq" // stream sequence of a file's first entry
	KeyLastSeq   = "last_seq"  // of its last entry
	KeyError     = "error"     // error text
)

// KeyPartition is the log attribute of a partition's directory, relative
// to the output root.
const KeyPartition = "partition"
