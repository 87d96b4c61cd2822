package fluux_test

import (
	"fmt"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/fluux"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

func Example() {
	lines := []string{
		`{"type":"session","version":1,"created":"2025-02-08T19:00:00Z","jid":"alice@example.com"}`,
		`{"type":"message","role":"user","content":"Hello!","msg_id":"abc-123","sender":"alice@example.com","ts":"2025-02-08T19:00:01Z"}`,
		`{"type":"message","role":"assistant","content":"Hi there!","msg_id":"def-456","ts":"2025-02-08T19:00:02Z"}`,
		`{"type":"message","role":"user","content":"","sender":"alice@example.com","ts":"2025-02-08T19:00:03Z","reaction":{"message_id":"def-456","emojis":["👍"]}}`,
	}
	p := fluux.New(parse.Config{Path: "data/memory/alice@example.com/history.jsonl"})
	for i, l := range lines {
		entries, err := p.Parse(nil, jsonl.Line{Bytes: []byte(l), Number: int64(i + 1)})
		if err != nil {
			fmt.Println(err)
			continue
		}
		for _, e := range entries {
			fmt.Printf("%s %s kind=%s role=%s meta=%t text=%q\n", e.SessionID, e.EntryID, e.Kind, e.Role, e.Meta, e.Text)
		}
	}
	// Output:
	// alice@example.com/2025-02-08T19:00:00Z L1 kind=session role= meta=false text=""
	// alice@example.com/2025-02-08T19:00:00Z abc-123 kind=message role=user meta=false text="Hello!"
	// alice@example.com/2025-02-08T19:00:00Z def-456 kind=message role=assistant meta=false text=""
	// alice@example.com/2025-02-08T19:00:00Z L4 kind=message role=user meta=true text=""
}
