//go:build !(goexperiment.simd && amd64)

package jsonl

// indexSpecial returns the index of the first byte at or after i that is
// '"', '\\' or below 0x20, or len(data) if there is none.
func indexSpecial(data []byte, i int) int { return indexSpecialPortable(data, i) }

// Vectorized reports which string scanning implementation is in use.
func Vectorized() string { return "swar" }
