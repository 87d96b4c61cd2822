package claude

import (
	"fmt"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// record holds the fields of one line's object as read, before the object
// is classified (its "type" may come last). Values alias the line.
type record struct {
	typ, uuid, parent, logicalParent, leaf       jsonl.Value
	session, cwd, branch, version, agentID, slug jsonl.Value
	subtype, requestID                           jsonl.Value

	ts     time.Time
	snapTS time.Time // snapshot.timestamp of file-history-snapshot lines

	sidechain, meta, compactSummary, apiError bool
	background                                bool // "sessionKind":"bg"

	cost    float64
	hasCost bool

	content jsonl.Value // system content, queue-operation content (any kind)
	summary jsonl.Value // summary.summary
	title   jsonl.Value // customTitle, aiTitle
	extra   jsonl.Value // agentName, permissionMode, mode, lastPrompt, prUrl, … (strings only)
	inner   jsonl.Value // data.type, attachment.type, queue operation
	prompt  jsonl.Value // attachment.prompt (any kind)

	hasMessage bool
	msg        message

	bad    error // first bad field, or nil
	badOff int   // its offset in the line

	// A bad token counter: the entry is kept without usage, and the
	// line reports it.
	badCount    error
	badCountOff int
}

// message holds the fields of a line's "message" object.
type message struct {
	role, id, model, stop jsonl.Value
	text                  jsonl.Value // content when it is a string
	blocks                []block     // content when it is an array

	hasUsage bool
	usage    schema.Usage
	cacheAll int64 // cache_creation_input_tokens
}

// block holds the fields of one content block.
type block struct {
	typ            jsonl.Value
	text           jsonl.Value // text blocks
	id, name       jsonl.Value // tool_use
	input          jsonl.Value // tool_use (any kind)
	toolUseID      jsonl.Value // tool_result
	isError        bool        // tool_result
	content        jsonl.Value // tool_result (string or array)
	srcType, media jsonl.Value // image, document source
	data, filename jsonl.Value
}

func (r *record) reset() {
	blocks := r.msg.blocks[:0]
	*r = record{}
	r.msg.blocks = blocks
}

// fail records the first bad field: name is its path in the object, v
// the value found, which locates it in the line.
func (p *Parser) fail(name string, v jsonl.Value) {
	r := &p.rec
	if r.bad != nil {
		return
	}
	r.bad = fmt.Errorf("%w: %s", parse.ErrBadField, name)
	// v.Raw() is a sub-slice of the line: its offset follows from the
	// capacities. A string's raw bytes start after its opening quote.
	r.badOff = cap(p.line) - cap(v.Raw())
	if v.Kind() == jsonl.String {
		r.badOff--
	}
}

// str reads a string-or-null field; any other kind is a bad field.
func (p *Parser) str(name string) jsonl.Value {
	v := p.s.Value()
	s, ok := parse.OptString(v)
	if !ok {
		p.fail(name, v)
	}
	return s
}

// loose reads a field used only for information: strings are kept, any
// other kind is ignored.
func (p *Parser) loose() jsonl.Value {
	v := p.s.Value()
	if v.Kind() != jsonl.String {
		return jsonl.Value{}
	}
	return v
}

// boolean reads a bool-or-null field.
func (p *Parser) boolean(name string) bool {
	v := p.s.Value()
	if b, ok := v.Bool(); ok {
		return b
	}
	if v.Kind() != jsonl.Null && v.Kind() != jsonl.Invalid {
		p.fail(name, v)
	}
	return false
}

// count reads a token counter (see parse.Count). A bad one is recorded
// in badCount, not bad: the entry stays, without usage.
func (p *Parser) count(name string) int64 {
	v := p.s.Value()
	n, ok := parse.Count(v)
	if !ok && p.rec.badCount == nil {
		p.rec.badCount = parse.CountError(v, name)
		p.rec.badCountOff = cap(p.line) - cap(v.Raw())
		if v.Kind() == jsonl.String {
			p.rec.badCountOff--
		}
	}
	return n
}

// time reads a timestamp field: RFC 3339 or Unix milliseconds, or null.
func (p *Parser) time(name string) time.Time {
	v := p.s.Value()
	switch v.Kind() {
	case jsonl.Null, jsonl.Invalid:
		return time.Time{}
	}
	t, ok := timestamp(v)
	if !ok {
		p.fail(name, v)
	}
	return t
}

// readObject reads the fields of the object just entered into p.rec.
func (p *Parser) readObject() {
	s, r := &p.s, &p.rec
	for s.NextField() {
		switch string(s.Key()) {
		case "type":
			r.typ = p.str("type")
		case "uuid":
			r.uuid = p.str("uuid")
		case "parentUuid":
			r.parent = p.str("parentUuid")
		case "logicalParentUuid":
			r.logicalParent = p.str("logicalParentUuid")
		case "leafUuid":
			r.leaf = p.str("leafUuid")
		case "sessionId":
			r.session = p.str("sessionId")
		case "timestamp":
			r.ts = p.time("timestamp")
		case "cwd":
			r.cwd = p.str("cwd")
		case "gitBranch":
			r.branch = p.str("gitBranch")
		case "version":
			r.version = p.str("version")
		case "agentId":
			r.agentID = p.str("agentId")
		case "slug":
			r.slug = p.str("slug")
		case "subtype":
			r.subtype = p.str("subtype")
		case "requestId":
			r.requestID = p.str("requestId")
		case "isSidechain":
			r.sidechain = p.boolean("isSidechain")
		case "sessionKind":
			r.background = p.loose().Equal("bg")
		case "isMeta":
			r.meta = p.boolean("isMeta")
		case "isCompactSummary":
			r.compactSummary = p.boolean("isCompactSummary")
		case "isApiErrorMessage":
			r.apiError = p.boolean("isApiErrorMessage")
		case "costUSD":
			p.readCost()
		case "content":
			r.content = s.Value()
		case "summary":
			r.summary = p.loose()
		case "customTitle", "aiTitle":
			r.title = p.loose()
		case "agentName", "agentSetting", "permissionMode", "mode", "lastPrompt", "prUrl", "bridgeSessionId":
			if v := p.loose(); v.Kind() == jsonl.String {
				r.extra = v
			}
		case "operation":
			r.inner = p.loose()
		case "message":
			if s.EnterObject() {
				r.hasMessage = true
				p.readMessage()
			} else if v := s.Value(); v.Kind() != jsonl.Null && v.Kind() != jsonl.Invalid {
				p.fail("message", v)
			}
		case "data", "attachment":
			p.readInner()
		case "snapshot":
			p.readSnapshot()
		}
	}
}

// readCost reads the top-level costUSD of old versions.
func (p *Parser) readCost() {
	v := p.s.Value()
	switch v.Kind() {
	case jsonl.Null, jsonl.Invalid:
		return
	case jsonl.Number:
		if f, ok := v.Float(); ok {
			p.rec.cost, p.rec.hasCost = f, true
			return
		}
	}
	p.fail("costUSD", v)
}

// readInner reads the type (and a queued prompt) of a progress line's data
// or an attachment line's attachment. Other shapes are ignored.
func (p *Parser) readInner() {
	s, r := &p.s, &p.rec
	if !s.EnterObject() {
		return
	}
	for s.NextField() {
		switch string(s.Key()) {
		case "type":
			r.inner = p.loose()
		case "prompt":
			r.prompt = s.Value()
		}
	}
}

// readSnapshot reads the timestamp of a file-history-snapshot.
func (p *Parser) readSnapshot() {
	s := &p.s
	if !s.EnterObject() {
		return
	}
	for s.NextField() {
		if string(s.Key()) == "timestamp" {
			if t, ok := parse.Time(s.Value()); ok {
				p.rec.snapTS = t
			}
		}
	}
}

// readMessage reads the message object just entered.
func (p *Parser) readMessage() {
	s, m := &p.s, &p.rec.msg
	for s.NextField() {
		switch string(s.Key()) {
		case "role":
			m.role = p.str("message.role")
		case "id":
			m.id = p.str("message.id")
		case "model":
			m.model = p.str("message.model")
		case "stop_reason":
			m.stop = p.str("message.stop_reason")
		case "content":
			if s.EnterArray() {
				p.readBlocks()
				continue
			}
			v := s.Value()
			switch v.Kind() {
			case jsonl.String:
				m.text = v
			case jsonl.Null, jsonl.Invalid:
			default:
				p.fail("message.content", v)
			}
		case "usage":
			if s.EnterObject() {
				m.hasUsage = true
				p.readUsage()
			} else if v := s.Value(); v.Kind() != jsonl.Null && v.Kind() != jsonl.Invalid {
				p.fail("message.usage", v)
			}
		}
	}
}

// readUsage reads the usage object just entered.
func (p *Parser) readUsage() {
	s, m := &p.s, &p.rec.msg
	u := &m.usage
	for s.NextField() {
		switch string(s.Key()) {
		case "input_tokens":
			u.Input = p.count("usage.input_tokens")
		case "output_tokens":
			u.Output = p.count("usage.output_tokens")
		case "cache_read_input_tokens":
			u.CacheRead = p.count("usage.cache_read_input_tokens")
		case "cache_creation_input_tokens":
			m.cacheAll = p.count("usage.cache_creation_input_tokens")
		case "speed":
			if v := s.Value(); v.Equal("fast") {
				u.Speed = "fast" // the only speed priced differently
			}
		case "cache_creation":
			if !s.EnterObject() {
				if v := s.Value(); v.Kind() != jsonl.Null && v.Kind() != jsonl.Invalid {
					p.fail("usage.cache_creation", v)
				}
				continue
			}
			for s.NextField() {
				switch string(s.Key()) {
				case "ephemeral_5m_input_tokens":
					u.CacheWrite5m = p.count("usage.cache_creation.ephemeral_5m_input_tokens")
				case "ephemeral_1h_input_tokens":
					u.CacheWrite1h = p.count("usage.cache_creation.ephemeral_1h_input_tokens")
				}
			}
		}
	}
}

// readBlocks reads the content array just entered.
func (p *Parser) readBlocks() {
	s, m := &p.s, &p.rec.msg
	for s.NextElem() {
		if !s.EnterObject() {
			if v := s.Value(); v.Kind() != jsonl.Invalid {
				p.fail("message.content[]", v)
			}
			continue
		}
		m.blocks = append(m.blocks, block{})
		b := &m.blocks[len(m.blocks)-1]
		for s.NextField() {
			switch string(s.Key()) {
			case "type":
				b.typ = p.str("message.content[].type")
			case "text":
				b.text = p.str("message.content[].text")
			case "id":
				b.id = p.str("message.content[].id")
			case "name":
				b.name = p.str("message.content[].name")
			case "input":
				b.input = s.Value()
			case "tool_use_id":
				b.toolUseID = p.str("message.content[].tool_use_id")
			case "is_error":
				b.isError = p.boolean("message.content[].is_error")
			case "content":
				b.content = s.Value()
			case "filename":
				b.filename = p.loose()
			case "source":
				p.readSource(b)
			}
		}
	}
}

// readSource reads the source object of an image or document block.
func (p *Parser) readSource(b *block) {
	s := &p.s
	if !s.EnterObject() {
		return
	}
	for s.NextField() {
		switch string(s.Key()) {
		case "type":
			b.srcType = p.loose()
		case "media_type":
			b.media = p.loose()
		case "data":
			b.data = p.loose()
		case "filename":
			b.filename = p.loose()
		}
	}
}
