package codex

import (
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// responseItem fills the entry of a response_item line: a model-visible
// item of the conversation.
func (p *Parser) responseItem(e *schema.Entry, pl *payload) {
	e.Subtype = subtype(pl.typ, "response_item")
	switch {
	case pl.typ.Equal("message"):
		e.Kind = schema.KindMessage
		switch {
		case pl.role.Equal("assistant"):
			e.Role = schema.RoleAssistant
			e.MessageID = parse.Str(pl.id)
			e.Model = p.model
		case pl.role.Equal("user"):
			// Injected context; the typed prompt is event_msg user_message.
			e.Role = schema.RoleUser
			e.Meta = true
		default: // developer, system
			e.Role = schema.RoleSystem
			e.Meta = true
		}
		if p.cfg.Text {
			e.Text = p.blockText(pl.content)
		}
	case pl.typ.Equal("reasoning"):
		e.Kind = schema.KindEvent
		e.Role = schema.RoleAssistant
		if p.cfg.Text {
			if e.Text = p.blockText(pl.summary); e.Text == "" {
				e.Text = p.blockText(pl.content)
			}
		}
	case pl.typ.Equal("function_call"), pl.typ.Equal("custom_tool_call"):
		e.Kind = schema.KindEvent
		e.Role = schema.RoleAssistant
		tc := schema.ToolCall{ID: parse.Str(pl.callID), Name: parse.Str(pl.name)}
		switch {
		case !p.cfg.Text:
		case pl.typ.Equal("function_call"):
			tc.Input = p.argumentsJSON(pl.arguments)
		default: // a custom tool's input is free text, not JSON arguments
			tc.Input = parse.RawJSON(pl.input)
		}
		e.ToolCalls = []schema.ToolCall{tc}
	case pl.typ.Equal("function_call_output"), pl.typ.Equal("custom_tool_call_output"):
		e.Kind = schema.KindMessage
		e.Role = schema.RoleTool
		tr := schema.ToolResult{ToolCallID: parse.Str(pl.callID)}
		if p.cfg.Text {
			tr.Content = p.outputText(pl.output)
		}
		e.ToolResults = []schema.ToolResult{tr}
	default: // web_search_call and unknown item types
		e.Kind = schema.KindEvent
	}
}

// eventMsg fills the entry of an event_msg line: a UI event. Only
// user_message is a message; token_count carries usage.
func (p *Parser) eventMsg(e *schema.Entry, line jsonl.Line, pl *payload, replayed bool) error {
	e.Kind = schema.KindEvent
	e.Subtype = subtype(pl.typ, "event_msg")
	switch {
	case pl.typ.Equal("user_message"):
		e.Kind = schema.KindMessage
		e.Role = schema.RoleUser
		e.Text = parse.Str(pl.message)
		if pl.kind.Kind() == jsonl.String && !pl.kind.Equal("plain") {
			e.Meta = true // old builds: user_instructions, environment_context
		}
		e.Attachments = p.attachments(pl.images, pl.localImgs)
	case pl.typ.Equal("agent_message"):
		if p.cfg.Text {
			e.Text = parse.Str(pl.message)
		}
	case pl.typ.Equal("agent_reasoning"):
		if p.cfg.Text {
			e.Text = parse.Str(pl.text)
		}
	case pl.typ.Equal("task_started"), pl.typ.Equal("task_complete"):
		e.RequestID = parse.Str(pl.turnID)
	case pl.typ.Equal("turn_aborted"):
		e.RequestID = parse.Str(pl.turnID)
		e.StopReason = parse.Str(pl.reason)
	case pl.typ.Equal("token_count"):
		return p.tokenCount(e, line, pl, replayed)
	}
	return nil
}

// subtype returns the payload type, or the line type when the payload
// names none. The types of the spec are returned without a copy.
func subtype(typ jsonl.Value, line string) string {
	if typ.Kind() == jsonl.String && !typ.Escaped() {
		if k := knownType(typ.Raw()); k != "" {
			return k
		}
	}
	if t := parse.Str(typ); t != "" {
		return t
	}
	return line
}

// knownType returns b as a constant string when it is a payload type of
// the spec, else "".
func knownType(b []byte) string {
	switch string(b) {
	case "message":
		return "message"
	case "reasoning":
		return "reasoning"
	case "function_call":
		return "function_call"
	case "function_call_output":
		return "function_call_output"
	case "custom_tool_call":
		return "custom_tool_call"
	case "custom_tool_call_output":
		return "custom_tool_call_output"
	case "web_search_call":
		return "web_search_call"
	case "user_message":
		return "user_message"
	case "agent_message":
		return "agent_message"
	case "agent_reasoning":
		return "agent_reasoning"
	case "token_count":
		return "token_count"
	case "task_started":
		return "task_started"
	case "task_complete":
		return "task_complete"
	case "turn_aborted":
		return "turn_aborted"
	case "context_compacted":
		return "context_compacted"
	}
	return ""
}

// blockText joins the text of the blocks of a content or summary array
// ([{type, text}]) with newlines. A string value is its own text.
func (p *Parser) blockText(v jsonl.Value) string {
	switch v.Kind() {
	case jsonl.String:
		return v.String()
	case jsonl.Array:
	default:
		return ""
	}
	s := &p.sub
	s.Reset(v.Raw())
	b := p.buf[:0]
	n := 0
	if s.EnterArray() {
		for s.NextElem() {
			if !s.EnterObject() {
				continue
			}
			for s.NextField() {
				if string(s.Key()) != "text" {
					continue
				}
				if t := s.Value(); t.Kind() == jsonl.String {
					if n > 0 {
						b = append(b, '\n')
					}
					b = t.AppendText(b)
					n++
				}
			}
		}
	}
	p.buf = b
	return string(b)
}

// outputText returns the text of a tool output: a string as is, an array
// of text blocks joined, an object's "content" string, else the raw JSON.
func (p *Parser) outputText(v jsonl.Value) string {
	switch v.Kind() {
	case jsonl.Invalid, jsonl.Null:
		return ""
	case jsonl.String:
		return v.String()
	case jsonl.Array:
		return p.blockText(v)
	case jsonl.Object:
		s := &p.sub
		s.Reset(v.Raw())
		if c := findString(s, "content"); c != "" {
			return c
		}
	}
	return string(v.Raw())
}

// argumentsJSON returns the input of a function call: its arguments string
// decoded when that holds one valid JSON value, else the string itself as
// a JSON string; an arguments object or array is kept as is.
func (p *Parser) argumentsJSON(v jsonl.Value) []byte {
	if v.Kind() != jsonl.String {
		return parse.RawJSON(v)
	}
	p.buf = v.AppendText(p.buf[:0])
	inner := trimSpace(p.buf)
	s := &p.sub
	s.Reset(inner)
	if len(inner) > 0 && s.More() && s.Finish() && !s.More() && s.Err() == nil {
		return append([]byte(nil), inner...)
	}
	return parse.RawJSON(v)
}

// attachments lists the images of a user_message: images holds URLs
// (often data: URLs, whose MIME type is kept), local_images file paths.
func (p *Parser) attachments(images, local jsonl.Value) []schema.Attachment {
	var out []schema.Attachment
	s := &p.sub
	if images.Kind() == jsonl.Array {
		s.Reset(images.Raw())
		if s.EnterArray() {
			for s.NextElem() {
				v := s.Value()
				if v.Kind() != jsonl.String {
					continue
				}
				out = append(out, schema.Attachment{MimeType: dataURLType(v.String())})
			}
		}
	}
	if local.Kind() == jsonl.Array {
		s.Reset(local.Raw())
		if s.EnterArray() {
			for s.NextElem() {
				if v := s.Value(); v.Kind() == jsonl.String {
					out = append(out, schema.Attachment{Filename: v.String()})
				} else if v.Kind() == jsonl.Object {
					sub := jsonl.Scanner{}
					sub.Reset(v.Raw())
					out = append(out, schema.Attachment{Filename: findString(&sub, "path")})
				}
			}
		}
	}
	return out
}

// dataURLType returns the MIME type of a data: URL, or "".
func dataURLType(u string) string {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, ";,"); i >= 0 {
		return rest[:i]
	}
	return ""
}

// trimSpace trims JSON whitespace from both ends of b.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
