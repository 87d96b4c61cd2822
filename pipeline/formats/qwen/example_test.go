package qwen_test

import (
	"fmt"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/qwen"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

// An assistant record's usageMetadata counts the cached tokens inside
// promptTokenCount and the thoughts beside candidatesTokenCount.
func ExampleParser_Parse() {
	p := qwen.New(parse.Config{Path: "/h/.qwen/projects/-w/chats/s1.jsonl"})
	line := `{"uuid":"a1","parentUuid":"u1","sessionId":"s1","timestamp":"2026-11-02T09:00:06Z","type":"assistant","model":"qwen3-coder-plus","message":{"role":"model","parts":[{"text":"ok"}]},"usageMetadata":{"promptTokenCount":12000,"candidatesTokenCount":300,"cachedContentTokenCount":8000,"thoughtsTokenCount":120,"totalTokenCount":12420}}`
	entries, err := p.Parse(nil, jsonl.Line{Number: 1, Bytes: []byte(line)})
	if err != nil {
		panic(err)
	}
	e := entries[0]
	fmt.Println(e.SessionID, e.Role, e.Model, e.Usage.Input, e.Usage.CacheRead, e.Usage.Output, e.Usage.Reasoning, e.UsageKey)
	// Output:
	// s1 assistant qwen3-coder-plus 4000 8000 420 120 qwen-code:a1
}
