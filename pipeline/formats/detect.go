package formats

import (
	"bytes"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/trajectory"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// DetectLines is how many non-blank lines of a file detection looks at:
// Claude Code files often start with bookkeeping lines that do not tell
// the format by themselves. A [Decoder] holds at most this many lines
// while the format is undecided.
const DetectLines = 20

// detect returns the format of a file from its first non-blank lines (at
// most [DetectLines] are looked at), as a [Decoder] fed these lines and
// ended as final decides it. It returns ErrUnknownFormat when no line
// tells the format.
func detect(head [][]byte) (schema.Format, error) {
	var d detector
	for i, line := range head {
		if i >= DetectLines {
			break
		}
		if f, strong := d.line(line); strong {
			return f, nil
		}
	}
	if d.weak != "" {
		return d.weak, nil
	}
	return "", ErrUnknownFormat
}

// detector classifies lines one at a time. The rules are the detection
// sections of the format specs: an OpenClaw trajectory line (traceSchema
// "openclaw-trajectory") decides at once, as does a header line
// (pi/OpenClaw `session` with id and cwd, Fluux `session` with jid,
// m4dtimes `session` with a numeric userId, Codex `session_meta`, Gemini
// CLI's metadata with sessionId and projectHash), and so
// does a line whose shape belongs to one format only (a Claude Code line
// with uuid and sessionId, a Claude Code bookkeeping line with sessionId
// or its own field, a Codex line with payload and timestamp, a Gemini CLI
// "gemini" message with id, timestamp and content); a headerless
// message line of pi, Fluux or m4dtimes, or the minimal Claude Code usage
// line of old versions, is a weak match that decides only when nothing
// stronger comes (see [Decoder]). Lines that are not JSON objects tell
// nothing, so a broken first line does not hide the format.
type detector struct {
	s    jsonl.Scanner
	weak schema.Format // the first weak match
}

// line classifies one line; strong reports a conclusive one. A weak match
// is remembered in d.weak.
func (d *detector) line(line []byte) (f schema.Format, strong bool) {
	var ft features
	if !ft.read(&d.s, line) {
		return "", false
	}
	f, strong = ft.format()
	if f != "" && !strong && d.weak == "" {
		d.weak = f
	}
	return f, strong
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
	trace     bool // traceSchema is "openclaw-trajectory"
	dotted    bool // type is a string with a dot ("session.start": Copilot CLI)
	parentID  bool // a "parentId" field (pi, Copilot CLI)
	dataObj   bool // data is an object (Copilot CLI, trajectories)
	ownField  bool // a field only a Claude Code bookkeeping line of this type has
	keys      int

	// Gemini CLI.
	projHash   bool // projectHash is a string (its metadata record)
	hasContent bool // a top-level "content" (its messages)

	// Qwen Code (a Gemini CLI fork with Claude Code's record envelope).
	msgParts  bool // message.parts: a Gemini Content, never Claude's message
	usageMeta bool // a top-level usageMetadata object
	sysPay    bool // a top-level systemPayload object

	// Kimi CLI (wire.jsonl).
	proto      bool // protocol_version (its metadata header)
	tsNum      bool // timestamp is a number (seconds)
	msgPayload bool // message.payload is an object (a wire envelope)
	msgTyped   bool // message.type is a string

	payloadID bool // payload is an object with an id
	payload   bool

	// Grok Build CLI.
	sessionUpdate bool // params.update.sessionUpdate is a string (an ACP session update)
	xaiMethod     bool // method is in xAI's namespace ("_x.ai/…")
	// OpenCode.
	ocSessionID bool // "sessionID" (its message documents' spelling)
	ocTime      bool // "time" is an object
	ocRow       int  // of "session_id", "time_updated", "data": a message row in its JSON form

	// Goose.
	gooseRow bool // "model_config_json": a sessions row in its JSON form

	message     bool   // message is an object
	msgRole     string // message.role
	msgTSNum    bool   // message.timestamp is a number (pi)
	msgUsage    bool   // message.usage is an object
	piUsage     bool   // usage has cacheRead/input (pi naming)
	apiUsage    bool   // usage has input_tokens/output_tokens (Anthropic's naming)
	nestedTools bool   // content blocks nest tool_call/tool_result objects (m4dtimes)
}

// typeNames are the line types detection knows.
var typeNames = [...]string{
	"user", "assistant", "system", "progress", "attachment", "summary",
	"session", "message",
	"session_meta", "response_item", "event_msg", "turn_context", "compacted",
	"gemini",      // Gemini CLI's model messages
	"tool_result", // Qwen Code's tool results
	"metadata",    // Kimi CLI's wire.jsonl header
	// Claude Code bookkeeping-only types.
	"file-history-snapshot", "queue-operation", "ai-title", "agent-name",
	"custom-title", "last-prompt", "teleported-from", "pr-link", "mode",
	"permission-mode", "bridge-session", "file-history-delta",
	"fork-context-ref",
}

// Fields that only one Claude Code bookkeeping type writes
// (claude-code.md §2.5): with one of them, a line of that type is Claude
// Code even without its sessionId. Types whose fields are generic
// ("mode", "operation", "permissionMode") or not documented need the
// sessionId.
const (
	ownSnapshot = 1 << iota
	ownAITitle
	ownAgentName
	ownCustomTitle
	ownLastPrompt
	ownPRLink
	ownBridge
)

// ownFieldBit returns the bit of a type's own field, or 0.
func ownFieldBit(key []byte) uint8 {
	switch string(key) {
	case "snapshot":
		return ownSnapshot
	case "aiTitle":
		return ownAITitle
	case "agentName":
		return ownAgentName
	case "customTitle":
		return ownCustomTitle
	case "lastPrompt":
		return ownLastPrompt
	case "prUrl", "prNumber":
		return ownPRLink
	case "bridgeSessionId":
		return ownBridge
	}
	return 0
}

// ownFieldOf returns the own-field bit of a bookkeeping type, or 0.
func ownFieldOf(typ string) uint8 {
	switch typ {
	case "file-history-snapshot":
		return ownSnapshot
	case "ai-title":
		return ownAITitle
	case "agent-name":
		return ownAgentName
	case "custom-title":
		return ownCustomTitle
	case "last-prompt":
		return ownLastPrompt
	case "pr-link":
		return ownPRLink
	case "bridge-session":
		return ownBridge
	}
	return 0
}

// read scans line; it reports false if the line is not a JSON object.
func (f *features) read(s *jsonl.Scanner, line []byte) bool {
	s.Reset(line)
	if !s.More() || !s.EnterObject() {
		return false
	}
	// Field order varies: the own fields seen are checked once the type
	// is known.
	var own uint8
	for s.NextField() {
		f.keys++
		switch key := s.Key(); string(key) {
		case "type":
			v := s.Value()
			f.dotted = v.Kind() == jsonl.String && bytes.IndexByte(v.Raw(), '.') > 0
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
			f.tsNum = s.Value().Kind() == jsonl.Number
		case "protocol_version":
			f.proto = s.Value().Kind() == jsonl.String
		case "role":
			f.roleTop = true
		case "traceSchema":
			f.trace = s.Value().Equal(trajectory.TraceSchema)
		case "projectHash":
			f.projHash = s.Value().Kind() == jsonl.String
		case "content":
			f.hasContent = true
		case "usageMetadata":
			f.usageMeta = s.Value().Kind() == jsonl.Object
		case "systemPayload":
			f.sysPay = s.Value().Kind() == jsonl.Object
		case "parentId":
			f.parentID = true
		case "data":
			f.dataObj = s.Value().Kind() == jsonl.Object
			f.ocRow++
		case "sessionID":
			f.ocSessionID = s.Value().Kind() == jsonl.String
		case "time":
			f.ocTime = s.Value().Kind() == jsonl.Object
		case "session_id", "time_updated":
			f.ocRow++
		case "model_config_json":
			f.gooseRow = true
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
		case "params":
			f.sessionUpdate = readParams(s)
		case "method":
			v := s.Value()
			f.xaiMethod = v.Kind() == jsonl.String && bytes.HasPrefix(v.Raw(), []byte("_x.ai/"))
		default:
			own |= ownFieldBit(key)
		}
	}
	if !s.Finish() {
		return false
	}
	f.ownField = own&ownFieldOf(f.typ) != 0
	return true
}

// readParams reports whether the params object due in s holds an update
// object with a string sessionUpdate (Grok Build CLI).
func readParams(s *jsonl.Scanner) bool {
	found := false
	if !s.EnterObject() {
		return false
	}
	for s.NextField() {
		if string(s.Key()) != "update" || !s.EnterObject() {
			continue
		}
		for s.NextField() {
			if string(s.Key()) == "sessionUpdate" {
				found = s.Value().Kind() == jsonl.String
			}
		}
	}
	return found
}

func (f *features) readMessage(s *jsonl.Scanner) {
	for s.NextField() {
		switch string(s.Key()) {
		case "role":
			f.msgRole = s.Value().String()
		case "parts":
			f.msgParts = true
			s.Skip()
		case "payload":
			f.msgPayload = s.Value().Kind() == jsonl.Object
		case "type":
			f.msgTyped = s.Value().Kind() == jsonl.String
		case "timestamp":
			f.msgTSNum = s.Value().Kind() == jsonl.Number
		case "usage":
			if s.EnterObject() {
				f.msgUsage = true
				for s.NextField() {
					switch string(s.Key()) {
					case "cacheRead", "cacheWrite", "totalTokens":
						f.piUsage = true
					case "input_tokens", "output_tokens":
						f.apiUsage = true
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

// qwen reports a Qwen Code ChatRecord: a user, assistant, tool_result or
// system record with uuid and sessionId whose message has Gemini's parts,
// or with a usageMetadata or systemPayload object, or of type
// tool_result.
func (f *features) qwen() bool {
	switch f.typ {
	case "user", "assistant", "system", "tool_result":
	default:
		return false
	}
	if !f.hasUUID || !f.hasSessID {
		return false
	}
	return f.msgParts || f.usageMeta || f.sysPay || f.typ == "tool_result"
}

// format classifies the line; strong reports a conclusive line.
func (f *features) format() (format schema.Format, strong bool) {
	if f.trace {
		// An OpenClaw trajectory event names its schema on every line.
		return schema.FormatTrajectory, true
	}
	if f.projHash && f.hasSessID {
		// Gemini CLI's metadata record, the first line of its files.
		return schema.FormatGeminiCLI, true
	}
	if f.dotted && f.dataObj && f.parentID && f.hasID && f.hasTS {
		// A Copilot CLI event: {"type":"session.start", "data":{…},
		// "id", "timestamp", "parentId"}; pi's types have no dot and
		// its records no data, a trajectory names its schema.
		return schema.FormatCopilot, true
	}
	if (f.sessionUpdate || f.xaiMethod) && f.typ == "" {
		// A Grok Build CLI update: {"timestamp", "method", "params":
		// {"sessionId", "update": {"sessionUpdate": …}}}, an ACP session
		// update as Grok logs it, or one of xAI's own notifications
		// (method "_x.ai/…"); no other format has params.
		return schema.FormatGrok, true
	}
	if f.typ == "metadata" && f.proto {
		// Kimi CLI's wire.jsonl header: {"type": "metadata",
		// "protocol_version": "1.3"}.
		return schema.FormatKimi, true
	}
	if f.typ == "" && f.tsNum && f.message && f.msgTyped && f.msgPayload {
		// A Kimi CLI wire record: {"timestamp": <seconds>, "message":
		// {"type": "TurnBegin", "payload": {…}}}; no other format wraps
		// a typed payload in message under a numeric timestamp.
		return schema.FormatKimi, true
	}
	if f.qwen() {
		// A Qwen Code ChatRecord: Claude Code's envelope (type, uuid,
		// parentUuid, sessionId) around a Gemini Content ({role, parts})
		// or Gemini's usageMetadata, or a tool_result or systemPayload
		// record, which Claude Code never writes.
		return schema.FormatQwen, true
	}
	if f.typ == "" && f.hasID && (f.ocRow == 3 || f.ocSessionID && f.roleTop && f.ocTime) {
		// An OpenCode message: a row of its message table in its JSON
		// form (id, session_id, time_updated, data), or a message
		// document (id, sessionID, role, time{created}).
		return schema.FormatOpenCode, true
	}
	if f.typ == "" && f.hasID && f.gooseRow {
		// A row of Goose's sessions table in its JSON form.
		return schema.FormatGoose, true
	}
	switch f.typ {
	case "gemini":
		// A Gemini CLI model message: no other format has this type.
		if f.hasID && f.hasTS && f.hasContent {
			return schema.FormatGeminiCLI, true
		}
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
		// A message with parts is a Gemini Content, not Claude's: such a
		// line is Qwen Code's (above) or nothing known.
		if f.hasUUID && f.hasSessID && !f.msgParts && (f.message || f.typ == "system" || f.typ == "progress" || f.typ == "attachment") {
			return schema.FormatClaudeCode, true
		}
	case "file-history-snapshot", "queue-operation", "ai-title", "agent-name",
		"custom-title", "last-prompt", "teleported-from", "pr-link", "mode",
		"permission-mode", "bridge-session", "file-history-delta", "fork-context-ref":
		// Bookkeeping only: a file of nothing else is a Claude Code file
		// with nothing to count, decided at once. Another format could
		// use such a type name; it would not add Claude's fields.
		if f.hasSessID || f.ownField {
			return schema.FormatClaudeCode, true
		}
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
		// fixtures): no type, a message with usage and a timestamp. With
		// Claude's sessionId and Anthropic's usage names it decides at
		// once (a live file is not held back waiting for a stronger
		// line); without, it is a weak match.
		if f.message && f.msgUsage && !f.piUsage && f.hasTS {
			return schema.FormatClaudeCode, f.hasSessID && f.apiUsage
		}
	}
	return "", false
}
