package fluux

import (
	"bytes"
	"fmt"
	"log/slog"
	"strconv"
	"unicode/utf8"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Parser turns the lines of one Fluux Agent history file into entries. It
// keeps the session id of the last header and the entry ids already given
// out, so lines must be given in file order from the start of the file (see
// formats.Parser). A Parser is not safe for concurrent use.
type Parser struct {
	cfg parse.Config
	log *slog.Logger

	s        jsonl.Scanner
	session  string          // session id of the last header, or the fallback
	headered bool            // a header has named the session
	ids      parse.UniqueIDs // entry ids given out in this file
	sender   string          // last sender, reused while it repeats
	buf      []byte          // scratch for unescaped content
}

// New returns a parser for the file cfg.Path. The path is only used for
// provenance and for the session id of a file without header.
func New(cfg parse.Config) *Parser {
	return &Parser{
		cfg:     cfg,
		log:     cfg.Log().With("component", "fluux"),
		session: fallbackSession(cfg.Path),
	}
}

// Format returns [schema.FormatFluux].
func (p *Parser) Format() schema.Format { return schema.FormatFluux }

// SessionID returns the session id that the next line will get unless it is
// a header: the id of the last header read, or the path-derived fallback.
func (p *Parser) SessionID() string { return p.session }

// Parse appends the entries of one line to dst: one per JSON object. On bad
// input it returns the entries of the objects before the fault and a
// *schema.DecodeError locating it; the parser stays usable. Entries never
// alias line.Bytes.
func (p *Parser) Parse(dst []schema.Entry, line jsonl.Line) ([]schema.Entry, error) {
	return parse.Objects(&p.cfg, &p.s, line, dst, func(dst []schema.Entry, obj, start int) ([]schema.Entry, error) {
		return p.object(dst, line, obj, start)
	})
}

// field is a value read from the object with the offset where it starts,
// kept until the object's type is known.
type field struct {
	v   jsonl.Value
	off int
}

// present reports whether the field was given a value (null reads as
// absent). The zero field's Value is Invalid: String returns "", Raw nil.
func (f field) present() bool { return f.v.Kind() != jsonl.Invalid }

// record holds the fields of one object, in whatever order they came.
type record struct {
	start                                               int // offset of the object in the line
	typ, role, content, msgID, sender, ts, created, jid field
	attachments                                         []schema.Attachment
	reaction                                            *schema.Reaction
}

// object reads the object just entered and appends its entry to dst.
func (p *Parser) object(dst []schema.Entry, line jsonl.Line, obj, start int) ([]schema.Entry, error) {
	s := &p.s
	r := record{start: start}
	for s.NextField() {
		s.Peek() // move to the value, so that Offset locates it
		off := s.Offset()
		var dstField *field
		switch string(s.Key()) {
		case "type":
			dstField = &r.typ
		case "role":
			dstField = &r.role
		case "content":
			dstField = &r.content
		case "msg_id":
			dstField = &r.msgID
		case "sender":
			dstField = &r.sender
		case "ts":
			dstField = &r.ts
		case "created":
			dstField = &r.created
		case "jid":
			dstField = &r.jid
		case "attachments":
			atts, err := p.attachments(line, off)
			if err != nil {
				return dst, err
			}
			r.attachments = atts
			continue
		case "reaction":
			rc, err := p.reaction(line, off)
			if err != nil {
				return dst, err
			}
			r.reaction = rc
			continue
		default:
			continue
		}
		v := s.Value()
		if s.Err() != nil {
			return dst, parse.ScanError(&p.cfg, line, s)
		}
		switch v.Kind() {
		case jsonl.String:
			*dstField = field{v: v, off: off}
		case jsonl.Number:
			if dstField != &r.ts { // Fluux writes strings; Unix ms are tolerated
				return dst, p.bad(line, off, string(s.Key()))
			}
			*dstField = field{v: v, off: off}
		case jsonl.Null:
			*dstField = field{} // optional fields may be null: absent
		default:
			return dst, p.bad(line, off, string(s.Key()))
		}
	}
	if s.Err() != nil {
		return dst, parse.ScanError(&p.cfg, line, s)
	}

	e := parse.Base(&p.cfg, schema.FormatFluux, line, obj)
	var err error
	switch {
	case r.typ.v.Equal("session"):
		err = p.header(&e, line, &r)
	case r.typ.v.Equal("message"):
		err = p.message(&e, line, &r)
	default:
		err = p.event(&e, line, &r)
	}
	if err != nil {
		return dst, err
	}
	if p.cfg.Raw {
		e.Raw = append([]byte(nil), s.Span()...)
	}
	return append(dst, e), nil
}

// header fills a session header entry and makes its id the file's session.
func (p *Parser) header(e *schema.Entry, line jsonl.Line, r *record) error {
	if !r.jid.present() {
		return p.missing(line, r, "jid")
	}
	if !r.created.present() {
		return p.missing(line, r, "created")
	}
	jid, created := r.jid.v.String(), r.created.v.String()
	// The id needs only the created string, so even a header whose created
	// does not parse names the lines that follow it.
	p.session = jid + "/" + created
	p.headered = true
	ts, ok := parse.Time(r.created.v)
	if !ok {
		return p.bad(line, r.created.off, "created")
	}
	e.SessionID = p.session
	e.TS = ts
	e.EntryID = p.ids.ID("", line.Number, e.Object)
	e.Kind = schema.KindSession
	return nil
}

// message fills a message entry.
func (p *Parser) message(e *schema.Entry, line jsonl.Line, r *record) error {
	if !r.role.present() {
		return p.missing(line, r, "role")
	}
	if err := p.common(e, line, r); err != nil {
		return err
	}
	switch {
	case r.role.v.Equal("user"):
		e.Role = schema.RoleUser
	case r.role.v.Equal("assistant"):
		e.Role = schema.RoleAssistant
	case r.role.v.Equal("system"):
		e.Role = schema.RoleSystem
	default:
		e.Kind = schema.KindEvent
		e.Subtype = "message/" + r.role.v.String()
		if p.cfg.Text {
			e.Text = r.content.v.String()
		}
		return nil
	}
	e.Kind = schema.KindMessage
	e.Attachments = r.attachments
	e.Reaction = r.reaction

	// Content is unescaped (into p.buf, invalid UTF-8 replaced) only when it
	// is needed: for the text, or to look for a legacy reaction.
	raw, escaped := r.content.v.Raw(), r.content.v.Escaped()
	decoded := false
	decode := func() []byte {
		if !escaped && utf8.Valid(raw) {
			return raw
		}
		if !decoded {
			p.buf = r.content.v.AppendText(p.buf[:0])
			decoded = true
		}
		return p.buf
	}
	if e.Reaction == nil && e.Role == schema.RoleUser && len(raw) > 0 && (raw[0] == '[' || raw[0] == '\\') {
		e.Reaction = legacyReaction(decode())
	}
	switch {
	case e.Reaction != nil:
		e.Meta = true
		e.Subtype = "reaction"
	case len(raw) == 0 && len(e.Attachments) == 0:
		e.Meta = true
	}
	// Real user input always carries its text: the aggregator classifies
	// sessions by their first prompt.
	if p.cfg.Text || (e.Role == schema.RoleUser && !e.Meta) {
		if escaped {
			e.Text = string(decode())
		} else {
			e.Text = r.content.v.String() // also replaces invalid UTF-8
		}
	}
	return nil
}

// event fills the entry of an unknown or missing type.
func (p *Parser) event(e *schema.Entry, line jsonl.Line, r *record) error {
	if err := p.common(e, line, r); err != nil {
		return err
	}
	e.Kind = schema.KindEvent
	e.Subtype = r.typ.v.String()
	p.log.Debug("unknown line type", "path", p.cfg.Path, "line", line.Number, "type", e.Subtype)
	return nil
}

// common fills what every non-header entry takes from its fields: session,
// entry id, timestamp and sender.
func (p *Parser) common(e *schema.Entry, line jsonl.Line, r *record) error {
	if !p.headered && p.ids.Empty() {
		p.log.Debug("no session header before the first record; session id from the path",
			"path", p.cfg.Path, "line", line.Number, "session_id", p.session)
	}
	e.SessionID = p.session
	if r.ts.present() {
		ts, ok := parse.Time(r.ts.v)
		if !ok {
			return p.bad(line, r.ts.off, "ts")
		}
		e.TS = ts
	}
	var id string
	if r.msgID.present() {
		id = r.msgID.v.String()
		e.MessageID = id
	}
	e.EntryID = p.ids.ID(id, line.Number, e.Object)
	if r.sender.present() {
		// Senders repeat line after line: reuse the last one's string.
		if !r.sender.v.Equal(p.sender) {
			p.sender = r.sender.v.String()
		}
		e.Sender = p.sender
	}
	return nil
}

// legacyPrefix starts the text that runtime.rs stored for a reaction
// before reactions became structured metadata.
const legacyPrefix = "[Reacted to msg_id: "

// legacyReaction parses content of the form
// "[Reacted to msg_id: <id> with <emoji> <emoji>…]", or returns nil.
func legacyReaction(content []byte) *schema.Reaction {
	if len(content) <= len(legacyPrefix) || string(content[:len(legacyPrefix)]) != legacyPrefix ||
		content[len(content)-1] != ']' {
		return nil
	}
	body := content[len(legacyPrefix) : len(content)-1]
	i := bytes.Index(body, []byte(" with "))
	if i <= 0 {
		return nil
	}
	id, emojis := body[:i], body[i+len(" with "):]
	r := &schema.Reaction{MessageID: string(id), Emojis: []string{}}
	for _, f := range bytes.Fields(emojis) {
		r.Emojis = append(r.Emojis, string(f))
	}
	return r
}

// bad returns the located error for a field of the wrong type or value.
func (p *Parser) bad(line jsonl.Line, off int, name string) error {
	return parse.Fail(&p.cfg, line, off, fmt.Errorf("%w %s", parse.ErrBadField, strconv.Quote(name)))
}

// missing returns the located error for a field the record needs, located
// at the start of its object.
func (p *Parser) missing(line jsonl.Line, r *record, name string) error {
	return parse.Fail(&p.cfg, line, r.start, fmt.Errorf("%w %s", parse.ErrMissingField, strconv.Quote(name)))
}
