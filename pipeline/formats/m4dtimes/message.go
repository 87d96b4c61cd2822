package m4dtimes

import (
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// message is the llm.Message of an event, read before the event's type is
// known. Its content blocks are in Parser.blocks.
type message struct {
	role     field
	usage    schema.Usage
	hasUsage bool
}

// block is one content block, its values still aliasing the line: what it
// becomes depends on its type, which may come after its payload.
type block struct {
	off       int // where the block starts, for errors
	typ, text jsonl.Value

	hasCall                bool
	callID, callName, args jsonl.Value

	hasResult               bool
	resultID, resultContent jsonl.Value
	isError                 bool
}

// message reads the message object due next in the scanner into msg and
// p.blocks. It reports false for null.
func (p *Parser) message(msg *message, line jsonl.Line, off int) (bool, error) {
	s := &p.s
	*msg = message{}
	p.blocks = p.blocks[:0]
	if s.Peek() == jsonl.Null {
		s.Skip()
		return false, nil
	}
	if !s.EnterObject() {
		return false, p.wrongType(line, off, "message")
	}
	for s.NextField() {
		s.Peek()
		foff := s.Offset()
		switch string(s.Key()) {
		case "role":
			if err := p.scalar(&msg.role, s.Value(), foff, stringKind, line, "message.role"); err != nil {
				return false, err
			}
		case "content":
			if err := p.content(line, foff); err != nil {
				return false, err
			}
		case "usage":
			if err := p.usage(msg, line, foff); err != nil {
				return false, err
			}
		}
	}
	if s.Err() != nil {
		return false, parse.ScanError(&p.cfg, line, s)
	}
	return true, nil
}

// content reads the content array due next into p.blocks. null is no
// content.
func (p *Parser) content(line jsonl.Line, off int) error {
	s := &p.s
	p.blocks = p.blocks[:0]
	if s.Peek() == jsonl.Null {
		s.Skip()
		return nil
	}
	if !s.EnterArray() {
		return p.wrongType(line, off, "message.content")
	}
	for s.NextElem() {
		s.Peek()
		b := block{off: s.Offset()}
		if !s.EnterObject() {
			return p.wrongType(line, b.off, "message.content")
		}
		for s.NextField() {
			s.Peek()
			foff := s.Offset()
			var err error
			switch string(s.Key()) {
			case "type":
				b.typ, err = p.str(line, foff, "message.content.type")
			case "text":
				b.text, err = p.str(line, foff, "message.content.text")
			case "tool_call":
				err = p.toolCall(&b, line, foff)
			case "tool_result":
				err = p.toolResult(&b, line, foff)
			}
			if err != nil {
				return err
			}
		}
		p.blocks = append(p.blocks, b)
	}
	if s.Err() != nil {
		return parse.ScanError(&p.cfg, line, s)
	}
	return nil
}

// toolCall reads a tool_call object {id, name, arguments} into b.
func (p *Parser) toolCall(b *block, line jsonl.Line, off int) error {
	s := &p.s
	b.hasCall = false
	if s.Peek() == jsonl.Null {
		s.Skip()
		return nil
	}
	if !s.EnterObject() {
		return p.wrongType(line, off, "message.content.tool_call")
	}
	b.hasCall = true
	b.callID, b.callName, b.args = jsonl.Value{}, jsonl.Value{}, jsonl.Value{}
	for s.NextField() {
		s.Peek()
		foff := s.Offset()
		var err error
		switch string(s.Key()) {
		case "id":
			b.callID, err = p.str(line, foff, "message.content.tool_call.id")
		case "name":
			b.callName, err = p.str(line, foff, "message.content.tool_call.name")
		case "arguments":
			// Raw JSON of Anthropic's tool_use input: an object, though the
			// SDK's README shows a string. Any JSON value is kept as is.
			b.args = s.Value()
			if s.Err() != nil {
				return parse.ScanError(&p.cfg, line, s)
			}
		}
		if err != nil {
			return err
		}
	}
	if s.Err() != nil {
		return parse.ScanError(&p.cfg, line, s)
	}
	return nil
}

// toolResult reads a tool_result object {tool_call_id, content, is_error}
// into b.
func (p *Parser) toolResult(b *block, line jsonl.Line, off int) error {
	s := &p.s
	b.hasResult = false
	if s.Peek() == jsonl.Null {
		s.Skip()
		return nil
	}
	if !s.EnterObject() {
		return p.wrongType(line, off, "message.content.tool_result")
	}
	b.hasResult = true
	b.resultID, b.resultContent, b.isError = jsonl.Value{}, jsonl.Value{}, false
	for s.NextField() {
		s.Peek()
		foff := s.Offset()
		var err error
		switch string(s.Key()) {
		case "tool_call_id":
			b.resultID, err = p.str(line, foff, "message.content.tool_result.tool_call_id")
		case "content":
			b.resultContent, err = p.str(line, foff, "message.content.tool_result.content")
		case "is_error":
			v := s.Value()
			switch v.Kind() {
			case jsonl.Bool:
				b.isError, _ = v.Bool()
			case jsonl.Null:
				b.isError = false
			default:
				err = p.badValue(line, foff, "message.content.tool_result.is_error")
			}
		}
		if err != nil {
			return err
		}
	}
	if s.Err() != nil {
		return parse.ScanError(&p.cfg, line, s)
	}
	return nil
}

// usage reads the usage object due next into msg. Counters must be
// plausible token counts (see parse.Count); null counters are 0 and a null
// usage is none. A bad counter leaves msg without usage and is recorded in
// p.countErr, the line's error once its entries are made.
func (p *Parser) usage(msg *message, line jsonl.Line, off int) error {
	s := &p.s
	msg.hasUsage, msg.usage = false, schema.Usage{}
	if s.Peek() == jsonl.Null {
		s.Skip()
		return nil
	}
	if !s.EnterObject() {
		return p.wrongType(line, off, "message.usage")
	}
	msg.hasUsage = true
	bad := false
	for s.NextField() {
		s.Peek()
		foff := s.Offset()
		var dst *int64
		switch string(s.Key()) {
		case "input_tokens":
			dst = &msg.usage.Input
		case "output_tokens":
			dst = &msg.usage.Output
		case "cache_read_input_tokens":
			dst = &msg.usage.CacheRead
		case "cache_creation_input_tokens":
			dst = &msg.usage.CacheWrite
		default:
			continue
		}
		key := s.Key()
		v := s.Value()
		if s.Err() != nil {
			return parse.ScanError(&p.cfg, line, s)
		}
		n, ok := parse.Count(v)
		if !ok {
			// The entry stays, without usage; the line reports it.
			if p.countErr == nil {
				p.countErr = parse.Fail(&p.cfg, line, foff, parse.CountError(v, "message.usage."+string(key)))
			}
			bad = true
			continue
		}
		*dst = n
	}
	if s.Err() != nil {
		return parse.ScanError(&p.cfg, line, s)
	}
	if bad {
		msg.hasUsage, msg.usage = false, schema.Usage{}
	}
	return nil
}

// messageEvent fills the entry of a message event from the message and
// blocks read by [Parser.message].
func (p *Parser) messageEvent(e *schema.Entry, line jsonl.Line, ev *event) error {
	msg := ev.msg
	if msg == nil {
		return p.missing(line, ev.msgOff, "message")
	}
	if !msg.role.present() {
		return p.missing(line, ev.msgOff, "message.role")
	}

	// Blocks first: a bad block must not claim the event's id.
	p.buf = p.buf[:0]
	var nText, nResults int
	for i := range p.blocks {
		b := &p.blocks[i]
		switch {
		case b.typ.Equal("text"):
			if nText > 0 {
				p.buf = append(p.buf, '\n')
			}
			if b.text.Kind() == jsonl.String {
				p.buf = b.text.AppendText(p.buf)
			}
			nText++
		case b.typ.Equal("tool_use"):
			if !b.hasCall {
				return p.missing(line, b.off, "message.content.tool_call")
			}
			tc := schema.ToolCall{ID: parse.Str(b.callID), Name: parse.Str(b.callName)}
			if p.cfg.Text {
				tc.Input = parse.RawJSON(b.args)
			}
			e.ToolCalls = append(e.ToolCalls, tc)
		case b.typ.Equal("tool_result"):
			if !b.hasResult {
				return p.missing(line, b.off, "message.content.tool_result")
			}
			tr := schema.ToolResult{ToolCallID: parse.Str(b.resultID), IsError: b.isError}
			if p.cfg.Text {
				tr.Content = parse.Str(b.resultContent)
			}
			e.ToolResults = append(e.ToolResults, tr)
			nResults++
		}
	}

	if err := p.common(e, line, ev); err != nil {
		return err
	}
	e.Kind = schema.KindMessage
	switch role := msg.role.v; {
	case role.Equal("user"):
		e.Role = schema.RoleUser
		if len(p.blocks) > 0 && nResults == len(p.blocks) {
			e.Role = schema.RoleTool // tool results travel as a user message
		}
		e.Meta = len(p.blocks) == 0 // nothing the human sent
	case role.Equal("assistant"):
		e.Role = schema.RoleAssistant
		e.Provider = Provider
	case role.Equal("tool"), role.Equal("tool_result"):
		e.Role = schema.RoleTool
	case role.Equal("system"):
		e.Role = schema.RoleSystem
	default:
		e.Kind = schema.KindEvent
		e.Subtype = "message/" + role.String()
	}
	if e.Role == schema.RoleUser {
		e.Sender = p.user
	}
	// Real user input always carries its text: the aggregator classifies
	// sessions by their first prompt.
	if len(p.buf) > 0 && (p.cfg.Text || (e.Role == schema.RoleUser && !e.Meta)) {
		e.Text = string(p.buf)
	}
	if e.Role == schema.RoleAssistant && msg.hasUsage {
		u := msg.usage
		e.Usage = &u
		key := append(p.usageBase[:0], "m4dtimes:"...)
		key = append(key, e.SessionID...)
		key = append(key, ':')
		key = append(key, e.EntryID...)
		p.usageBase = key
		e.UsageKey = string(key)
	}
	return nil
}

// str reads the value due next as a string: a String Value, the zero Value
// for null, and a bad-field error named name for any other kind.
func (p *Parser) str(line jsonl.Line, off int, name string) (jsonl.Value, error) {
	v := p.s.Value()
	switch v.Kind() {
	case jsonl.String:
		return v, nil
	case jsonl.Null:
		return jsonl.Value{}, nil
	}
	return jsonl.Value{}, p.badValue(line, off, name)
}

// badValue reports the value just read at off: a syntax error if the
// scanner failed on it, else a bad field named name.
func (p *Parser) badValue(line jsonl.Line, off int, name string) error {
	if err := parse.ScanError(&p.cfg, line, &p.s); err != nil {
		return err
	}
	return p.bad(line, off, name)
}

// wrongType reports the value due next, at off, as not the container the
// field needs: a syntax error if the value is not even valid JSON, else a
// bad field named name.
func (p *Parser) wrongType(line jsonl.Line, off int, name string) error {
	p.s.Skip()
	return p.badValue(line, off, name)
}
