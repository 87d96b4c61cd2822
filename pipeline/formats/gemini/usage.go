package gemini

import (
	"fmt"
	"strconv"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// usage sets e.Usage and e.UsageKey from the message's tokens (m found at
// off in the line). Gemini's counters overlap: input (promptTokenCount)
// includes cached, and total is input + output + thoughts + tool. In the
// disjoint convention: Input = input − cached + tool, CacheRead = cached,
// Output = output + thoughts, Reasoning = thoughts. A record whose total
// is the sum with cached added once more (and not the sum without) wrote
// an input that already excludes cached: it is kept as is.
func (p *Parser) usage(e *schema.Entry, m *message, off int, fail func(int, error)) {
	switch m.tokens.Kind() {
	case jsonl.Object:
	case jsonl.Invalid, jsonl.Null:
		return
	default:
		fail(off+m.tokensOff, fmt.Errorf("%w: tokens", parse.ErrBadField))
		return
	}
	t := &p.tok
	base := off + m.tokensOff
	if !scanTokens(&p.sub, m.tokens.Raw(), t) {
		fail(base, fmt.Errorf("%w: tokens", parse.ErrBadField))
		return
	}
	var n [6]int64
	for i, v := range t.vals {
		c, ok := parse.Count(v)
		if !ok {
			fail(base+t.offs[i], parse.CountError(v, "tokens."+tokenNames[i]))
			return
		}
		n[i] = c
	}
	in, out, cached, thoughts, tool, total := n[0], n[1], n[2], n[3], n[4], n[5]
	u := schema.Usage{Output: out + thoughts, CacheRead: cached, Reasoning: thoughts}
	inclusive := in + out + thoughts + tool
	if cached > 0 && total == inclusive+cached && total != inclusive {
		u.Input = in + tool
	} else {
		u.Input = max(in-cached, 0) + tool
	}
	if u.Total() == 0 {
		return
	}
	e.Usage = &u
	e.UsageKey = "gemini-cli:" + e.SessionID + ":" + e.MessageID
	if e.MessageID == "" {
		e.UsageKey += e.EntryID
	}
}

// toolCalls sets the tool calls of e that no earlier copy of the message
// carried, and a result for each call whose final status (success, error,
// cancelled) no earlier copy carried; only status "error" is an error.
// A call without an id is known by its place in the list.
func (p *Parser) toolCalls(e *schema.Entry, m *message, prev *seenMsg, off int, fail func(int, error)) {
	switch m.toolCalls.Kind() {
	case jsonl.Array:
	case jsonl.Invalid, jsonl.Null:
		return
	default:
		fail(off+m.callsOff, fmt.Errorf("%w: toolCalls", parse.ErrBadField))
		return
	}
	s := &p.el
	s.Reset(m.toolCalls.Raw())
	if !s.EnterArray() {
		return
	}
	for i := 0; s.NextElem(); i++ {
		if s.Peek() != jsonl.Object || !s.EnterObject() {
			s.Skip()
			continue
		}
		var id, name, args, status, display jsonl.Value
		for s.NextField() {
			switch string(s.Key()) {
			case "id":
				id = s.Value()
			case "name":
				name = s.Value()
			case "args":
				args = s.Value()
			case "status":
				status = s.Value()
			case "resultDisplay":
				display = s.Value()
			}
		}
		key := parse.Str(id)
		if key == "" {
			key = "#" + strconv.Itoa(i)
		}
		if _, ok := prev.calls[key]; !ok {
			if prev.calls == nil {
				prev.calls = make(map[string]struct{})
			}
			prev.calls[key] = struct{}{}
			c := schema.ToolCall{ID: parse.Str(id), Name: parse.Str(name)}
			if p.cfg.Text {
				c.Input = parse.RawJSON(args)
			}
			e.ToolCalls = append(e.ToolCalls, c)
		}
		final := status.Equal("success") || status.Equal("error") || status.Equal("cancelled")
		if _, ok := prev.results[key]; final && !ok {
			if prev.results == nil {
				prev.results = make(map[string]struct{})
			}
			prev.results[key] = struct{}{}
			r := schema.ToolResult{ToolCallID: parse.Str(id), IsError: status.Equal("error")}
			if p.cfg.Text {
				r.Content = parse.Str(display)
			}
			e.ToolResults = append(e.ToolResults, r)
		}
	}
}
