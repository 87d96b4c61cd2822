package jsonl

import "golang.org/x/sys/cpu"

// hasAVX2 reports whether the assembly routines can run: AVX2, BMI1
// (TZCNT, BLSR), POPCNT and carry-less multiplication, which every AVX2
// processor has. It is read-only after package initialisation (tests
// switch it to exercise the portable path).
var hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasBMI1 && cpu.X86.HasPOPCNT && cpu.X86.HasPCLMULQDQ

// useIndex reports whether a Scanner walks a structural index (see
// structural.go) rather than the bytes. It is read-only after package
// initialisation (tests switch it to exercise both cursors).
var useIndex = hasAVX2

// scanStringAVX2 is implemented in index_amd64.s. It requires AVX2, BMI1
// and n >= 64.
//
//go:noescape
func scanStringAVX2(p *byte, n int) (idx int, esc bool)

// stringStop returns the index of the first byte at or after i that ends
// the fast scan of string content: '"', a control character, or a
// backslash the caller must examine. Valid escapes may be stepped over;
// esc reports whether any was. It returns len(data) if there is none.
func stringStop(data []byte, i int) (int, bool) {
	if n := len(data) - i; n >= 64 && hasAVX2 {
		j, esc := scanStringAVX2(&data[i], n)
		// The routine leaves the last bytes (under 64) to us.
		return indexSpecialPortable(data, i+j), esc
	}
	return indexSpecialPortable(data, i), false
}

// Vectorized reports which implementation is in use: "avx2" (assembly:
// a structural index built 64 bytes at a time) or "swar" (portable,
// eight bytes at a time).
func Vectorized() string {
	if hasAVX2 {
		return "avx2"
	}
	return "swar"
}
