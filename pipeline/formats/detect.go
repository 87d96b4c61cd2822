package formats

import (
	"errors"

	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// DetectLines is how many non-blank lines of a file detection looks at:
// Claude Code files often start with bookkeeping lines that do not tell
// the format by themselves.
const DetectLines = 20

// ErrUnknownFormat reports a file whose first lines match no supported
// transcript format. Callers skip such a file (and remember it), they do
// not fail.
var ErrUnknownFormat = errors.New("formats: not a known transcript format")

// Detect returns the format of a file from its first non-blank lines (at
// most [DetectLines] are looked at), never from its path. It returns
// ErrUnknownFormat when no line is conclusive. Lines that are not valid
// JSON objects are ignored, so a broken first line does not hide the
// format.
//
// The rules are the detection sections of the format specs: a header line
// decides at once (pi/OpenClaw `session` with id and cwd, Fluux `session`
// with jid, m4dtimes `session` with a numeric userId, Codex `session_meta`);
// otherwise the first line whose shape belongs to one format only decides.
func Detect(head [][]byte) (schema.Format, error) {
	var s jsonl.Scanner
	var weak schema.Format
	for i, line := range head {
		if i >= DetectLines {
			break
		}
		var f features
		if !f.read(&s, line) {
			continue
		}
		if format, strong := f.format(); format != "" {
			if strong {
				return format, nil
			}
			if weak == "" {
				weak = format
			}
		}
	}
	if weak != "" {
		return weak, nil
	}
	return "", ErrUnknownFormat
}

// features are the shape of one line that detection looks at.
type features struct {
	typ       string
	hasUUID   bool
	hasSessID bool
	hasID     bool
	hasCWD    bool
	hasJID    bool
	userIDNum bool
	hasLeaf   bool
	hasTS     bool
	roleTop   bool // a top-level "role" (Fluux messages)
	version   int64
	keys      int

	payloadID bool // payload is an object with an id
	payload   bool

	message     bool   // message is an object
	msgRole     string // message.role
	msgTSNum    bool   // message.timestamp is a number (pi)
	msgUsage    bool   // message.usage is an object
	piUsage     bool   // usage has cacheRead/input (pi naming)
	nestedTools bool   // content blocks nest tool_call/tool_result objects (m4dtimes)
}

var typeNames = [...]string{
	"user", "assistant", "system", "progress", "attachment", "summary",
	"file-history-snapshot", "queue-operation", "session", "message",
	"session_meta", "response_item", "event_msg", "turn_context", "compacted",
}

// read scans line; it reports false if the line is not a JSON object.
func (f *features) read(s *jsonl.Scanner, line []byte) bool {
	s.Reset(line)
	if !s.More() || !s.EnterObject() {
		return false
	}
	for s.NextField() {
		f.keys++
		switch string(s.Key()) {
		case "type":
			v := s.Value()
			for _, name := range typeNames {
				if v.Equal(name) {
					f.typ = name
				}
			}
		case "uuid":
			f.hasUUID = true
		case "sessionId":
			f.hasSessID = true
		case "id":
			f.hasID = s.Value().Kind() == jsonl.String
		case "cwd":
			f.hasCWD = true
		case "jid":
			f.hasJID = true
		case "userId":
			f.userIDNum = s.Value().Kind() == jsonl.Number
		case "leafUuid":
			f.hasLeaf = true
		case "timestamp":
			f.hasTS = true
		case "role":
			f.roleTop = true
		case "version":
			f.version, _ = s.Value().Int()
		case "payload":
			f.payload = true
			if s.EnterObject() {
				for s.NextField() {
					if string(s.Key()) == "id" {
						f.payloadID = true
					}
				}
			}
		case "message":
			if s.EnterObject() {
				f.message = true
				f.readMessage(s)
			}
		}
	}
	return s.Finish()
}

func (f *features) readMessage(s *jsonl.Scanner) {
	for s.NextField() {
		switch string(s.Key()) {
		case "role":
			f.msgRole = s.Value().String()
		case "timestamp":
			f.msgTSNum = s.Value().Kind() == jsonl.Number
		case "usage":
			if s.EnterObject() {
				f.msgUsage = true
				for s.NextField() {
					switch string(s.Key()) {
					case "cacheRead", "cacheWrite", "totalTokens":
						f.piUsage = true
					}
				}
			}
		case "content":
			if s.EnterArray() {
				for s.NextElem() {
					if s.EnterObject() {
						for s.NextField() {
							switch string(s.Key()) {
							case "tool_call", "tool_result":
								f.nestedTools = f.nestedTools || s.Peek() == jsonl.Object
							}
						}
					}
				}
			}
		}
	}
}

// format classifies the line; strong reports a conclusive header line.
func (f *features) format() (format schema.Format, strong bool) {
	switch f.typ {
	case "session":
		switch {
		case f.hasJID:
			return schema.FormatFluux, true
		case f.userIDNum:
			return schema.FormatM4dtimes, true
		case f.hasID && f.hasCWD:
			return schema.FormatPi, true
		}
		return "", false
	case "session_meta":
		if f.payloadID {
			return schema.FormatCodex, true
		}
	case "response_item", "event_msg", "turn_context", "compacted":
		if f.payload && f.hasTS {
			return schema.FormatCodex, true
		}
	case "user", "assistant", "system", "progress", "attachment":
		if f.hasUUID && f.hasSessID && (f.message || f.typ == "system" || f.typ == "progress" || f.typ == "attachment") {
			return schema.FormatClaudeCode, true
		}
	case "file-history-snapshot", "queue-operation":
		return schema.FormatClaudeCode, true
	case "summary":
		if f.hasLeaf {
			return schema.FormatClaudeCode, true
		}
	case "message":
		switch {
		case f.roleTop && !f.message:
			return schema.FormatFluux, false
		case f.message && f.nestedTools:
			return schema.FormatM4dtimes, false
		case f.message && (f.msgTSNum || f.piUsage):
			return schema.FormatPi, false
		case f.message && f.msgRole != "" && f.hasID:
			// A headerless message without pi's millisecond timestamp
			// nor m4dtimes' nested tool blocks: pi roles decide.
			switch f.msgRole {
			case "toolResult", "bashExecution", "custom":
				return schema.FormatPi, false
			}
		}
	case "":
		// The minimal Claude Code usage line (old versions, ccusage
		// fixtures): no type, a message with usage and a timestamp.
		if f.message && f.msgUsage && !f.piUsage && f.hasTS {
			return schema.FormatClaudeCode, false
		}
	}
	return "", false
}
