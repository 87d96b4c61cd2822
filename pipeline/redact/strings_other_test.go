//go:build !amd64

package redact

// classifyVector reports that there is no vector classify off amd64.
func classifyVector(p *[blockBytes + 1]byte) (quote, bslash, slash, u, pairs uint64, ok bool) {
	return 0, 0, 0, 0, 0, false
}
