package jsonl

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// vectorOperand matches an SSE or AVX register operand.
var vectorOperand = regexp.MustCompile(`\b[XY](1[0-5]|[0-9])\b`)

// TestAssembly_VEXOnly holds the project's amd64 assembly (this package's
// and package redact's) to VEX-encoded instructions wherever a vector
// register is used. The routines run with the upper halves of the YMM
// registers in use, and processors may charge for a legacy SSE
// instruction among VEX ones (a state change, or a merge with the upper
// half). One such sequence (MOVQ to an XMM register, PCLMULQDQ, MOVQ
// back) at each 64-byte block held the structural index to 480 MB/s on
// one of the project's hosts and the decoder to half its speed there
// (benchmarks/RESULTS.md, 2026-11-28); the host it was written on did
// not show it. No benchmark catches that on a host that does not charge
// for it; this test does.
func TestAssembly_VEXOnly(t *testing.T) {
	var files []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, "_amd64.s") {
			files = append(files, path)
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, path := range files {
		t.Run(filepath.ToSlash(path), func(t *testing.T) {
			bad := legacyVectorInstructions(t, path)
			require.Empty(t, bad, "legacy SSE instructions among AVX code: use their VEX forms (VMOVQ, VPCLMULQDQ, …)")
		})
	}
}

// legacyVectorInstructions returns "line: instruction" for every
// instruction of the assembly file at path that names a vector register
// without being a VEX instruction (its mnemonic starting with V).
func legacyVectorInstructions(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var bad []string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) < 2 || strings.HasSuffix(fields[0], ":") || fields[0] == "TEXT" || fields[0] == "DATA" || fields[0] == "GLOBL" || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if vectorOperand.MatchString(strings.Join(fields[1:], " ")) && !strings.HasPrefix(fields[0], "V") {
			bad = append(bad, fmt.Sprintf("line %d: %s", n, strings.TrimSpace(sc.Text())))
		}
	}
	require.NoError(t, sc.Err())
	return bad
}
