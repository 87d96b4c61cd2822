package jsonl

// indexBlocksAVX2 is implemented in structural_amd64.s. It indexes the
// 64-byte blocks of p[0:n], then, if tail is not nil, the 64 bytes at
// tail as the block that follows them: see indexBlocksGeneric. It
// requires hasAVX2.
//
//go:noescape
func indexBlocksAVX2(p *byte, n int, base int, st *indexState, out *indexedBlock, room int, tail *byte) (read, wrote int, bad bool)

// indexer runs indexBlocksGeneric, with the assembly when it can. p must
// not be empty and out must have room for one block.
func indexer(p []byte, tail *[blockBytes]byte, base int, st *indexState, out []indexedBlock) (read, wrote int, bad bool) {
	if hasAVX2 {
		var t *byte
		if tail != nil {
			t = &tail[0]
		}
		return indexBlocksAVX2(&p[0], len(p), base, st, &out[0], len(out), t)
	}
	return indexBlocksGeneric(p, tail, base, st, out)
}
