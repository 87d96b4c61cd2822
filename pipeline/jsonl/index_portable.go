//go:build !amd64

package jsonl

// stringStop returns the index of the first byte at or after i that is
// '"', '\\' or below 0x20, or len(data) if there is none.
func stringStop(data []byte, i int) (int, bool) { return indexSpecialPortable(data, i), false }

// Vectorized reports which implementation is in use.
func Vectorized() string { return "swar" }

// hasAVX2 is false off amd64; tests read it.
var hasAVX2 = false

// useIndex reports whether a Scanner walks a structural index. Off amd64
// the portable indexer is slower than scanning the bytes, so it is off;
// tests switch it on.
var useIndex = false
