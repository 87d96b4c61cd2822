package fluux

import "github.com/sessionpipe/sessionpipe/pipeline/jsonl"

// Sniff reports whether one line looks like Fluux Agent history, by the
// detection rule of the spec: a header {"type":"session",…} with "jid" and
// "created" keys and no "id" key, or a message {"type":"message",…} with a
// top-level string "role", no nested "message" object, and a string
// "content" when it has one. Only the first JSON value of the line is
// looked at; invalid JSON gives false. It does not allocate.
func Sniff(line []byte) bool {
	var s jsonl.Scanner
	s.Reset(line)
	if !s.EnterObject() {
		return false
	}
	var (
		header, message                 bool
		hasJID, hasCreated, hasID       bool
		hasRole, hasMessage, badContent bool
	)
	for s.NextField() {
		switch string(s.Key()) {
		case "type":
			v := s.Value()
			header = v.Equal("session")
			message = v.Equal("message")
		case "jid":
			hasJID = s.Value().Kind() == jsonl.String
		case "created":
			hasCreated = s.Value().Kind() == jsonl.String
		case "id":
			hasID = true
		case "role":
			hasRole = s.Value().Kind() == jsonl.String
		case "message":
			hasMessage = true
		case "content":
			badContent = s.Value().Kind() != jsonl.String
		}
	}
	if s.Err() != nil {
		return false
	}
	switch {
	case header:
		return hasJID && hasCreated && !hasID
	case message:
		return hasRole && !hasMessage && !badContent
	}
	return false
}
