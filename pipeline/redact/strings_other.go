//go:build !amd64

package redact

// classify returns the masks of the bytes of p that are '"' and '\\';
// all is false: the caller looks for '/' and 'u' among the escaped bytes.
func classify(p *[blockBytes]byte) (quote, bslash, slash, u uint64, all bool) {
	quote, bslash = classifyPortable(p)
	return quote, bslash, 0, 0, false
}
