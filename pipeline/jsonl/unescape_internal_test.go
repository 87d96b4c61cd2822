package jsonl

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// textPieces are what the strings of TestAppendUnescaped_SameAsReference
// are made of: ASCII runs shorter and longer than a word, every escape,
// \u escapes of whole, half and broken surrogate pairs, UTF-8 of every
// length, and bytes that are not UTF-8 (lone, truncated, overlong, an
// encoded surrogate).
var textPieces = []string{
	"a", "hello, world", "0123456789abcdefghij", "\x7f", " ", "~",
	`\n`, `\"`, `\\`, `\/`, `\b`, `\f`, `\r`, `\t`,
	`\u00e9`, `\u00E9`, `\u0000`, `\u001f`, `\u20AC`, `\uffff`,
	`\uD83D\uDE00`, `\ud83d\ude00`, `\uD83D`, `\uDE00`, `\uD83Dx`, `\uD83D\u0041`, `\uD83D\n`, `\uDE00\uD83D`,
	"é", "€", "😀", "日本語のテキスト", "\xff", "\xfe", "\xe2\x82", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\x80",
}

// scanString returns the value of the JSON string with content raw, and
// false when the scanner refuses it.
func scanString(s *Scanner, raw string) (Value, bool) {
	s.Reset([]byte(`"` + raw + `"`))
	if !s.More() {
		return Value{}, false
	}
	v := s.Value()
	return v, s.Err() == nil && v.Kind() == String
}

// AppendUnescaped, one pass, gives what appendUnescaped, escape by
// escape, gives, for every string the scanner accepts, appended to what
// dst holds.
func TestAppendUnescaped_SameAsReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 2026))
	var s Scanner
	checked := 0
	for range 50000 {
		var sb strings.Builder
		for range rng.IntN(12) {
			sb.WriteString(textPieces[rng.IntN(len(textPieces))])
		}
		raw := sb.String()
		v, ok := scanString(&s, raw)
		if !ok {
			continue
		}
		checked++
		want := string(appendUnescaped([]byte("pre"), v.Raw()))
		got, ok := AppendUnescaped([]byte("pre"), v.Raw())
		require.True(t, ok, "content %q", raw)
		require.Equal(t, want, string(got), "content %q", raw)
		require.Equal(t, want, string(v.AppendText([]byte("pre"))), "content %q", raw)
		// A prefix of the content decodes to a prefix of the text but
		// for at most its last 9 bytes (what a Lite decoder relies on).
		if n := rng.IntN(len(raw) + 1); n < len(raw) {
			head, ok := AppendUnescaped([]byte("pre"), []byte(raw[:n]))
			if ok {
				sure := max(len(head)-9, 3)
				require.Equal(t, want[:sure], string(head[:sure]), "content %q cut at %d", raw, n)
			}
		}
	}
	require.Greater(t, checked, 40000)
}

func FuzzAppendUnescaped(f *testing.F) {
	for _, p := range textPieces {
		f.Add(p)
	}
	f.Add(`tail \\\"x\ud83d\ude00é` + "\xff")
	var s Scanner
	f.Fuzz(func(t *testing.T, raw string) {
		v, ok := scanString(&s, raw)
		if !ok {
			return
		}
		got, ok := AppendUnescaped(nil, v.Raw())
		require.True(t, ok, "content %q", raw)
		require.Equal(t, string(appendUnescaped(nil, v.Raw())), string(got), "content %q", raw)
	})
}
