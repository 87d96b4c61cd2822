package redact

// classifyAVX2 is implemented in strings_amd64.s. It requires AVX2.
//
//go:noescape
func classifyAVX2(p *[blockBytes + 1]byte, t *pairTables) (quote, bslash, slash, u, pairs uint64)

// classify returns the masks of the bytes of p[:64] that are '"' and
// '\\', and of the positions i where p[i], p[i+1] is a pair of pairBits;
// when all is true, also those of '/' and 'u' (with AVX2; otherwise the
// caller looks at the escaped bytes only).
func classify(p *[blockBytes + 1]byte) (quote, bslash, slash, u, pairs uint64, all bool) {
	if hasAVX2 {
		quote, bslash, slash, u, pairs = classifyAVX2(p, &pairNibbles)
		return quote, bslash, slash, u, checkPairs(p, pairs), true
	}
	quote, bslash = classifyPortable(p)
	return quote, bslash, 0, 0, pairsPortable(p), false
}
