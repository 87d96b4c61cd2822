package droid_test

import (
	"fmt"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/droid"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
)

// A session's settings: its totals are one call, thinking in output.
func ExampleParse() {
	doc := []byte(`{"model":"custom:GPT-5.1-Codex","providerLock":"openai","providerLockTimestamp":"2026-09-23T07:00:00Z",` +
		`"tokenUsage":{"inputTokens":900,"outputTokens":100,"cacheReadTokens":5000,"thinkingTokens":40}}`)
	fields, err := parse.Fields(doc)
	if err != nil {
		panic(err)
	}
	entries, _ := droid.Parse(nil, parse.Config{Path: "/h/.factory/sessions/-p/0b7c.settings.json"}, doc, fields, time.Time{})
	e := entries[0]
	fmt.Println(e.SessionID, e.Subtype, e.Model, e.Provider, e.Usage.Input, e.Usage.Output, e.Usage.Reasoning, e.UsageKey)
	// Output:
	// 0b7c session_total gpt-5-1-codex openai 900 140 40 droid:0b7c
}
