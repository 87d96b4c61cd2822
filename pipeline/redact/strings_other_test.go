//go:build !amd64

package redact

// classifyVector reports that there is no vector classify off amd64.
func classifyVector(p *[blockBytes]byte) (quote, bslash, slash, u uint64, ok bool) {
	return 0, 0, 0, 0, false
}
