//go:build !amd64

package redact

// classify returns the masks of the bytes of p[:64] that are '"' and
// '\\', and of the positions i where p[i], p[i+1] is a pair of pairBits;
// all is false: the caller looks for '/' and 'u' among the escaped bytes.
func classify(p *[blockBytes + 1]byte) (quote, bslash, slash, u, pairs uint64, all bool) {
	quote, bslash = classifyPortable(p)
	return quote, bslash, 0, 0, pairsPortable(p), false
}
