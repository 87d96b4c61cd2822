package cli

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPrintable(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"Plain", "abc-123", "abc-123"},
		{"UTF8Kept", "héllo ✓ 日本", "héllo ✓ 日本"},
		{"BackslashKept", `C:\Users`, `C:\Users`},
		{"Escape", "a\x1b[2Jb", `a\x1b[2Jb`},
		{"CarriageReturnNulTabNewline", "a\rb\x00c\td\ne", `a\rb\x00c\td\ne`},
		{"Delete", "a\x7fb", `a\x7fb`},
		{"C1", "a\u009b31mb\u0085", `a\u009b31mb\u0085`},
		{"InvalidUTF8", "a\xffb\xe2\x82", `a\xffb\xe2\x82`},
		{"ReplacementCharacterKept", "a\uFFFDb", "a\uFFFDb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Printable(tc.in), "Printable(%q)", tc.in)
		})
	}
}
