package amp_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A reply still streaming counts once it has usage (a reply cut short by
// a killed Amp stays "streaming"); without usage it is left out.
func TestParse_Streaming(t *testing.T) {
	doc := func(usage string) []byte {
		return []byte(`{"v":1,"id":"T-s","messages":[{"role":"assistant","messageId":1,"content":[{"type":"text","text":"par"}],"state":{"type":"streaming"}` + usage + `}]}`)
	}
	entries, errs := parseDoc(cfgText, doc(""))
	require.Empty(t, errs)
	require.Len(t, entries, 1, "the header only")
	entries, errs = parseDoc(cfgText, doc(`,"usage":{"model":"claude-sonnet-4-5","inputTokens":3,"outputTokens":7,"timestamp":"2026-09-23T09:00:00Z"}`))
	require.Empty(t, errs)
	require.Len(t, entries, 2)
	require.Equal(t, "amp:T-s:1", entries[1].UsageKey)
	require.Equal(t, int64(7), entries[1].Usage.Output)
}
