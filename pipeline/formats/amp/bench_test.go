package amp_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/amp"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

// BenchmarkParse parses a thread of n messages (the thread golden case's
// exchange repeated), as the tailer does at every rewrite: fields, then
// the messages.
func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile("testdata/thread/input.json")
	require.NoError(b, err)
	fields, err := parse.Fields(data)
	require.NoError(b, err)
	msgs, err := parse.Elements(data, fields["messages"])
	require.NoError(b, err)
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			var parts []string
			for i := 0; len(parts) < n; i++ {
				m := string(msgs[i%4].Raw) // the four complete messages
				parts = append(parts, strings.Replace(m, `"messageId": `+fmt.Sprint(i%4), `"messageId": `+fmt.Sprint(i), 1))
			}
			doc := []byte(`{"v":1,"id":"T-bench","created":1790154000000,"messages":[` + strings.Join(parts, ",") + `]}`)
			cfg := parse.Config{Path: "T-bench.json"}
			f, err := parse.Fields(doc)
			require.NoError(b, err)
			entries, errs := amp.Parse(nil, cfg, doc, f)
			require.Empty(b, errs)
			require.Len(b, entries, n+1) // checked before timing
			b.ReportAllocs()
			b.SetBytes(int64(len(doc)))
			var out []schema.Entry
			for b.Loop() {
				f, _ := parse.Fields(doc)
				out, _ = amp.Parse(out[:0], cfg, doc, f)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "messages/s")
		})
	}
}
