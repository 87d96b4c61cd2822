package copilot

import "github.com/sessionpipe/sessionpipe/pipeline/jsonl"

// record holds the envelope of one events.jsonl line, as values aliasing
// the line, captured in one pass whatever the field order.
type record struct {
	typ      jsonl.Value
	id       jsonl.Value
	parentID jsonl.Value
	ts       jsonl.Value
	tsOff    int
	data     jsonl.Value // the data object, whole
	dataOff  int
}

// data holds the fields of an event's data object that the parser reads.
type data struct {
	sessionID     jsonl.Value
	version       jsonl.Value // copilotVersion
	context       jsonl.Value // session.start context {cwd, gitRoot, branch}
	selectedModel jsonl.Value
	newModel      jsonl.Value // session.model_change
	currentModel  jsonl.Value // session.shutdown
	content       jsonl.Value
	messageID     jsonl.Value
	toolRequests  jsonl.Value
	toolCallID    jsonl.Value // tool.execution_complete
	success       jsonl.Value
	metrics       jsonl.Value // session.shutdown modelMetrics, whole
	metricsOff    int
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
		case "id":
			r.id = s.Value()
		case "parentId":
			r.parentID = s.Value()
		case "timestamp":
			r.tsOff = s.Offset()
			r.ts = s.Value()
		case "data":
			r.dataOff = s.Offset()
			r.data = s.Value()
		}
	}
	return s.Err() == nil
}

// scanData reads a data object (raw) into d. It reports false when raw is
// not an object or does not scan.
func scanData(s *jsonl.Scanner, raw []byte, d *data) bool {
	*d = data{}
	s.Reset(raw)
	if !s.EnterObject() {
		return false
	}
	for s.NextField() {
		switch string(s.Key()) {
		case "sessionId":
			d.sessionID = s.Value()
		case "copilotVersion":
			d.version = s.Value()
		case "context":
			d.context = s.Value()
		case "selectedModel":
			d.selectedModel = s.Value()
		case "newModel":
			d.newModel = s.Value()
		case "currentModel":
			d.currentModel = s.Value()
		case "content":
			d.content = s.Value()
		case "messageId":
			d.messageID = s.Value()
		case "toolRequests":
			d.toolRequests = s.Value()
		case "toolCallId":
			d.toolCallID = s.Value()
		case "success":
			d.success = s.Value()
		case "modelMetrics":
			d.metricsOff = s.Offset()
			d.metrics = s.Value()
		}
	}
	return s.Err() == nil
}

// context holds session.start's data.context.
type context struct {
	cwd, branch jsonl.Value
}

func scanContext(s *jsonl.Scanner, raw []byte) (c context) {
	s.Reset(raw)
	if !s.EnterObject() {
		return c
	}
	for s.NextField() {
		switch string(s.Key()) {
		case "cwd":
			c.cwd = s.Value()
		case "branch":
			c.branch = s.Value()
		}
	}
	return c
}
