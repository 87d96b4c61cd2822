//go:build !amd64

package redact

// hasAVX2 is false off amd64.
var hasAVX2 = false

// nextPair returns the first i >= from where b[i] b[i+1] is a pair that
// an anchor holds, or -1.
func nextPair(b []byte, from int) int { return nextPairPortable(b, from) }
