package codex

import "github.com/sessionpipe/sessionpipe/pipeline/jsonl"

// record holds the parts of one rollout line that the parser reads, as
// values aliasing the line. Fields are captured in one pass whatever their
// order; nested containers are captured whole and walked later, only when
// their line type needs them.
type record struct {
	ts    jsonl.Value
	tsOff int // offset of the timestamp value in the line
	typ   jsonl.Value

	// ordinal is the line's position in a paginated rollout (CLI 0.150
	// and later: 0, 1, 2… from the session_meta on), absent in legacy ones.
	ordinal jsonl.Value

	hasPayload bool
	pl         payload
}

// payload holds the payload fields of every line type. A key means
// different things in different types (summary is a string in turn_context
// and an array in reasoning); each is interpreted according to the type.
type payload struct {
	typ        jsonl.Value
	role       jsonl.Value
	id         jsonl.Value
	name       jsonl.Value
	callID     jsonl.Value
	arguments  jsonl.Value
	input      jsonl.Value
	output     jsonl.Value
	content    jsonl.Value
	summary    jsonl.Value
	message    jsonl.Value
	text       jsonl.Value
	info       jsonl.Value
	turnID     jsonl.Value
	model      jsonl.Value
	modelName  jsonl.Value
	cwd        jsonl.Value
	cliVersion jsonl.Value
	provider   jsonl.Value
	git        jsonl.Value
	source     jsonl.Value
	forkedFrom jsonl.Value
	parent     jsonl.Value
	timestamp  jsonl.Value
	images     jsonl.Value
	localImgs  jsonl.Value
	kind       jsonl.Value
	reason     jsonl.Value

	// Paginated session_meta (CLI 0.150 and later).
	threadSource jsonl.Value // "user", "subagent", …
	historyStart jsonl.Value // subagent_history_start_ordinal
	historyBase  jsonl.Value // {thread_id, end_ordinal_exclusive, …}
}

// scanRecord reads the top-level object the scanner has just entered into
// r, up to and including its closing brace. It reports false on a scanner
// error.
func scanRecord(s *jsonl.Scanner, r *record) bool {
	*r = record{}
	for s.NextField() {
		switch string(s.Key()) {
		case "timestamp":
			r.tsOff = s.Offset()
			r.ts = s.Value()
		case "type":
			r.typ = s.Value()
		case "ordinal":
			r.ordinal = s.Value()
		case "payload":
			if s.EnterObject() {
				r.hasPayload = true
				scanPayload(s, &r.pl)
			}
		}
	}
	return s.Err() == nil
}

// scanPayload reads the payload object the scanner has just entered.
func scanPayload(s *jsonl.Scanner, p *payload) {
	for s.NextField() {
		switch string(s.Key()) {
		case "type":
			p.typ = s.Value()
		case "role":
			p.role = s.Value()
		case "id":
			p.id = s.Value()
		case "name":
			p.name = s.Value()
		case "call_id":
			p.callID = s.Value()
		case "arguments":
			p.arguments = s.Value()
		case "input":
			p.input = s.Value()
		case "output":
			p.output = s.Value()
		case "content":
			p.content = s.Value()
		case "summary":
			p.summary = s.Value()
		case "message":
			p.message = s.Value()
		case "text":
			p.text = s.Value()
		case "info":
			p.info = s.Value()
		case "turn_id":
			p.turnID = s.Value()
		case "model":
			p.model = s.Value()
		case "model_name":
			p.modelName = s.Value()
		case "cwd":
			p.cwd = s.Value()
		case "cli_version":
			p.cliVersion = s.Value()
		case "model_provider":
			p.provider = s.Value()
		case "git":
			p.git = s.Value()
		case "source":
			p.source = s.Value()
		case "forked_from_id":
			p.forkedFrom = s.Value()
		case "parent_thread_id":
			p.parent = s.Value()
		case "timestamp":
			p.timestamp = s.Value()
		case "images":
			p.images = s.Value()
		case "local_images":
			p.localImgs = s.Value()
		case "kind":
			p.kind = s.Value()
		case "reason":
			p.reason = s.Value()
		case "thread_source":
			p.threadSource = s.Value()
		case "subagent_history_start_ordinal":
			p.historyStart = s.Value()
		case "history_base":
			p.historyBase = s.Value()
		}
	}
}
