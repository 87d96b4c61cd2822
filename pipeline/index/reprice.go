package index

import (
	"context"
	"fmt"

	"github.com/sessionpipe/sessionpipe/pipeline/index/store"
)

// metaPrices names the fingerprint of the price table a state's costs
// were computed with.
const metaPrices = "prices"

// Fingerprinter is a [Pricer] that can tell two of its price tables apart:
// equal fingerprints price every call alike. *price.Table implements it
// ([price.Table.Fingerprint]). With one, the indexer reprices its history
// when it starts with another table than its state was priced with.
type Fingerprinter interface {
	Fingerprint() string
}

// pricesFingerprint returns the fingerprint of the configured pricer, ""
// when it cannot tell (or there is none).
func (ix *Indexer) pricesFingerprint() string {
	if f, ok := ix.cfg.Pricer.(Fingerprinter); ok {
		return f.Fingerprint()
	}
	return ""
}

// repriceNeeded reports whether a state that applied up to seq was priced
// with another table than the indexer runs with, and if so whether the
// stream still holds everything from its first message, so that a
// rebuild from it reprices all of history. The caller rebuilds when both
// hold; a state whose history left the stream keeps the costs it counted
// (logged), and its new calls take the new table.
func (ix *Indexer) repriceNeeded(ctx context.Context, st *store.Store, seq uint64) (bool, error) {
	now := ix.pricesFingerprint()
	if seq == 0 || now == "" {
		return false, nil
	}
	saved, err := st.Meta(metaPrices)
	if err != nil {
		return false, err
	}
	if string(saved) == now {
		return false, nil
	}
	s, err := ix.cfg.JS.Stream(ctx, ix.cfg.Stream.Name)
	if err != nil {
		return false, fmt.Errorf("read stream %s to reprice: %w", ix.cfg.Stream.Name, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return false, fmt.Errorf("read stream %s to reprice: %w", ix.cfg.Stream.Name, err)
	}
	if first := info.State.FirstSeq; first > max(info.Config.FirstSeq, 1) {
		ix.log.Warn("price table changed, but the stream no longer holds the start of its history: "+
			"counted calls keep their costs, new calls take the new table",
			"saved", string(saved), "prices", now, "first_seq", first)
		return false, nil
	}
	ix.log.Warn("price table changed; rebuilding the state from the stream to reprice history",
		"saved", string(saved), "prices", now)
	return true, nil
}
