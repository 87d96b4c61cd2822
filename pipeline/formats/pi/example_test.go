package pi_test

import (
	"fmt"
	"io"
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/pi"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

func Example() {
	transcript := `{"type":"session","version":3,"id":"8555a0a4","timestamp":"2026-03-08T12:15:35.580Z","cwd":"/home/me"}
{"type":"message","id":"6f2bd1b4","parentId":null,"timestamp":"2026-03-08T13:03:27.042Z","message":{"role":"user","content":[{"type":"text","text":"hello"}],"timestamp":1772975007032}}
{"type":"message","id":"21071fd6","parentId":"6f2bd1b4","timestamp":"2026-03-08T13:04:04.928Z","message":{"role":"assistant","content":[{"type":"text","text":"Hi!"}],"api":"openai-codex-responses","provider":"openai-codex","model":"gpt-5.4","usage":{"input":787,"output":267,"cacheRead":13952,"cacheWrite":0,"totalTokens":15006,"cost":{"total":0.00755685}},"stopReason":"stop","timestamp":1772975036308}}
`
	p := pi.New(parse.Config{Path: "/home/me/.openclaw/agents/main/sessions/8555a0a4.jsonl"})
	rd := jsonl.NewReader(strings.NewReader(transcript), jsonl.ReaderConfig{})
	var entries []schema.Entry
	for {
		line, err := rd.Next()
		if err == io.EOF {
			break
		}
		entries, err = p.Parse(entries[:0], line)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		for _, e := range entries {
			fmt.Printf("%s/%s session=%s id=%s text=%q model=%q tokens=%d\n",
				e.Kind, e.Role, e.SessionID, e.EntryID, e.Text, e.Model, e.Usage.Total())
		}
	}
	// Output:
	// session/ session=8555a0a4 id=8555a0a4 text="" model="" tokens=0
	// message/user session=8555a0a4 id=6f2bd1b4 text="hello" model="" tokens=0
	// message/assistant session=8555a0a4 id=21071fd6 text="" model="gpt-5.4" tokens=15006
}

func ExampleSessionIDFromPath() {
	fmt.Println(pi.SessionIDFromPath("/home/me/.openclaw/agents/main/sessions/8555a0a4.jsonl.bak.2026-03-09T10-00-00.000Z"))
	fmt.Println(pi.SessionIDFromPath("/home/me/.pi/agent/sessions/--home-me-proj--/2025-12-24T00-32-27-967Z_2638daee.jsonl"))
	// Output:
	// 8555a0a4
	// 2638daee
}

func ExampleReadSessionsJSON() {
	store := `{"agent:main:main":{"sessionId":"8555a0a4","updatedAt":1772975044928,"chatType":"direct","origin":{"provider":"telegram","surface":"dm","from":"telegram:123"}}}`
	metas, err := pi.ReadSessionsJSON(strings.NewReader(store))
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	e := metas["8555a0a4"].Entry("laptop", "sessions.json")
	fmt.Println(e.Kind, e.SessionID, e.EntryID, e.Origin.Provider, e.Origin.ChatType, e.Origin.From)
	// Output:
	// session 8555a0a4 sessions.json:1772975044928 telegram direct telegram:123
}
