package codebuff_test

import (
	"fmt"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/codebuff"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
)

// A chat document split into its messages; OpenAI-style cached tokens
// come out of the prompt.
func ExampleElements() {
	path := "/h/.config/manicode/projects/proj/chats/2026-01-02T03-04-05.000Z/chat-messages.json"
	doc := `[{"id":"u1","variant":"user","content":"hi"},
 {"id":"a1","variant":"agent","metadata":{"model":"gpt-5","usage":{"prompt_tokens":1200,"completion_tokens":80,"prompt_tokens_details":{"cached_tokens":1000}}}}]`
	lines, err := codebuff.Elements([]byte(doc))
	if err != nil {
		panic(err)
	}
	p := codebuff.New(parse.Config{Path: path})
	for _, l := range lines {
		entries, err := p.Parse(nil, l)
		if err != nil {
			panic(err)
		}
		e := entries[0]
		if e.Usage == nil {
			fmt.Println(e.SessionID, e.Role)
			continue
		}
		fmt.Println(e.Role, e.Usage.Input, e.Usage.CacheRead, e.Usage.Output, e.UsageKey)
	}
	// Output:
	// manicode/proj/2026-01-02T03-04-05.000Z user
	// assistant 200 1000 80 codebuff:manicode/proj/2026-01-02T03-04-05.000Z:a1
}
