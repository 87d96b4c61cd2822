package redact

// classifyAVX2 is implemented in strings_amd64.s. It requires AVX2.
//
//go:noescape
func classifyAVX2(p *[blockBytes]byte) (quote, bslash, slash, u uint64)

// classify returns the masks of the bytes of p that are '"' and '\\'
// and, when all is true, '/' and 'u' (with AVX2; otherwise the caller
// looks at the escaped bytes only).
func classify(p *[blockBytes]byte) (quote, bslash, slash, u uint64, all bool) {
	if hasAVX2 {
		quote, bslash, slash, u = classifyAVX2(p)
		return quote, bslash, slash, u, true
	}
	quote, bslash = classifyPortable(p)
	return quote, bslash, 0, 0, false
}
