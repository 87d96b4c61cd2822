package kimi

import "github.com/sessionpipe/sessionpipe/pipeline/jsonl"

// record holds the top-level fields of one wire.jsonl line the parser
// reads, as values aliasing the line, captured in one pass whatever their
// order: the metadata header {type, protocol_version}, or a message
// record {timestamp, message: {type, payload}}.
type record struct {
	typ      jsonl.Value // "metadata" on the header
	protocol jsonl.Value
	ts       jsonl.Value
	tsOff    int
	message  jsonl.Value // the envelope, whole
	msgOff   int
}

// scanRecord reads the top-level object the scanner has just entered into
// r, up to and including its closing brace. It reports false on a scanner
// error.
func scanRecord(s *jsonl.Scanner, r *record) bool {
	*r = record{}
	for s.NextField() {
		switch string(s.Key()) {
		case "type":
			r.typ = s.Value()
		case "protocol_version":
			r.protocol = s.Value()
		case "timestamp":
			r.tsOff = s.Offset()
			r.ts = s.Value()
		case "message":
			r.msgOff = s.Offset()
			r.message = s.Value()
		}
	}
	return s.Err() == nil
}

// envelope is a wire message {type, payload}, with the payload's offset
// within the envelope.
type envelope struct {
	typ        jsonl.Value
	payload    jsonl.Value
	payloadOff int
}

// scanEnvelope reads an envelope object (raw). It reports false when raw
// is not an object or does not scan.
func scanEnvelope(s *jsonl.Scanner, raw []byte, env *envelope) bool {
	*env = envelope{}
	s.Reset(raw)
	if !s.EnterObject() {
		return false
	}
	for s.NextField() {
		switch string(s.Key()) {
		case "type":
			env.typ = s.Value()
		case "payload":
			env.payloadOff = s.Offset()
			env.payload = s.Value()
		}
	}
	return s.Err() == nil
}

// payload holds the payload fields the parser reads, of every message
// type it knows.
type payload struct {
	userInput  jsonl.Value // TurnBegin, SteerInput
	tokenUsage jsonl.Value // StatusUpdate
	usageOff   int
	messageID  jsonl.Value // StatusUpdate
	partType   jsonl.Value // ContentPart: "text", "think", …
	text       jsonl.Value // ContentPart text
	id         jsonl.Value // ToolCall
	function   jsonl.Value // ToolCall {name, arguments}
	toolCallID jsonl.Value // ToolResult
	returnVal  jsonl.Value // ToolResult {is_error, output, message}
	agentID    jsonl.Value // SubagentEvent
	agentType  jsonl.Value // SubagentEvent subagent_type
	event      jsonl.Value // SubagentEvent: the nested envelope
	eventOff   int
}

// scanPayload reads a payload object (raw) into p. It reports false when
// raw is not an object or does not scan.
func scanPayload(s *jsonl.Scanner, raw []byte, p *payload) bool {
	*p = payload{}
	s.Reset(raw)
	if !s.EnterObject() {
		return false
	}
	for s.NextField() {
		switch string(s.Key()) {
		case "user_input":
			p.userInput = s.Value()
		case "token_usage":
			p.usageOff = s.Offset()
			p.tokenUsage = s.Value()
		case "message_id":
			p.messageID = s.Value()
		case "type":
			p.partType = s.Value()
		case "text":
			p.text = s.Value()
		case "id":
			p.id = s.Value()
		case "function":
			p.function = s.Value()
		case "tool_call_id":
			p.toolCallID = s.Value()
		case "return_value":
			p.returnVal = s.Value()
		case "agent_id":
			p.agentID = s.Value()
		case "subagent_type":
			p.agentType = s.Value()
		case "event":
			p.eventOff = s.Offset()
			p.event = s.Value()
		}
	}
	return s.Err() == nil
}

// usageNames are the TokenUsage counters, in the order of counts.
var usageNames = [4]string{"input_other", "output", "input_cache_read", "input_cache_creation"}

// counts holds the TokenUsage counters and their offsets within it.
type counts struct {
	vals [4]jsonl.Value
	offs [4]int
}

// scanUsage reads a token_usage object (raw) into c. It reports false
// when raw is not an object or does not scan.
func scanUsage(s *jsonl.Scanner, raw []byte, c *counts) bool {
	*c = counts{}
	s.Reset(raw)
	if !s.EnterObject() {
		return false
	}
	for s.NextField() {
		key := string(s.Key())
		for i, name := range usageNames {
			if key == name {
				c.offs[i] = s.Offset()
				c.vals[i] = s.Value()
				break
			}
		}
	}
	return s.Err() == nil
}
