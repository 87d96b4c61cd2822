package fluux_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/fluux"
)

// benchHistory builds a realistic history.jsonl: a header, then turns of a
// user prompt (some with attachments) and an assistant reply, with a
// reaction now and then, as Fluux writes them.
func benchHistory(turns int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields(`the agent reads your calendar and answers in plain text; it can search the web,
		summarise documents, keep notes per contact and remember "preferences" across sessions — ça marche 👍`)
	sentence := formattest.Sentence(r, words)
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
	lines := formattest.Lines(b, data)
	formattest.BenchParse(b, fluux.New, "data/memory/alice@example.com/history.jsonl", data, lines)
}
