package claude

import (
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

// Sniff reports whether one line looks like a Claude Code transcript line,
// by the detection rule of the format spec: its first JSON object has a
// type among user, assistant, system, progress and attachment together
// with uuid and sessionId keys (and message for user and assistant), or is
// a file-history-snapshot, a queue-operation, or a summary with leafUuid.
// The minimal usage line of old versions (no type; sessionId, message and
// requestId or costUSD) matches too.
//
// A single line is weak evidence: the first line of a file is often a
// bookkeeping line that other lines confirm. Invalid JSON gives false.
func Sniff(line []byte) bool {
	var s jsonl.Scanner
	s.Reset(line)
	if !s.EnterObject() {
		return false
	}
	var typ jsonl.Value
	var hasType, hasUUID, hasSession, hasMessage, hasLeaf, hasRequest, hasCost bool
	for s.NextField() {
		switch string(s.Key()) {
		case "type":
			typ, hasType = s.Value(), true
		case "uuid":
			hasUUID = true
		case "sessionId":
			hasSession = true
		case "message":
			hasMessage = s.Peek() == jsonl.Object
		case "leafUuid":
			hasLeaf = true
		case "requestId":
			hasRequest = true
		case "costUSD":
			hasCost = true
		}
	}
	if s.Err() != nil {
		return false
	}
	if !hasType {
		return hasSession && hasMessage && (hasRequest || hasCost)
	}
	switch {
	case typ.Equal(string(typeUser)), typ.Equal(string(typeAssistant)):
		return hasUUID && hasSession && hasMessage
	case typ.Equal(string(typeSystem)), typ.Equal(string(typeProgress)), typ.Equal(string(typeAttachment)):
		return hasUUID && hasSession
	case typ.Equal(string(typeSnapshot)), typ.Equal(string(typeQueue)):
		return true
	case typ.Equal(string(typeSummary)):
		return hasLeaf
	}
	return false
}
