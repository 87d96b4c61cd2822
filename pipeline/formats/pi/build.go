package pi

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// build turns the collected fields of the object that started at offset
// start of the line into e. It returns the located error of the first
// fault; e is then not to be used.
func (p *Parser) build(e *schema.Entry, line jsonl.Line, obj, start int) error {
	r := &p.r
	*e = parse.Base(&p.cfg, schema.FormatPi, line, obj)
	if r.typ.Kind() == jsonl.Invalid || r.typ.IsNull() {
		return parse.Fail(&p.cfg, line, start, fmt.Errorf("%w: type", parse.ErrMissingField))
	}
	typ := p.str(r.typ, "type")
	header := false
	switch t := p.bytesOf(typ); string(t) {
	case "session":
		p.header(e, line, obj)
		header = true
	case "message":
		p.message(e, line, obj, start, nil)
	case "user", "assistant": // Nexus Claude-style message entries
		if r.hasMessage {
			p.message(e, line, obj, start, t)
		} else {
			p.event(e, line, obj, t)
		}
	case "model_change":
		p.common(e, line, obj)
		e.Kind = schema.KindModelChange
		e.Model = p.intern(p.str(r.modelID, "modelId"))
		e.Provider = p.intern(p.str(r.provider, "provider"))
		p.setDefaults(e.Model, e.Provider)
	case "thinking_level_change":
		p.common(e, line, obj)
		e.Kind = schema.KindModelChange
		e.Subtype = "thinking_level_change"
		if lvl := p.str(r.thinkingLevel, "thinkingLevel"); p.cfg.Text {
			e.Text = p.intern(lvl)
		}
	case "compaction":
		p.common(e, line, obj)
		e.Kind = schema.KindCompaction
		p.textField(e, r.summary, "summary")
	case "branch_summary":
		p.common(e, line, obj)
		e.Kind = schema.KindSummary
		e.Subtype = "branch_summary"
		p.textField(e, r.summary, "summary")
	case "custom":
		p.common(e, line, obj)
		e.Kind = schema.KindEvent
		ct := p.str(r.customType, "customType")
		e.Subtype = p.subtype("custom", ct)
		if ct.Equal("model-snapshot") {
			e.Model = p.intern(r.dataModelID)
			e.Provider = p.intern(r.dataProvider)
			p.setDefaults(e.Model, e.Provider)
		}
	case "custom_message":
		p.common(e, line, obj)
		e.Kind = schema.KindMessage
		e.Role = schema.RoleUser
		e.Meta = true
		e.Subtype = p.subtype("custom_message", p.str(r.customType, "customType"))
		if !p.walkValue(r.content, p.cfg.Text) {
			p.bad(r.content, "content")
		}
		p.contentFault("content")
		e.Text = string(p.text)
		e.Attachments = p.attachments()
	case "label":
		p.common(e, line, obj)
		e.Kind = schema.KindEvent
		e.Subtype = "label"
		p.textField(e, r.label, "label")
	case "session_info":
		p.common(e, line, obj)
		e.Kind = schema.KindSession
		e.Subtype = "session_info"
		e.Title = copyStr(p.str(r.name, "name"))
	case "turn": // Nexus turn marker
		p.turn(e, line, obj)
	default:
		p.event(e, line, obj, t)
	}
	if r.err != nil {
		return parse.Fail(&p.cfg, line, r.errOff, r.err)
	}
	if !header {
		p.prevID = e.EntryID
	}
	return nil
}

// header reads the session header. It starts a session: entries after it
// belong to its id, and its model (v1) is the default model.
func (p *Parser) header(e *schema.Entry, line jsonl.Line, obj int) {
	r := &p.r
	e.Kind = schema.KindSession
	id := copyStr(p.str(r.id, "id"))
	if id != "" {
		p.session = id
		e.EntryID = id
	} else {
		e.EntryID = parse.LineID(line.Number, obj)
	}
	e.SessionID = p.sessionID()
	e.TS = p.time(r.ts, "timestamp")
	e.CWD = copyStr(p.str(r.cwd, "cwd"))
	e.Model = p.intern(p.str(r.modelID, "modelId"))
	e.Provider = p.intern(p.str(r.provider, "provider"))
	p.model, p.provider = e.Model, e.Provider
	p.prevID = ""
	p.v1 = r.version.Kind() == jsonl.Invalid || r.version.IsNull()
	switch {
	case p.str(r.parentSessionID, "parentSessionId").Kind() == jsonl.String:
		e.ParentSessionID = copyStr(r.parentSessionID)
		e.Subtype = "subagent"
	case p.str(r.parentSession, "parentSession").Kind() == jsonl.String:
		e.ParentSessionID = SessionIDFromPath(string(p.bytesOf(r.parentSession)))
	case p.str(r.branchedFrom, "branchedFrom").Kind() == jsonl.String:
		e.ParentSessionID = SessionIDFromPath(string(p.bytesOf(r.branchedFrom)))
	case p.str(r.forkedFrom, "forkedFromSessionId").Kind() == jsonl.String:
		e.ParentSessionID = copyStr(r.forkedFrom)
	}
}

