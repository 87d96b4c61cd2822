package store

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2"
)

// ErrNoState is returned by [Check] for a directory that holds no
// state yet: the indexer creates one at its first start.
var ErrNoState = errors.New("index: no state yet")

// Summary is what [Check] read.
type Summary struct {
	Tables int   // table files
	Bytes  int64 // their size
	Keys   int64 // records read back
	// Meta holds the meta records ([MetaKey]) by name.
	Meta map[string][]byte
}

// Check reads the state in dir (the directory [Config].Dir names)
// without changing it and without its lock: every table's properties and
// every record, so that a corrupt or missing table shows. Run it on a
// state no indexer has open (one that does is changing its files while
// they are read). It returns ErrNoState when dir holds no state, and an
// *[Error] naming the problem otherwise (wrapping [ErrCorrupt] when the
// files are broken: the indexer moves such a state aside at start and
// rebuilds it from the stream).
func Check(dir string) (Summary, error) {
	sum := Summary{Meta: make(map[string][]byte)}
	path := filepath.Join(dir, subdir)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return sum, ErrNoState
	}
	fault := &fault{dir: path, log: slog.New(slog.DiscardHandler)}
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
	it, err := s.NewIter(nil, nil)
	if err != nil {
		return sum, fault.set(brokenAsCorrupt(err))
	}
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.Value()
		if err != nil {
			it.Close()
			return sum, fault.set(brokenAsCorrupt(err))
		}
		sum.Keys++
		if k := it.Key(); len(k) > 0 && k[0] == metaPrefix {
			sum.Meta[string(k[1:])] = bytes.Clone(v)
		}
	}
	if err := it.Close(); err != nil {
		return sum, fault.set(brokenAsCorrupt(err))
	}
	if err := fault.get(); err != nil {
		return sum, err
	}
	return sum, nil
}

// brokenAsCorrupt marks err with ErrCorrupt when it says the files
// are broken ([filesBroken]).
func brokenAsCorrupt(err error) error {
	if filesBroken(err) && !errors.Is(err, ErrCorrupt) {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return err
}
