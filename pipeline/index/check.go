package index

import (
	"strconv"

	"github.com/sessionpipe/sessionpipe/pipeline/index/store"
)

// ErrNoState is returned by [CheckStore] for a directory that holds no
// state yet: the indexer creates one at its first start.
var ErrNoState = store.ErrNoState

// StoreSummary is what [CheckStore] read.
type StoreSummary struct {
	Tables int    // table files
	Bytes  int64  // their size
	Keys   int64  // records read back
	Seq    uint64 // last stream sequence committed (0: none)
	// Layout is the state's [StoreLayout] (1 for a state that records
	// none). The indexer rebuilds a state of another layout at start.
	Layout int
}

// CheckStore reads the indexer's state in dir (the directory
// [IndexerConfig].Dir names) without changing it and without its lock
// ([store.Check]: every table and every record, so that a corrupt or
// missing table shows), and says which stream sequence and layout it
// holds. It returns ErrNoState when dir holds no state, and a
// *[store.Error] naming the problem otherwise (wrapping
// [ErrCorruptState] when the files are broken: the indexer moves such a
// state aside at start and rebuilds it from the stream).
func CheckStore(dir string) (StoreSummary, error) {
	s, err := store.Check(dir)
	sum := StoreSummary{Tables: s.Tables, Bytes: s.Bytes, Keys: s.Keys, Layout: 1}
	if err != nil {
		return sum, err
	}
	if v, ok := s.Meta[metaSeq]; ok {
		sum.Seq, _ = strconv.ParseUint(string(v), 10, 64)
	}
	if v, ok := s.Meta[metaLayout]; ok {
		sum.Layout, _ = strconv.Atoi(string(v))
	}
	return sum, nil
}
