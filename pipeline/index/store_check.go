package index

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"

	"github.com/cockroachdb/pebble/v2"
)

// ErrNoState is returned by [CheckStore] for a directory that holds no
// state yet: the indexer creates one at its first start.
var ErrNoState = errors.New("index: no state yet")

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

// CheckStore reads the state in dir (the directory [StoreConfig].Dir
// names) without changing it and without its lock: every table's
// properties and every record, so that a corrupt or missing table shows.
// Run it on a state no indexer has open (one that does is changing its
// files while they are read). It returns ErrNoState when dir holds no
// state, and a *[StoreError] naming the problem otherwise (wrapping
// [ErrCorruptState] when the files are broken: the indexer moves such a
// state aside at start and rebuilds it from the stream).
func CheckStore(dir string) (StoreSummary, error) {
	var sum StoreSummary
	path := filepath.Join(dir, storeSubdir)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return sum, ErrNoState
	}
	fault := &storeFault{dir: path, log: slog.New(slog.DiscardHandler)}
	l := pebbleLogger{log: fault.log, fault: fault}
	db, err := openPebble(path, &pebble.Options{
		ReadOnly:      true,
		Logger:        l,
		EventListener: &pebble.EventListener{DataCorruption: l.dataCorruption},
	})
	if err != nil {
		return sum, fault.set(brokenAsCorrupt(err))
	}
	s := &Store{dir: dir, path: path, db: db, fault: fault}
	defer s.closeDB()
	tables, err := db.SSTables(pebble.WithProperties())
	if err != nil {
		return sum, fault.set(brokenAsCorrupt(err))
	}
	for _, level := range tables {
		for _, t := range level {
			sum.Tables++
			sum.Bytes += int64(t.Size)
		}
	}
	it, err := s.newIter(nil, nil)
	if err != nil {
		return sum, fault.set(brokenAsCorrupt(err))
	}
	seqKey, layoutKey := metaKey(metaSeq), metaKey(metaLayout)
	sum.Layout = 1
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			s.closeIter(it)
			return sum, fault.set(brokenAsCorrupt(err))
		}
		sum.Keys++
		switch {
		case bytes.Equal(it.Key(), seqKey):
			sum.Seq, _ = strconv.ParseUint(string(v), 10, 64)
		case bytes.Equal(it.Key(), layoutKey):
			sum.Layout, _ = strconv.Atoi(string(v))
		}
	}
	if err := s.closeIter(it); err != nil {
		return sum, fault.set(brokenAsCorrupt(err))
	}
	if err := fault.get(); err != nil {
		return sum, err
	}
	return sum, nil
}

// brokenAsCorrupt marks err with ErrCorruptState when it says the files
// are broken ([filesBroken]).
func brokenAsCorrupt(err error) error {
	if filesBroken(err) && !errors.Is(err, ErrCorruptState) {
		return fmt.Errorf("%w: %w", ErrCorruptState, err)
	}
	return err
}
