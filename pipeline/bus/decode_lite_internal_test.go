package bus

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/schema"
)

// A Lite decoder decodes only the first litePrefix bytes of a long
// text's JSON: a character, an escape or a surrogate pair that the end
// of that prefix cuts short decodes otherwise than in the whole text.
// Whatever the text decodes to there, and wherever that falls around
// the cut at LiteTextBytes, the text is cut exactly as the whole text is.
func TestEntryDecoder_LitePrefixEnd(t *testing.T) {
	pieces := []string{`\uD83D\uDE00`, `\u00e9`, `\n`, "😀", "€", "é", "\xff", "\xf0\x9f\x98", `\\`}
	var full, lite EntryDecoder
	lite.Lite = true
	for _, p := range pieces {
		for c := 1; c < len(p); c++ {
			// The prefix ends after c bytes of p; before p, x bytes of
			// JSON decode to m bytes: a ASCII bytes, e escapes \u0001
			// (6 bytes, decoding to 1) and f escapes \n (2 to 1).
			x := litePrefix - c
			for m := LiteTextBytes - 24; m <= LiteTextBytes+24; m++ {
				e, f := (x-m)/5, (x-m)%5
				a := m - e - f
				text := strings.Repeat("a", a) + strings.Repeat(`\u0001`, e) + strings.Repeat(`\n`, f) + p + strings.Repeat("y", 3000)
				data := []byte(`{"format":"pi","session_id":"s","entry_id":"e","kind":"message","text":"` + text + `"}`)
				var want, got schema.Entry
				require.NoError(t, full.Decode(data, &want))
				require.NoError(t, lite.Decode(data, &got))
				cut := LiteTextBytes
				for cut > 0 && want.Text[cut]&0xC0 == 0x80 {
					cut--
				}
				require.Equal(t, want.Text[:cut], got.Text, "piece %q cut after %d bytes, %d bytes before it", p, c, m)
			}
		}
	}
}
