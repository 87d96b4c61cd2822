package jsonl

import "golang.org/x/sys/cpu"

// hasAVX2 is read-only after package initialisation.
var hasAVX2 = cpu.X86.HasAVX2

// scanStringAVX2 is implemented in index_amd64.s. It requires AVX2 and
// n >= 32.
//
//go:noescape
func scanStringAVX2(p *byte, n int) (idx int, esc bool)

// stringStop returns the index of the first byte at or after i that ends
// the fast scan of string content: '"', a control character, or a
// backslash the caller must examine. Simple escapes may be stepped over;
// esc reports whether any was. It returns len(data) if there is none.
func stringStop(data []byte, i int) (int, bool) {
	if n := len(data) - i; n >= 32 && hasAVX2 {
		j, esc := scanStringAVX2(&data[i], n)
		return i + j, esc
	}
	return indexSpecialPortable(data, i), false
}

// Vectorized reports which string scanning implementation is in use:
// "avx2" (assembly), "simd" (the GOEXPERIMENT=simd build) or "swar"
// (portable, eight bytes at a time).
func Vectorized() string {
	if hasAVX2 {
		return "avx2"
	}
	return "swar"
}
