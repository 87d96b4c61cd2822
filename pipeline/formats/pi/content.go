package pi

import (
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// block holds the fields of one content block; its type may come last.
type block struct {
	typ, text, id, name, args, mime jsonl.Value
}

// walkContent reads message content due next in s: a string, or an array
// of text, thinking, toolCall and image blocks. Text blocks are joined with
// "\n" into p.text when wantText; thinking is never text. Tool calls go to
// p.calls and images to p.atts.
func (p *Parser) walkContent(s *jsonl.Scanner, wantText bool) {
	if s.Peek() == jsonl.String {
		v := s.Value()
		if wantText {
			p.addText(v)
		}
		return
	}
	if !s.EnterArray() {
		s.Skip()
		return
	}
	for s.NextElem() {
		if !s.EnterObject() {
			if v := s.Value(); !v.IsNull() && p.r.msg.contentBad.Kind() == jsonl.Invalid {
				p.r.msg.contentBad = v
			}
			continue
		}
		var b block
		for s.NextField() {
			switch string(s.Key()) {
			case "type":
				b.typ = s.Value()
			case "text":
				b.text = s.Value()
			case "id":
				b.id = s.Value()
			case "name":
				b.name = s.Value()
			case "arguments":
				b.args = s.Value()
			case "mimeType":
				b.mime = s.Value()
			}
		}
		p.addBlock(&b, wantText)
	}
}

// walkValue walks content kept as a whole value (the role came after it,
// or the content is a top-level custom_message field). It reports false
// when v is neither a string, an array nor null.
func (p *Parser) walkValue(v jsonl.Value, wantText bool) bool {
	switch v.Kind() {
	case jsonl.Invalid, jsonl.Null:
		return true
	case jsonl.String:
		if wantText {
			p.addText(v)
		}
		return true
	case jsonl.Array:
		p.sub.Reset(v.Raw())
		p.walkContent(&p.sub, wantText)
		p.sub.Reset(nil)
		return true
	}
	return false
}

func (p *Parser) addText(v jsonl.Value) {
	if v.Kind() != jsonl.String {
		return
	}
	if p.hasText {
		p.text = append(p.text, '\n')
	}
	p.text = v.AppendText(p.text)
	p.hasText = true
}

func (p *Parser) addBlock(b *block, wantText bool) {
	switch t := p.bytesOf(b.typ); string(t) {
	case "text":
		if wantText {
			p.addText(b.text)
		}
	case "toolCall":
		p.calls = append(p.calls, schema.ToolCall{
			ID:    copyStr(b.id),
			Name:  p.intern(b.name),
			Input: p.input(b.args),
		})
	case "image":
		p.atts = append(p.atts, schema.Attachment{MimeType: p.intern(b.mime)})
	}
}

// input returns a copy of a tool call's raw arguments when text is asked
// for, or nil.
func (p *Parser) input(v jsonl.Value) []byte {
	if !p.cfg.Text {
		return nil
	}
	switch v.Kind() {
	case jsonl.Invalid, jsonl.Null:
		return nil
	case jsonl.String: // Raw is the content without its quotes
		b := make([]byte, 0, len(v.Raw())+2)
		b = append(b, '"')
		b = append(b, v.Raw()...)
		return append(b, '"')
	}
	return append([]byte(nil), v.Raw()...)
}

// nexusToolCalls reads a Nexus toolCalls array [{id, name, params}] into
// p.calls. It reports false when v is neither an array nor null.
func (p *Parser) nexusToolCalls(v jsonl.Value) bool {
	switch v.Kind() {
	case jsonl.Invalid, jsonl.Null:
		return true
	case jsonl.Array:
	default:
		return false
	}
	s := &p.sub
	s.Reset(v.Raw())
	defer s.Reset(nil)
	s.EnterArray()
	for s.NextElem() {
		if !s.EnterObject() {
			continue // a malformed element of an optional extension field
		}
		var id, name, args jsonl.Value
		for s.NextField() {
			switch string(s.Key()) {
			case "id":
				id = s.Value()
			case "name":
				name = s.Value()
			case "params", "arguments", "input":
				args = s.Value()
			}
		}
		if id.Kind() == jsonl.String || name.Kind() == jsonl.String {
			p.calls = append(p.calls, schema.ToolCall{ID: copyStr(id), Name: p.intern(name), Input: p.input(args)})
		}
	}
	return true
}
