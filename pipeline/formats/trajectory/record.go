package trajectory

import "github.com/sessionpipe/sessionpipe/pipeline/jsonl"

// record holds the parts of one trajectory line the parser reads, as
// values aliasing the line, captured in one pass whatever their order.
type record struct {
	traceSchema jsonl.Value
	typ         jsonl.Value
	ts          jsonl.Value
	tsOff       int
	source      jsonl.Value
	sessionID   jsonl.Value
	traceID     jsonl.Value
	runID       jsonl.Value
	workspace   jsonl.Value
	provider    jsonl.Value
	modelID     jsonl.Value

	data    jsonl.Value // the data object, whole
	dataOff int
}

// data holds the fields of an event's data object that the parser reads.
type data struct {
	sessionFile jsonl.Value
	prompt      jsonl.Value
	text        jsonl.Value
	stopReason  jsonl.Value
	texts       jsonl.Value // assistantTexts

	usage    jsonl.Value // the usage object, whole
	usageOff int         // offset of usage within the data object
}

// usage holds the counters of a model.completed usage object, with their
// offsets within it.
type usage struct {
	input, output, cacheRead, cacheWrite jsonl.Value
	offs                                 [4]int
}

// scanRecord reads the top-level object the scanner has just entered into
// r, up to and including its closing brace. It reports false on a scanner
// error.
func scanRecord(s *jsonl.Scanner, r *record) bool {
	*r = record{}
	for s.NextField() {
		switch string(s.Key()) {
		case "traceSchema":
			r.traceSchema = s.Value()
		case "type":
			r.typ = s.Value()
		case "ts":
			r.tsOff = s.Offset()
			r.ts = s.Value()
		case "source":
			r.source = s.Value()
		case "sessionId":
			r.sessionID = s.Value()
		case "traceId":
			r.traceID = s.Value()
		case "runId":
			r.runID = s.Value()
		case "workspaceDir":
			r.workspace = s.Value()
		case "provider":
			r.provider = s.Value()
		case "modelId":
			r.modelID = s.Value()
		case "data":
			r.dataOff = s.Offset()
			r.data = s.Value()
		}
	}
	return s.Err() == nil
}

// scanData reads a data object (raw) into d. It reports false when raw is
// not an object.
func scanData(s *jsonl.Scanner, raw []byte, d *data) bool {
	*d = data{}
	s.Reset(raw)
	if !s.EnterObject() {
		return false
	}
	for s.NextField() {
		switch string(s.Key()) {
		case "sessionFile":
			d.sessionFile = s.Value()
		case "prompt":
			d.prompt = s.Value()
		case "text":
			d.text = s.Value()
		case "stopReason":
			d.stopReason = s.Value()
		case "assistantTexts":
			d.texts = s.Value()
		case "usage":
			d.usageOff = s.Offset()
			d.usage = s.Value()
		}
	}
	return s.Err() == nil
}

// scanUsage reads a usage object (raw) into u. It reports false when raw
// is not an object.
func scanUsage(s *jsonl.Scanner, raw []byte, u *usage) bool {
	*u = usage{}
	s.Reset(raw)
	if !s.EnterObject() {
		return false
	}
	for s.NextField() {
		off := s.Offset()
		switch string(s.Key()) {
		case "input":
			u.input, u.offs[0] = s.Value(), off
		case "output":
			u.output, u.offs[1] = s.Value(), off
		case "cacheRead":
			u.cacheRead, u.offs[2] = s.Value(), off
		case "cacheWrite":
			u.cacheWrite, u.offs[3] = s.Value(), off
		}
	}
	return s.Err() == nil
}
