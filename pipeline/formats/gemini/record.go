package gemini

import "github.com/sessionpipe/sessionpipe/pipeline/jsonl"

// record holds the top-level fields of one line the parser reads, as
// values aliasing the line, captured in one pass whatever their order. A
// line is the metadata record, a message record, a {"$set": …} update or
// a {"$rewindTo": id} rewind.
type record struct {
	msg message // the fields a message record has

	sessionID   jsonl.Value
	projectHash jsonl.Value
	startTime   jsonl.Value
	startOff    int
	kind        jsonl.Value // "main" or "subagent"
	directories jsonl.Value
	summary     jsonl.Value

	set      jsonl.Value // the $set object, whole
	setOff   int
	rewindTo jsonl.Value
}

// message holds the fields of one message record (top-level, or an
// element of $set.messages).
type message struct {
	id        jsonl.Value
	typ       jsonl.Value
	timestamp jsonl.Value
	tsOff     int
	content   jsonl.Value
	model     jsonl.Value
	toolCalls jsonl.Value
	callsOff  int
	tokens    jsonl.Value
	tokensOff int
}

// field reads the message field the scanner is at, and reports whether
// it was one.
func (m *message) field(s *jsonl.Scanner, key []byte) bool {
	switch string(key) {
	case "id":
		m.id = s.Value()
	case "type":
		m.typ = s.Value()
	case "timestamp":
		m.tsOff = s.Offset()
		m.timestamp = s.Value()
	case "content":
		m.content = s.Value()
	case "model":
		m.model = s.Value()
	case "toolCalls":
		m.callsOff = s.Offset()
		m.toolCalls = s.Value()
	case "tokens":
		m.tokensOff = s.Offset()
		m.tokens = s.Value()
	default:
		return false
	}
	return true
}

// scanRecord reads the top-level object the scanner has just entered into
// r, up to and including its closing brace. It reports false on a scanner
// error.
func scanRecord(s *jsonl.Scanner, r *record) bool {
	*r = record{}
	for s.NextField() {
		key := s.Key()
		if r.msg.field(s, key) {
			continue
		}
		switch string(key) {
		case "sessionId":
			r.sessionID = s.Value()
		case "projectHash":
			r.projectHash = s.Value()
		case "startTime":
			r.startOff = s.Offset()
			r.startTime = s.Value()
		case "kind":
			r.kind = s.Value()
		case "directories":
			r.directories = s.Value()
		case "summary":
			r.summary = s.Value()
		case "$set":
			r.setOff = s.Offset()
			r.set = s.Value()
		case "$rewindTo":
			r.rewindTo = s.Value()
		}
	}
	return s.Err() == nil
}

// update holds the fields of a $set object the parser reads.
type update struct {
	sessionID   jsonl.Value
	lastUpdated jsonl.Value
	summary     jsonl.Value
	messages    jsonl.Value // the messages array, whole
	messagesOff int         // its offset within the $set object
}

// scanUpdate reads a $set object (raw) into u. It reports false when raw
// is not an object.
func scanUpdate(s *jsonl.Scanner, raw []byte, u *update) bool {
	*u = update{}
	s.Reset(raw)
	if !s.EnterObject() {
		return false
	}
	for s.NextField() {
		switch string(s.Key()) {
		case "sessionId":
			u.sessionID = s.Value()
		case "lastUpdated":
			u.lastUpdated = s.Value()
		case "summary":
			u.summary = s.Value()
		case "messages":
			u.messagesOff = s.Offset()
			u.messages = s.Value()
		}
	}
	return s.Err() == nil
}

// scanMessage reads a message object (raw) into m. It reports false when
// raw is not an object.
func scanMessage(s *jsonl.Scanner, raw []byte, m *message) bool {
	*m = message{}
	s.Reset(raw)
	if !s.EnterObject() {
		return false
	}
	for s.NextField() {
		m.field(s, s.Key())
	}
	return s.Err() == nil
}

// tokens holds the counters of a TokensSummary, with their offsets within
// it: input (promptTokenCount, cached included), output
// (candidatesTokenCount), cached (cachedContentTokenCount), thoughts
// (thoughtsTokenCount), tool (toolUsePromptTokenCount), total
// (totalTokenCount).
type tokens struct {
	vals [6]jsonl.Value
	offs [6]int
}

// tokenNames are the TokensSummary fields, in the order of tokens.vals.
var tokenNames = [6]string{"input", "output", "cached", "thoughts", "tool", "total"}

// scanTokens reads a tokens object (raw) into t. It reports false when
// raw is not an object.
func scanTokens(s *jsonl.Scanner, raw []byte, t *tokens) bool {
	*t = tokens{}
	s.Reset(raw)
	if !s.EnterObject() {
		return false
	}
	for s.NextField() {
		key := string(s.Key())
		for i, name := range tokenNames {
			if key == name {
				t.offs[i] = s.Offset()
				t.vals[i] = s.Value()
				break
			}
		}
	}
	return s.Err() == nil
}
