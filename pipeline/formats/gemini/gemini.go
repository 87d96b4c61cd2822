package gemini

import (
	"bytes"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Provider is the provider of every Gemini CLI call: the CLI talks only to
// Google (the Gemini API, Vertex AI or Code Assist).
const Provider = "google"

// Subtypes of the entries that are not messages.
const (
	SubtypeSet    = "$set"      // a metadata update without messages
	SubtypeRewind = "$rewindTo" // a rewind (the messages from id on are dropped from the conversation, not from the counts)
)

// sessionContext opens the context Gemini CLI injects as the first user
// message of a session: not the user's input.
var sessionContext = []byte("<session_context>")

// Parser turns the lines of one Gemini CLI chat file into entries. Lines
// must be given in file order from the first line: the session id and the
// messages already seen are per-file state. A Parser is not safe for
// concurrent use; use one per file.
type Parser struct {
	cfg parse.Config
	log *slog.Logger

	s   jsonl.Scanner // the line
	sub jsonl.Scanner // $set, tokens
	el  jsonl.Scanner // elements of $set.messages, content, toolCalls
	rec record
	upd update
	msg message
	tok tokens

	session  string // the metadata's sessionId
	fallback string // the file stem, for lines before any metadata
	parent   string // parent session of a subagent file
	model    string // the last model named in the file

	ids  parse.UniqueIDs
	seen map[string]*seenMsg // message id → what its earlier copies carried
}

// seenMsg is what the copies of one message read so far carried: each
// tool call and each tool call's final status counts once.
type seenMsg struct {
	calls   map[string]struct{}
	results map[string]struct{}
}

// New returns a parser for one Gemini CLI chat file. cfg.Path names the
// file: its stem is the session id of lines before the metadata record,
// and its directory the parent session of a subagent's file.
func New(cfg parse.Config) *Parser {
	p := &Parser{cfg: cfg, log: cfg.Log().With("component", "gemini")}
	p.fallback = strings.TrimSuffix(filepath.Base(cfg.Path), ".jsonl")
	return p
}

// Format returns [schema.FormatGeminiCLI].
func (p *Parser) Format() schema.Format { return schema.FormatGeminiCLI }

// Parse appends the entries of one line to dst and returns the extended
// slice: one entry per record, and one per message of a $set update that
// re-sends the conversation. A value that is not an object, invalid JSON,
// a timestamp that is not RFC 3339, a $set, tokens or toolCalls of the
// wrong JSON type, or a token counter that is not an integer in 0…10¹²
// give a *schema.DecodeError; the entries decoded before the fault are
// returned with it (for a bad field, the entry itself without it). The
// parser stays usable for the next line. Entries never alias line.Bytes.
func (p *Parser) Parse(dst []schema.Entry, line jsonl.Line) ([]schema.Entry, error) {
	s := &p.s
	return parse.Objects(&p.cfg, s, line, dst, func(dst []schema.Entry, obj, start int) ([]schema.Entry, error) {
		if !scanRecord(s, &p.rec) {
			return dst, parse.ScanError(&p.cfg, line, s)
		}
		span := s.Span()
		return p.record(dst, line, obj, start, span)
	})
}

// record appends the entries of the record just scanned.
func (p *Parser) record(dst []schema.Entry, line jsonl.Line, obj, start int, span []byte) ([]schema.Entry, error) {
	r := &p.rec
	var err error
	fail := func(off int, ferr error) {
		if err == nil {
			err = parse.Fail(&p.cfg, line, off, ferr)
		}
	}
	switch {
	case r.msg.id.Kind() == jsonl.String && r.msg.typ.Kind() == jsonl.String:
		var e schema.Entry
		p.message(&e, &r.msg, line, obj, start, span, false, fail)
		return append(dst, e), err
	case r.set.Kind() != jsonl.Invalid:
		return p.update(dst, line, obj, start, span, fail), err
	}

	e := p.base(line, obj, span)
	switch {
	case r.rewindTo.Kind() != jsonl.Invalid:
		e.Kind, e.Subtype = schema.KindEvent, SubtypeRewind
		e.EntryID = p.ids.ID("", line.Number, obj)
	case r.sessionID.Kind() == jsonl.String:
		// The metadata record: the first line of every file.
		if id := parse.Str(r.sessionID); id != "" {
			p.session = id
		}
		if r.kind.Equal("subagent") {
			// A subagent's file is chats/<parent session>/<session>.jsonl.
			if dir := filepath.Base(filepath.Dir(p.cfg.Path)); dir != "chats" && dir != "." && dir != string(filepath.Separator) {
				p.parent = dir
			}
		}
		e.Kind = schema.KindSession
		e.EntryID = p.ids.ID("", line.Number, obj)
		e.Title = parse.Str(r.summary)
		e.CWD = firstString(&p.sub, r.directories)
		p.time(&e, r.startTime, start+r.startOff, "startTime", fail)
	default:
		e.Kind = schema.KindEvent
		e.EntryID = p.ids.ID("", line.Number, obj)
	}
	e.SessionID, e.ParentSessionID = p.sessionID(), p.parent
	return append(dst, e), err
}

// update appends the entries of a {"$set": …} record: one per message
// when it re-sends the conversation (a checkpoint after history changed),
// else one event.
func (p *Parser) update(dst []schema.Entry, line jsonl.Line, obj, start int, span []byte, fail func(int, error)) []schema.Entry {
	r, u := &p.rec, &p.upd
	setOff := start + r.setOff
	if r.set.Kind() != jsonl.Object || !scanUpdate(&p.sub, r.set.Raw(), u) {
		fail(setOff, fmt.Errorf("%w: $set", parse.ErrBadField))
		e := p.base(line, obj, span)
		e.Kind, e.Subtype = schema.KindEvent, SubtypeSet
		e.EntryID = p.ids.ID("", line.Number, obj)
		e.SessionID, e.ParentSessionID = p.sessionID(), p.parent
		return append(dst, e)
	}
	if id := parse.Str(u.sessionID); id != "" {
		p.session = id
	}
	if u.messages.Kind() != jsonl.Array {
		if u.messages.Kind() != jsonl.Invalid && !u.messages.IsNull() {
			fail(setOff+u.messagesOff, fmt.Errorf("%w: $set.messages", parse.ErrBadField))
		}
		e := p.base(line, obj, span)
		e.Kind, e.Subtype = schema.KindEvent, SubtypeSet
		e.EntryID = p.ids.ID("", line.Number, obj)
		e.SessionID, e.ParentSessionID = p.sessionID(), p.parent
		e.Title = parse.Str(u.summary)
		p.time(&e, u.lastUpdated, setOff, "$set.lastUpdated", fail)
		return append(dst, e)
	}
	// Each message is an entry of its own, numbered as an object of the
	// line so that their keys and positions differ.
	raw := u.messages.Raw()
	base := setOff + u.messagesOff
	el := &p.el
	el.Reset(raw)
	if !el.EnterArray() {
		return dst
	}
	var elems []elem
	for el.NextElem() {
		off := el.Offset()
		v := el.Value()
		elems = append(elems, elem{off, v})
	}
	for k, x := range elems {
		if x.v.Kind() != jsonl.Object || !scanMessage(&p.el, x.v.Raw(), &p.msg) || p.msg.id.Kind() != jsonl.String {
			fail(base+x.off, fmt.Errorf("%w: $set.messages[%d]", parse.ErrBadField, k))
			continue
		}
		var e schema.Entry
		p.message(&e, &p.msg, line, obj+k, base+x.off, x.v.Raw(), true, fail)
		dst = append(dst, e)
	}
	return dst
}

// elem is an array element with its offset in the array.
type elem struct {
	off int
	v   jsonl.Value
}

// base returns the entry of object obj of line, with its raw object when
// asked for.
func (p *Parser) base(line jsonl.Line, obj int, span []byte) schema.Entry {
	e := parse.Base(&p.cfg, schema.FormatGeminiCLI, line, obj)
	if p.cfg.Raw {
		e.Raw = append([]byte(nil), span...)
	}
	return e
}

// sessionID returns the file's session id: the metadata's, else the
// file's stem.
func (p *Parser) sessionID() string {
	if p.session != "" {
		return p.session
	}
	return p.fallback
}

// time sets e.TS from v, a timestamp found at off in the line.
func (p *Parser) time(e *schema.Entry, v jsonl.Value, off int, name string, fail func(int, error)) {
	if v.Kind() == jsonl.Invalid || v.IsNull() {
		return
	}
	var ok bool
	if e.TS, ok = parse.Time(v); !ok {
		fail(off, fmt.Errorf("%w: %s", parse.ErrBadField, name))
	}
}

// message fills e from the message record m, found at off in the line
// (span its bytes). inSet tells a message of a $set update. A message
// whose id was seen before in the file is a copy of it (Gemini CLI writes
// a message again when its tokens or tool calls arrive, and $set re-sends
// them all): it is Meta and carries only the tool calls and results its
// earlier copies did not; its usage has the same key, so the call counts
// once, at its largest.
func (p *Parser) message(e *schema.Entry, m *message, line jsonl.Line, obj, off int, span []byte, inSet bool, fail func(int, error)) {
	*e = p.base(line, obj, span)
	e.SessionID, e.ParentSessionID = p.sessionID(), p.parent
	id := parse.Str(m.id)
	e.EntryID = p.ids.ID(id, line.Number, obj)
	e.MessageID = id
	p.time(e, m.timestamp, off+m.tsOff, "timestamp", fail)
	if model := parse.Str(m.model); model != "" {
		p.model = model
	}

	prev, again := p.seen[id]
	if !again {
		prev = &seenMsg{}
		if p.seen == nil {
			p.seen = make(map[string]*seenMsg)
		}
		p.seen[id] = prev
	}
	e.Kind = schema.KindMessage
	switch {
	case m.typ.Equal("user"):
		e.Role = schema.RoleUser
		// The injected <session_context>, a copy, or a message a $set
		// adds (a compression's summary turn) is not the user's input.
		e.Meta = again || inSet || p.injected(m.content)
	case m.typ.Equal("gemini"):
		e.Role = schema.RoleAssistant
		e.Meta = again || inSet
		e.Model = parse.Str(m.model)
		if e.Model == "" {
			e.Model = p.model
		}
		e.Provider = Provider
		p.toolCalls(e, m, prev, off, fail)
		p.usage(e, m, off, fail)
	default: // info, warning, error: the CLI's own notices
		e.Kind, e.Subtype = schema.KindEvent, parse.Str(m.typ)
	}
	if p.cfg.Text {
		e.Text = p.text(m.content)
	}
}

// injected reports whether content is Gemini CLI's injected session
// context.
func (p *Parser) injected(content jsonl.Value) bool {
	switch content.Kind() {
	case jsonl.String:
		return bytes.HasPrefix(trimSpace(content.Raw()), sessionContext)
	case jsonl.Array:
		el := &p.el
		el.Reset(content.Raw())
		if !el.EnterArray() || !el.NextElem() || !el.EnterObject() {
			return false
		}
		for el.NextField() {
			if string(el.Key()) == "text" {
				v := el.Value()
				return v.Kind() == jsonl.String && bytes.HasPrefix(trimSpace(v.Raw()), sessionContext)
			}
		}
	}
	return false
}

// text returns the text of a PartListUnion: a string, or the text parts
// of an array (or of one part), one per line.
func (p *Parser) text(content jsonl.Value) string {
	switch content.Kind() {
	case jsonl.String:
		return parse.Str(content)
	case jsonl.Array, jsonl.Object:
	default:
		return ""
	}
	el := &p.el
	el.Reset(content.Raw())
	var b []byte
	part := func() {
		for el.NextField() {
			if string(el.Key()) != "text" {
				continue
			}
			if v := el.Value(); v.Kind() == jsonl.String {
				if len(b) > 0 {
					b = append(b, '\n')
				}
				b = v.AppendText(b)
			}
		}
	}
	if content.Kind() == jsonl.Object {
		if el.EnterObject() {
			part()
		}
		return string(b)
	}
	if !el.EnterArray() {
		return ""
	}
	for el.NextElem() {
		switch el.Peek() {
		case jsonl.Object:
			if el.EnterObject() {
				part()
			}
		case jsonl.String:
			if len(b) > 0 {
				b = append(b, '\n')
			}
			b = el.Value().AppendText(b)
		default:
			el.Skip()
		}
	}
	return string(b)
}

// firstString returns the first string of an array value, or "".
func firstString(s *jsonl.Scanner, v jsonl.Value) string {
	if v.Kind() != jsonl.Array {
		return ""
	}
	s.Reset(v.Raw())
	if !s.EnterArray() {
		return ""
	}
	for s.NextElem() {
		if x := s.Value(); x.Kind() == jsonl.String {
			return parse.Str(x)
		}
	}
	return ""
}

// trimSpace drops the white space, written as is or escaped (\n, \r,
// \t), that opens the raw text of a JSON string.
func trimSpace(raw []byte) []byte {
	for len(raw) > 0 {
		switch {
		case raw[0] == ' ' || raw[0] == '\t' || raw[0] == '\r' || raw[0] == '\n':
			raw = raw[1:]
		case len(raw) > 1 && raw[0] == '\\' && (raw[1] == 'n' || raw[1] == 'r' || raw[1] == 't'):
			raw = raw[2:]
		default:
			return raw
		}
	}
	return raw
}
