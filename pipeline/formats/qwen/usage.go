package qwen

import (
	"fmt"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// usage sets e.Usage and e.UsageKey from the record's usageMetadata
// (the record found at start in the line). Qwen Code keeps Gemini's
// usageMetadata: promptTokenCount includes the cached tokens
// (cachedContentTokenCount; its Anthropic converter folds the cache reads
// and writes into it, its OpenAI converter takes prompt_tokens), and
// thoughtsTokenCount is counted beside candidatesTokenCount. In the
// disjoint convention: Input = prompt − cached + toolUsePrompt, CacheRead
// = cached, Output = candidates + thoughts, Reasoning = thoughts. A record
// whose total is prompt + candidates + toolUsePrompt (thoughts not added)
// wrote candidates with the thoughts in them: Output = candidates. A
// record with only a total counts it as output (as ccusage does).
func (p *Parser) usage(e *schema.Entry, start int, fail func(int, error)) {
	r := &p.rec
	switch r.usage.Kind() {
	case jsonl.Object:
	case jsonl.Invalid, jsonl.Null:
		return
	default:
		fail(start+r.usageOff, fmt.Errorf("%w: usageMetadata", parse.ErrBadField))
		return
	}
	base := start + r.usageOff
	c := &p.cnt
	if !scanUsage(&p.sub, r.usage.Raw(), c) {
		fail(base, fmt.Errorf("%w: usageMetadata", parse.ErrBadField))
		return
	}
	var n [6]int64
	for i, v := range c.vals {
		x, ok := parse.Count(v)
		if !ok {
			fail(base+c.offs[i], parse.CountError(v, "usageMetadata."+usageNames[i]))
			return
		}
		n[i] = x
	}
	prompt, cand, cached, thoughts, tool, total := n[0], n[1], n[2], n[3], n[4], n[5]
	u := schema.Usage{
		Input:     max(prompt-cached, 0) + tool,
		CacheRead: min(cached, prompt),
		Output:    cand + thoughts,
		Reasoning: thoughts,
	}
	if prompt == 0 && cached > 0 {
		// A cached count without a prompt count: the cache read is all
		// that is known of the input.
		u.CacheRead = cached
	}
	if thoughts > 0 && total == prompt+cand+tool && cand >= thoughts {
		u.Output = cand
	}
	if u.Total() == 0 && total > 0 {
		u.Output = total
	}
	if u.Total() == 0 {
		return
	}
	e.Usage = &u
	e.UsageKey = "qwen-code:" + e.MessageID
	if e.MessageID == "" {
		e.UsageKey = "qwen-code:" + e.SessionID + ":" + e.EntryID
	}
}
