package codex

import "github.com/sessionpipe/sessionpipe/pipeline/jsonl"

// Sniff reports whether line looks like a rollout line: a JSON object with
// a timestamp, a payload object and a type that is one of session_meta,
// response_item, event_msg, turn_context and compacted (the detection rule
// of the format spec). It reads only the top level of the line, accepts
// fields in any order and never fails; a line of any other format, invalid
// JSON or a partial line gives false.
func Sniff(line []byte) bool {
	var s jsonl.Scanner
	s.Reset(line)
	if !s.EnterObject() {
		return false
	}
	var hasTS, hasPayload, known bool
	for s.NextField() {
		switch string(s.Key()) {
		case "timestamp":
			k := s.Value().Kind()
			hasTS = k == jsonl.String || k == jsonl.Number
		case "type":
			v := s.Value()
			known = v.Equal("session_meta") || v.Equal("response_item") ||
				v.Equal("event_msg") || v.Equal("turn_context") || v.Equal("compacted")
		case "payload":
			hasPayload = s.Peek() == jsonl.Object
		}
	}
	return s.Err() == nil && hasTS && hasPayload && known
}
