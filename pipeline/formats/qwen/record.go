package qwen

import "github.com/sessionpipe/sessionpipe/pipeline/jsonl"

// record holds the top-level fields of one ChatRecord line the parser
// reads, as values aliasing the line, captured in one pass whatever their
// order.
type record struct {
	uuid       jsonl.Value
	parentUUID jsonl.Value
	sessionID  jsonl.Value
	ts         jsonl.Value
	tsOff      int
	typ        jsonl.Value
	subtype    jsonl.Value
	cwd        jsonl.Value
	version    jsonl.Value
	gitBranch  jsonl.Value
	message    jsonl.Value // the Content {role, parts}, whole
	msgOff     int
	usage      jsonl.Value // usageMetadata, whole
	usageOff   int
	model      jsonl.Value
	toolResult jsonl.Value // toolCallResult, whole
	provenance jsonl.Value
	agentID    jsonl.Value
	agentName  jsonl.Value
	sidechain  jsonl.Value
	forkedFrom jsonl.Value
	payload    jsonl.Value // systemPayload, whole
}

// scanRecord reads the top-level object the scanner has just entered into
// r, up to and including its closing brace. It reports false on a scanner
// error.
func scanRecord(s *jsonl.Scanner, r *record) bool {
	*r = record{}
	for s.NextField() {
		switch string(s.Key()) {
		case "uuid":
			r.uuid = s.Value()
		case "parentUuid":
			r.parentUUID = s.Value()
		case "sessionId":
			r.sessionID = s.Value()
		case "timestamp":
			r.tsOff = s.Offset()
			r.ts = s.Value()
		case "type":
			r.typ = s.Value()
		case "subtype":
			r.subtype = s.Value()
		case "cwd":
			r.cwd = s.Value()
		case "version":
			r.version = s.Value()
		case "gitBranch":
			r.gitBranch = s.Value()
		case "message":
			r.msgOff = s.Offset()
			r.message = s.Value()
		case "usageMetadata":
			r.usageOff = s.Offset()
			r.usage = s.Value()
		case "model":
			r.model = s.Value()
		case "toolCallResult":
			r.toolResult = s.Value()
		case "provenance":
			r.provenance = s.Value()
		case "agentId":
			r.agentID = s.Value()
		case "agentName":
			r.agentName = s.Value()
		case "isSidechain":
			r.sidechain = s.Value()
		case "forkedFrom":
			r.forkedFrom = s.Value()
		case "systemPayload":
			r.payload = s.Value()
		}
	}
	return s.Err() == nil
}

// usageNames are the usageMetadata counters read, in the order of
// counts.
var usageNames = [6]string{
	"promptTokenCount",        // input, cached included
	"candidatesTokenCount",    // output
	"cachedContentTokenCount", // cache read
	"thoughtsTokenCount",      // reasoning
	"toolUsePromptTokenCount", // tool-use prompt
	"totalTokenCount",
}

// counts holds the usageMetadata counters and their offsets within it.
type counts struct {
	vals [6]jsonl.Value
	offs [6]int
}

// scanUsage reads a usageMetadata object (raw) into c. It reports false
// when raw is not an object or does not scan.
func scanUsage(s *jsonl.Scanner, raw []byte, c *counts) bool {
	*c = counts{}
	s.Reset(raw)
	if !s.EnterObject() {
		return false
	}
	for s.NextField() {
		key := string(s.Key())
		for i, name := range usageNames {
			if key == name {
				c.offs[i] = s.Offset()
				c.vals[i] = s.Value()
				break
			}
		}
	}
	return s.Err() == nil
}
