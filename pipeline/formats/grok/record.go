package grok

import (
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

// record holds what the parser reads of one updates.jsonl line, as values
// aliasing the line, captured in one pass whatever the field order. Each
// *Off is the byte offset of its value in the line.
type record struct {
	ts      jsonl.Value // timestamp: Unix seconds
	tsOff   int
	method  jsonl.Value
	session jsonl.Value // params.sessionId
	eventID jsonl.Value // params._meta.eventId, else the line's _meta.eventId
	promptM jsonl.Value // params._meta.promptId
	agentTS jsonl.Value // params._meta.agentTimestampMs
	agentOf int
	params  bool // params is an object
	update  bool // params.update is an object
	u       update
}

// update holds params.update: the ACP session update (sessionUpdate names
// its kind) or one of xAI's own (turn_completed).
type update struct {
	kind       jsonl.Value // sessionUpdate
	promptID   jsonl.Value // prompt_id
	stopReason jsonl.Value // stop_reason
	content    jsonl.Value // {type, text} of a chunk
	modelID    jsonl.Value // _meta.modelId of a user_message_chunk
	promptIdx  jsonl.Value // _meta.promptIndex of a user_message_chunk
	toolName   jsonl.Value // _meta["x.ai/tool"].name
	toolCallID jsonl.Value
	title      jsonl.Value
	rawInput   jsonl.Value
	status     jsonl.Value
	usage      jsonl.Value // the turn's usage object, whole
	usageOff   int
}

// scanRecord reads the top-level object the scanner has just entered into
// r, up to and including its closing brace. It reports false on a scanner
// error.
func scanRecord(s *jsonl.Scanner, r *record) bool {
	*r = record{}
	var topEvent jsonl.Value
	for s.NextField() {
		switch string(s.Key()) {
		case "timestamp":
			r.tsOff = s.Offset()
			r.ts = s.Value()
		case "method":
			r.method = s.Value()
		case "_meta":
			if s.Peek() != jsonl.Object {
				s.Skip()
				continue
			}
			s.EnterObject()
			for s.NextField() {
				if string(s.Key()) == "eventId" {
					topEvent = s.Value()
				} else {
					s.Skip()
				}
			}
		case "params":
			if s.Peek() != jsonl.Object {
				s.Skip()
				continue
			}
			s.EnterObject()
			r.params = true
			scanParams(s, r)
		default:
			s.Skip()
		}
	}
	if r.eventID.Kind() != jsonl.String {
		r.eventID = topEvent
	}
	return s.Err() == nil
}

// scanParams reads the fields of params, entered.
func scanParams(s *jsonl.Scanner, r *record) {
	for s.NextField() {
		switch string(s.Key()) {
		case "sessionId":
			r.session = s.Value()
		case "_meta":
			if s.Peek() != jsonl.Object {
				s.Skip()
				continue
			}
			s.EnterObject()
			for s.NextField() {
				switch string(s.Key()) {
				case "eventId":
					r.eventID = s.Value()
				case "promptId":
					r.promptM = s.Value()
				case "agentTimestampMs":
					r.agentOf = s.Offset()
					r.agentTS = s.Value()
				default:
					s.Skip()
				}
			}
		case "update":
			if s.Peek() != jsonl.Object {
				s.Skip()
				continue
			}
			s.EnterObject()
			r.update = true
			scanUpdate(s, &r.u)
		default:
			s.Skip()
		}
	}
}

// scanUpdate reads the fields of params.update, entered.
func scanUpdate(s *jsonl.Scanner, u *update) {
	for s.NextField() {
		switch string(s.Key()) {
		case "sessionUpdate":
			u.kind = s.Value()
		case "prompt_id":
			u.promptID = s.Value()
		case "stop_reason":
			u.stopReason = s.Value()
		case "content":
			u.content = s.Value()
		case "toolCallId":
			u.toolCallID = s.Value()
		case "title":
			u.title = s.Value()
		case "rawInput":
			u.rawInput = s.Value()
		case "status":
			u.status = s.Value()
		case "usage":
			u.usageOff = s.Offset()
			u.usage = s.Value()
		case "_meta":
			if s.Peek() != jsonl.Object {
				s.Skip()
				continue
			}
			s.EnterObject()
			for s.NextField() {
				switch string(s.Key()) {
				case "modelId":
					u.modelID = s.Value()
				case "promptIndex":
					u.promptIdx = s.Value()
				case "x.ai/tool":
					if s.Peek() != jsonl.Object {
						s.Skip()
						continue
					}
					s.EnterObject()
					for s.NextField() {
						if string(s.Key()) == "name" {
							u.toolName = s.Value()
						} else {
							s.Skip()
						}
					}
				default:
					s.Skip()
				}
			}
		default:
			s.Skip()
		}
	}
}

// scanText returns the text of a chunk's content {type, text}; content may
// also be an array of such blocks, whose texts are joined.
func scanText(s *jsonl.Scanner, content jsonl.Value) string {
	switch content.Kind() {
	case jsonl.Object:
		s.Reset(content.Raw())
		s.EnterObject()
		var text string
		for s.NextField() {
			if string(s.Key()) == "text" {
				text = parse.Str(s.Value())
			} else {
				s.Skip()
			}
		}
		return text
	case jsonl.Array:
		s.Reset(content.Raw())
		s.EnterArray()
		var out []byte
		for s.NextElem() {
			if s.Peek() != jsonl.Object {
				s.Skip()
				continue
			}
			s.EnterObject()
			for s.NextField() {
				if string(s.Key()) == "text" {
					out = append(out, parse.Str(s.Value())...)
				} else {
					s.Skip()
				}
			}
		}
		return string(out)
	}
	return ""
}
