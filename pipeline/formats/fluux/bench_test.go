package fluux_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/fluux"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// readLines splits data into complete lines that own their bytes.
func readLines(tb testing.TB, data []byte) []jsonl.Line {
	tb.Helper()
	rd := jsonl.NewReader(bytes.NewReader(data), jsonl.ReaderConfig{})
	var lines []jsonl.Line
	for {
		l, err := rd.Next()
		if err == io.EOF {
			return lines
		}
		require.NoError(tb, err)
		l.Bytes = append([]byte(nil), l.Bytes...)
		lines = append(lines, l)
	}
}

// benchHistory builds a realistic history.jsonl: a header, then turns of a
// user prompt (some with attachments) and an assistant reply, with a
// reaction now and then, as Fluux writes them.
func benchHistory(turns int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields(`the agent reads your calendar and answers in plain text; it can search the web,
		summarise documents, keep notes per contact and remember "preferences" across sessions — ça marche 👍`)
	sentence := func(n int) string {
		var sb strings.Builder
		for i := range n {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(words[r.IntN(len(words))])
		}
		return sb.String()
	}
	quote := func(s string) string { return fmt.Sprintf("%q", s) } // Go quoting is valid JSON for these words
	ts := time.Date(2026, 2, 11, 15, 24, 0, 123456789, time.UTC)
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"type":"session","version":1,"created":%q,"jid":"alice@example.com"}`+"\n", ts.Format(time.RFC3339Nano))
	for i := range turns {
		ts = ts.Add(time.Duration(30+r.IntN(300)) * time.Second)
		att := ""
		if i%10 == 3 {
			att = `,"attachments":[{"filename":"report.pdf","mime_type":"application/pdf","size":"1.2MB"}]`
		}
		fmt.Fprintf(&b, `{"type":"message","role":"user","content":%s,"msg_id":"stanza-%d","sender":"alice@example.com","ts":%q%s}`+"\n",
			quote(sentence(10+r.IntN(30))), i, ts.Format("2006-01-02T15:04:05.999999999-07:00"), att)
		ts = ts.Add(time.Duration(2+r.IntN(20)) * time.Second)
		fmt.Fprintf(&b, `{"type":"message","role":"assistant","content":%s,"msg_id":"%08x-%04x-4%03x-8%03x-%012x","ts":%q}`+"\n",
			quote(sentence(40+r.IntN(200))), r.Uint32(), r.IntN(1<<16), r.IntN(1<<12), r.IntN(1<<12), r.Uint64()&(1<<48-1),
			ts.Format("2006-01-02T15:04:05.999999999-07:00"))
		if i%7 == 5 {
			fmt.Fprintf(&b, `{"type":"message","role":"user","content":"","sender":"alice@example.com","ts":%q,"reaction":{"message_id":"stanza-%d","emojis":["👍"]}}`+"\n",
				ts.Format(time.RFC3339), i)
		}
	}
	return b.Bytes()
}

func BenchmarkParse(b *testing.B) {
	data := benchHistory(500)
	lines := readLines(b, data)
	for _, text := range []bool{false, true} {
		b.Run(fmt.Sprintf("text=%t", text), func(b *testing.B) {
			cfg := parse.Config{Path: "data/memory/alice@example.com/history.jsonl", Text: text}
			// Check the fixture once before timing.
			p := fluux.New(cfg)
			var out []schema.Entry
			for _, l := range lines {
				var err error
				out, err = p.Parse(out, l)
				require.NoError(b, err)
			}
			require.Len(b, out, len(lines))

			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var n int
			for b.Loop() {
				p := fluux.New(cfg)
				for _, l := range lines {
					out, _ = p.Parse(out[:0], l)
					n += len(out)
				}
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