// common fills the identity of an entry that is not a header: session,
// entry id, parent id and timestamp.
func (p *Parser) common(e *schema.Entry, line jsonl.Line, obj int) {
	r := &p.r
	e.SessionID = p.sessionID()
	id := p.str(r.id, "id")
	if id.Kind() != jsonl.String {
		id = p.str(r.uuid, "uuid")
	}
	parent := p.str(r.parentID, "parentId")
	if parent.Kind() != jsonl.String {
		parent = p.str(r.parentUUID, "parentUuid")
	}
	if id.Kind() == jsonl.String && len(id.Raw()) > 0 {
		e.EntryID = id.String()
		e.ParentID = p.parent(parent)
	} else {
		// v1: no ids. The line index, and in a v1 file the previous
		// entry as parent, as pi's migration to v2 links them.
		e.EntryID = parse.LineID(line.Number, obj)
		switch {
		case parent.Kind() == jsonl.String:
			e.ParentID = p.parent(parent)
		case p.v1:
			e.ParentID = p.prevID
		}
	}
	e.TS = p.time(r.ts, "timestamp")
}

// parent returns the text of a parentId, shared with the previous entry's
// id when equal (the common case of a linear transcript).
func (p *Parser) parent(v jsonl.Value) string {
	if v.Kind() != jsonl.String || len(v.Raw()) == 0 {
		return ""
	}
	if v.Equal(p.prevID) {
		return p.prevID
	}
	return v.String()
}

// sessionID returns the session id of the current entry: the header id,
// else the entry's Nexus sessionId, else the file stem.
func (p *Parser) sessionID() string {
	if p.session != "" {
		return p.session
	}
	if v := p.str(p.r.sessionID, "sessionId"); v.Kind() == jsonl.String && len(v.Raw()) > 0 {
		if !v.Equal(p.lastSession) {
			p.lastSession = v.String()
		}
		return p.lastSession
	}
	if p.pathSession != "" {
		return p.pathSession
	}
	return UnknownSession
}

// time decodes a timestamp (ISO string or Unix ms); absent or null gives
// the zero time, anything else a bad field.
func (p *Parser) time(v jsonl.Value, field string) (t time.Time) {
	switch v.Kind() {
	case jsonl.Invalid, jsonl.Null:
		return t
	}
	t, ok := parse.Time(v)
	if !ok {
		p.bad(v, field)
	}
	return t
}

// setDefaults records the model that later assistant messages without a
// model of their own were produced by.
func (p *Parser) setDefaults(model, provider string) {
	if model != "" {
		p.model = model
		p.provider = provider
	}
}

// event builds an entry of a type this package does not know: Kind event
// with the type as Subtype.
func (p *Parser) event(e *schema.Entry, line jsonl.Line, obj int, typ []byte) {
	e.Subtype = p.internBytes(typ)
	p.common(e, line, obj)
	e.Kind = schema.KindEvent
	p.debug("pi: unknown entry type", line, slog.String(keyType, e.Subtype))
}

// turn builds a Nexus turn marker. Its id is the id of the turn's final
// assistant message, hence the "turn:" prefix.
func (p *Parser) turn(e *schema.Entry, line jsonl.Line, obj int) {
	r := &p.r
	p.common(e, line, obj)
	e.Kind = schema.KindEvent
	e.Subtype = "turn"
	if id := p.str(r.id, "id"); id.Kind() == jsonl.String {
		e.EntryID = "turn:" + id.String()
	}
	e.ParentID = ""
	if pt := p.str(r.parentTurnID, "parentTurnId"); pt.Kind() == jsonl.String {
		e.ParentID = "turn:" + pt.String()
	}
	e.Model = p.intern(p.str(r.model, "model"))
}

// contentFault records a content element that is not an object.
func (p *Parser) contentFault(field string) {
	if v := p.r.msg.contentBad; v.Kind() != jsonl.Invalid {
		p.bad(v, field)
	}
}

// attachments returns a copy of the images of the current content.
func (p *Parser) attachments() []schema.Attachment {
	if len(p.atts) == 0 {
		return nil
	}
	return append([]schema.Attachment(nil), p.atts...)
}
