package schema

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	segjson "github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/require"
)

// escapeCases are the strings the escaper is checked on, and the seeds of
// FuzzAppendString: every class of byte at every offset of an 8-byte word.
func escapeCases() []string {
	cases := []string{
		"", "a", "plain ASCII text, long enough for several words",
		"\"", "\\", "\b\f\n\r\t", "\x00\x01\x1f\x7f", "<script>&amp;</script>",
		"héllo wörld", "日本語のテキスト", "😀 emoji 🎉", "\u2028line\u2029para",
		"\xff", "bad \xc3 utf8 \xe2\x82", "\xed\xa0\x80 surrogate half", "\xf4\x90\x80\x80 above U+10FFFF",
		"{\"tool_result\": \"line 1\\nline 2\",\n\t\"x\": [1, 2]}",
	}
	specials := []string{"\"", "\\", "\n", "\x01", "é", "\u2028", "\xff", "😀"}
	for _, sp := range specials {
		for pad := range 17 {
			cases = append(cases, strings.Repeat("x", pad)+sp+strings.Repeat("y", 17-pad))
		}
	}
	return cases
}

func TestAppendString_MatchesSegmentio(t *testing.T) {
	for _, s := range escapeCases() {
		want := segjson.AppendEscape(nil, s, 0)
		got := appendString(nil, s)
		require.Equal(t, string(want), string(got), "%q", s)
		// And it is JSON that decodes to s, invalid UTF-8 replaced.
		var back string
		require.NoError(t, json.Unmarshal(got, &back), "%q", s)
		require.Equal(t, replaceInvalid(s), back, "%q", s)
	}
}

// replaceInvalid replaces each byte of s that is not part of valid UTF-8
// by U+FFFD, as encoding/json does.
func replaceInvalid(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD") {
			b.WriteRune(utf8.RuneError)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func TestAppendString_Appends(t *testing.T) {
	b := appendString([]byte("prefix:"), "a\"b")
	require.Equal(t, `prefix:"a\"b"`, string(b))
}

func FuzzAppendString(f *testing.F) {
	for _, s := range escapeCases() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := segjson.AppendEscape(nil, s, 0)
		got := appendString(nil, s)
		if string(got) != string(want) {
			t.Fatalf("appendString(%q) = %s, segmentio gives %s", s, got, want)
		}
		if utf8.ValidString(s) {
			var back string
			if err := json.Unmarshal(got, &back); err != nil || back != s {
				t.Fatalf("appendString(%q) = %s decodes to %q, %v", s, got, back, err)
			}
		}
	})
}

// BenchmarkAppendString compares the escaper with segmentio's on text
// shaped like tool results (code: newlines, quotes, tabs, some non-ASCII)
// and on plain prose.
func BenchmarkAppendString(b *testing.B) {
	code := strings.Repeat("func main() {\n\tfmt.Println(\"héllo, wörld\") // a \"quoted\" comment\n}\n", 200)
	prose := strings.Repeat("The quick brown fox jumps over the lazy dog, again and again. ", 200)
	for _, in := range []struct{ name, s string }{{"text=code", code}, {"text=prose", prose}} {
		for _, impl := range []struct {
			name string
			fn   func([]byte, string) []byte
		}{
			{"sessionpipe", appendString},
			{"segmentio", func(b []byte, s string) []byte { return segjson.AppendEscape(b, s, 0) }},
		} {
			b.Run(in.name+"/impl="+impl.name, func(b *testing.B) {
				buf := impl.fn(nil, in.s)
				b.SetBytes(int64(len(in.s)))
				b.ReportAllocs()
				for b.Loop() {
					buf = impl.fn(buf[:0], in.s)
				}
			})
		}
	}
}
