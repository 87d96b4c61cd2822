package pi

import (
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

// rec holds the fields of one JSON object as read. Key order is not fixed
// in pi files (OpenClaw writes id and parentId after the payload), so the
// fields are gathered first and interpreted once the object is complete.
// Values alias the line and are checked for their JSON type only when the
// entry type needs them, so that an unknown entry type never fails.
type rec struct {
	typ, id, parentID, uuid, parentUUID, sessionID, ts jsonl.Value
	version                                            jsonl.Value

	// Header.
	cwd, parentSession, branchedFrom, parentSessionID, forkedFrom jsonl.Value

	// Other entry types.
	provider, modelID, model, thinkingLevel        jsonl.Value
	summary, customType, name, label, parentTurnID jsonl.Value
	content                                        jsonl.Value // custom_message
	message                                        jsonl.Value // when not an object
	dataProvider, dataModelID                      jsonl.Value // custom data
	toolCalls                                      jsonl.Value // Nexus
	tokens                                         usageVals   // Nexus tokenCount
	hasMessage                                     bool
	msg                                            msgVals

	// The first fault found while building the entry.
	err    error
	errOff int

	// A bad token counter: the entry is kept without usage, and the line
	// reports it.
	countErr    error
	countErrOff int
}

// msgVals holds the fields of entry.message.
type msgVals struct {
	role, ts, model, provider, stopReason, responseID jsonl.Value
	toolCallID, isError, command, output              jsonl.Value
	customType, summary                               jsonl.Value
	content                                           jsonl.Value // unless read in place
	contentRead                                       bool
	contentBad                                        jsonl.Value // a content element that is not an object
	usage, tokens                                     usageVals
	toolCalls                                         jsonl.Value // Nexus
}

// usageVals holds the counters of message.usage (or a Nexus tokenCount).
type usageVals struct {
	present                                    bool
	input, output, cacheRead, cacheWrite       jsonl.Value
	cacheWrite1h, reasoning, costTotal, object jsonl.Value
}

// collect reads the fields of the object s has just entered.
func (p *Parser) collect(s *jsonl.Scanner) {
	r := &p.r
	for s.NextField() {
		switch string(s.Key()) {
		case "type":
			r.typ = s.Value()
		case "id":
			r.id = s.Value()
		case "parentId":
			r.parentID = s.Value()
		case "uuid":
			r.uuid = s.Value()
		case "parentUuid":
			r.parentUUID = s.Value()
		case "sessionId":
			r.sessionID = s.Value()
		case "timestamp":
			r.ts = s.Value()
		case "version":
			r.version = s.Value()
		case "cwd":
			r.cwd = s.Value()
		case "parentSession":
			r.parentSession = s.Value()
		case "branchedFrom":
			r.branchedFrom = s.Value()
		case "parentSessionId":
			r.parentSessionID = s.Value()
		case "forkedFromSessionId":
			r.forkedFrom = s.Value()
		case "provider":
			r.provider = s.Value()
		case "modelId":
			r.modelID = s.Value()
		case "model":
			r.model = s.Value()
		case "thinkingLevel":
			r.thinkingLevel = s.Value()
		case "summary":
			r.summary = s.Value()
		case "customType":
			r.customType = s.Value()
		case "name":
			r.name = s.Value()
		case "label":
			r.label = s.Value()
		case "parentTurnId":
			r.parentTurnID = s.Value()
		case "content":
			r.content = s.Value()
		case "toolCalls":
			r.toolCalls = s.Value()
		case "tokenCount":
			p.collectUsage(s, &r.tokens)
		case "data":
			if s.EnterObject() {
				for s.NextField() {
					switch string(s.Key()) {
					case "provider":
						r.dataProvider = s.Value()
					case "modelId":
						r.dataModelID = s.Value()
					}
				}
			}
		case "message":
			if s.EnterObject() {
				r.hasMessage = true
				p.collectMessage(s, &r.msg)
			} else {
				r.message = s.Value()
			}
		}
	}
}

// collectMessage reads the fields of entry.message, which s has entered.
// The content is walked in place when the role came first (as pi writes
// it); otherwise it is kept and walked once the role is known.
func (p *Parser) collectMessage(s *jsonl.Scanner, m *msgVals) {
	for s.NextField() {
		switch string(s.Key()) {
		case "role":
			m.role = s.Value()
		case "content":
			if m.role.Kind() == jsonl.String && (s.Peek() == jsonl.Array || s.Peek() == jsonl.String) {
				p.walkContent(s, p.wantText(m.role))
				m.contentRead = true
			} else {
				m.content = s.Value()
			}
		case "timestamp":
			m.ts = s.Value()
		case "model":
			m.model = s.Value()
		case "provider":
			m.provider = s.Value()
		case "stopReason":
			m.stopReason = s.Value()
		case "responseId":
			m.responseID = s.Value()
		case "toolCallId":
			m.toolCallID = s.Value()
		case "isError":
			m.isError = s.Value()
		case "command":
			m.command = s.Value()
		case "output":
			m.output = s.Value()
		case "customType":
			m.customType = s.Value()
		case "summary":
			m.summary = s.Value()
		case "usage":
			p.collectUsage(s, &m.usage)
		case "tokenCount":
			p.collectUsage(s, &m.tokens)
		case "toolCalls":
			m.toolCalls = s.Value()
		}
	}
}

// collectUsage reads a usage object ({input, output, cacheRead, cacheWrite,
// cacheWrite1h, reasoning, cost{total}}) or a Nexus tokenCount
// ({inputTokens, outputTokens}). A value that is not an object is kept
// whole for the builder to reject.
func (p *Parser) collectUsage(s *jsonl.Scanner, u *usageVals) {
	if !s.EnterObject() {
		u.object = s.Value()
		return
	}
	u.present = true
	for s.NextField() {
		switch string(s.Key()) {
		case "input", "inputTokens":
			u.input = s.Value()
		case "output", "outputTokens":
			u.output = s.Value()
		case "cacheRead":
			u.cacheRead = s.Value()
		case "cacheWrite":
			u.cacheWrite = s.Value()
		case "cacheWrite1h":
			u.cacheWrite1h = s.Value()
		case "reasoning":
			u.reasoning = s.Value()
		case "cost":
			if s.EnterObject() {
				for s.NextField() {
					if string(s.Key()) == "total" {
						u.costTotal = s.Value()
					}
				}
			}
		}
	}
}

// wantText reports whether the text of a message with this role is
// extracted: always for user messages (the aggregator classifies sessions
// by their first prompt), otherwise only when the Config asks for text.
func (p *Parser) wantText(role jsonl.Value) bool {
	return p.cfg.Text || role.Equal("user")
}
