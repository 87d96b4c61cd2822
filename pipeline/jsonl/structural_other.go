//go:build !amd64

package jsonl

// indexer runs indexBlocksGeneric.
func indexer(p []byte, tail *[blockBytes]byte, base int, st *indexState, out []indexedBlock) (read, wrote int, bad bool) {
	return indexBlocksGeneric(p, tail, base, st, out)
}
