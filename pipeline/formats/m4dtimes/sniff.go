package m4dtimes

import "github.com/sessionpipe/sessionpipe/pipeline/jsonl"

// Sniff reports whether one line looks like an m4dtimes session event, by
// the detection rule of the spec:
//
//   - a header {"type":"session",…} with an integer "userId", an "id" of 8
//     hex digits, and no "cwd" or "jid" key; or
//   - a message event {"type":"message","message":{…}} whose message has
//     only the keys role, content and usage, a string role, a content
//     array of blocks typed text, tool_use (with a tool_call object) or
//     tool_result (with a tool_result object), and a usage, if any, with
//     snake_case input_tokens/output_tokens.
//
// Keys outside the SDK's Event struct disqualify a line (pi's message
// events carry message.timestamp, Claude's carry uuid and sessionId). Only
// the first JSON value of the line is looked at; invalid JSON gives false.
// It does not allocate.
func Sniff(line []byte) bool {
	var s jsonl.Scanner
	s.Reset(line)
	if !s.EnterObject() {
		return false
	}
	var header, message, hexID, intUser, msgOK, hasMsg bool
	for s.NextField() {
		switch string(s.Key()) {
		case "type":
			v := s.Value()
			header = v.Equal("session")
			message = v.Equal("message")
		case "id":
			hexID = isHexID(s.Value())
		case "userId":
			_, intUser = s.Value().Int()
		case "message":
			hasMsg = true
			msgOK = sniffMessage(&s)
		case "version", "parentId", "timestamp", "error":
		default:
			return false
		}
	}
	if s.Err() != nil {
		return false
	}
	switch {
	case header:
		return hexID && intUser && !hasMsg
	case message:
		return hasMsg && msgOK
	}
	return false
}

// isHexID reports whether v is a string of 8 lower-case hex digits, as
// hex.EncodeToString of 4 random bytes gives.
func isHexID(v jsonl.Value) bool {
	raw := v.Raw()
	if v.Kind() != jsonl.String || len(raw) != 8 {
		return false
	}
	for _, c := range raw {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// sniffMessage checks the message object due next in s.
func sniffMessage(s *jsonl.Scanner) bool {
	if !s.EnterObject() {
		return false
	}
	role, blocksOK := false, true
	for s.NextField() {
		switch string(s.Key()) {
		case "role":
			role = s.Value().Kind() == jsonl.String
		case "content":
			blocksOK = sniffBlocks(s)
		case "usage":
			if !sniffUsage(s) {
				return false
			}
		default:
			return false
		}
	}
	return role && blocksOK && s.Err() == nil
}

// sniffBlocks checks the content array due next in s.
func sniffBlocks(s *jsonl.Scanner) bool {
	if s.Peek() == jsonl.Null {
		s.Skip()
		return true
	}
	if !s.EnterArray() {
		return false
	}
	for s.NextElem() {
		if !s.EnterObject() {
			return false
		}
		var text, toolUse, toolResult, hasCall, hasResult bool
		for s.NextField() {
			switch string(s.Key()) {
			case "type":
				v := s.Value()
				text, toolUse, toolResult = v.Equal("text"), v.Equal("tool_use"), v.Equal("tool_result")
			case "tool_call":
				hasCall = s.Peek() == jsonl.Object
			case "tool_result":
				hasResult = s.Peek() == jsonl.Object
			case "text":
			default:
				return false // e.g. pi's toolCall blocks carry arguments inline
			}
		}
		if !text && !(toolUse && hasCall) && !(toolResult && hasResult) {
			return false
		}
	}
	return s.Err() == nil
}

// sniffUsage checks the usage object due next in s: snake_case token keys.
func sniffUsage(s *jsonl.Scanner) bool {
	if s.Peek() == jsonl.Null {
		s.Skip()
		return true
	}
	if !s.EnterObject() {
		return false
	}
	found := false
	for s.NextField() {
		switch string(s.Key()) {
		case "input_tokens", "output_tokens":
			found = true
		case "cache_read_input_tokens", "cache_creation_input_tokens":
		default:
			return false
		}
	}
	return found && s.Err() == nil
}
