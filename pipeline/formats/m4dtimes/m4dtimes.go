package m4dtimes

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Provider is the provider of every assistant message: the SDK's only LLM
// client is Anthropic's (sdk/llm/anthropic.go).
const Provider = "anthropic"

// Parser turns the events of one m4dtimes session file into entries. It
// keeps the session id and user id of the last header and the entry ids
// already given out, so lines must be given in file order from the start
// of the file (see formats.Parser). A Parser is not safe for concurrent use.
type Parser struct {
	cfg parse.Config
	log *slog.Logger

	s         jsonl.Scanner
	session   string          // id of the last header, or the file stem
	user      string          // user id of the last header, or the numeric stem
	stemUser  string          // the file stem when it is a decimal int64
	headered  bool            // a header has named the session
	ids       parse.UniqueIDs // entry ids given out in this file
	prevID    string          // the last id given out, the next event's parent
	buf       []byte          // text of the current message's text blocks
	blocks    []block         // scratch for the current message's blocks
	usageBase []byte          // scratch for usage keys
	countErr  error           // the line's first bad token counter: its entry is kept
}

// New returns a parser for the file cfg.Path. The path is only used for
// provenance and, for a file without header, as the session id (its stem)
// and the user id (the stem, when it is a decimal integer).
func New(cfg parse.Config) *Parser {
	p := &Parser{cfg: cfg, log: cfg.Log().With("component", "m4dtimes"), session: "-"}
	if cfg.Path != "" {
		name := filepath.Base(cfg.Path)
		if stem := strings.TrimSuffix(name, filepath.Ext(name)); stem != "" && stem != "." && stem != string(filepath.Separator) {
			p.session = stem
			if n, err := strconv.ParseInt(stem, 10, 64); err == nil {
				p.stemUser = strconv.FormatInt(n, 10)
			}
		}
	}
	p.user = p.stemUser
	return p
}

// Format returns [schema.FormatM4dtimes].
func (p *Parser) Format() schema.Format { return schema.FormatM4dtimes }

// SessionID returns the session id that the next event will get unless it
// is a header: the id of the last header read, or the file stem.
func (p *Parser) SessionID() string { return p.session }

// Parse appends the entries of one line to dst: one per JSON object. On bad
// input it returns the entries of the objects before the fault and a
// *schema.DecodeError locating it; the parser stays usable. Entries never
// alias line.Bytes. A bad token counter (see parse.Count) does not stop the
// line: its entry is kept without usage and the error located.
func (p *Parser) Parse(dst []schema.Entry, line jsonl.Line) ([]schema.Entry, error) {
	p.countErr = nil
	dst, err := parse.Objects(&p.cfg, &p.s, line, dst, func(dst []schema.Entry, obj, start int) ([]schema.Entry, error) {
		return p.object(dst, line, obj, start)
	})
	if err == nil {
		err = p.countErr
	}
	return dst, err
}

// field is a scalar read from an object with the offset where it starts,
// kept until the object's type is known. The zero field is absent.
type field struct {
	v   jsonl.Value
	off int
}

// present reports whether the field was given a value (null reads as
// absent).
func (f field) present() bool { return f.v.Kind() != jsonl.Invalid }

// event holds the fields of one top-level object, in whatever order they
// came.
type event struct {
	typ, id, parentID, ts, userID field
	msg                           *message
	start                         int // offset of the object in the line
	msgOff                        int // offset of the message value, or start
}

// object reads the object just entered and appends its entry to dst.
func (p *Parser) object(dst []schema.Entry, line jsonl.Line, obj, start int) ([]schema.Entry, error) {
	s := &p.s
	ev := event{start: start, msgOff: start}
	var msg message
	for s.NextField() {
		s.Peek() // move to the value, so that Offset locates it
		off := s.Offset()
		var f *field
		kinds := stringKind
		switch string(s.Key()) {
		case "type":
			f = &ev.typ
		case "id":
			f = &ev.id
		case "parentId":
			f = &ev.parentID
		case "timestamp":
			f, kinds = &ev.ts, stringKind|numberKind
		case "userId":
			f, kinds = &ev.userID, numberKind
		case "message":
			ok, err := p.message(&msg, line, off)
			if err != nil {
				return dst, err
			}
			ev.msg, ev.msgOff = nil, off
			if ok {
				ev.msg = &msg
			}
			continue
		default:
			continue
		}
		v := s.Value()
		if err := p.scalar(f, v, off, kinds, line, string(s.Key())); err != nil {
			return dst, err
		}
	}
	if s.Err() != nil {
		return dst, parse.ScanError(&p.cfg, line, s)
	}

	e := parse.Base(&p.cfg, schema.FormatM4dtimes, line, obj)
	var err error
	switch {
	case ev.typ.v.Equal("session"):
		err = p.header(&e, line, &ev)
	case ev.typ.v.Equal("message"):
		err = p.messageEvent(&e, line, &ev)
	default:
		err = p.common(&e, line, &ev)
		e.Kind = schema.KindEvent
		e.Subtype = ev.typ.v.String()
		p.log.Debug("unknown event type", "path", p.cfg.Path, "line", line.Number, "type", e.Subtype)
	}
	if err != nil {
		return dst, err
	}
	if p.cfg.Raw {
		e.Raw = append([]byte(nil), s.Span()...)
	}
	return append(dst, e), nil
}

// The JSON kinds a scalar field accepts; null is always read as absent.
const (
	stringKind = 1 << iota
	numberKind
)

// scalar stores v into f if its kind is one of kinds, drops a null, and
// reports any other kind as a bad field named name.
func (p *Parser) scalar(f *field, v jsonl.Value, off, kinds int, line jsonl.Line, name string) error {
	switch v.Kind() {
	case jsonl.String:
		if kinds&stringKind != 0 {
			*f = field{v: v, off: off}
			return nil
		}
	case jsonl.Number:
		if kinds&numberKind != 0 {
			*f = field{v: v, off: off}
			return nil
		}
	case jsonl.Null:
		*f = field{}
		return nil
	case jsonl.Invalid:
		if err := parse.ScanError(&p.cfg, line, &p.s); err != nil {
			return err
		}
	}
	return p.bad(line, off, name)
}

// header fills a session header entry and makes its id the file's session.
func (p *Parser) header(e *schema.Entry, line jsonl.Line, ev *event) error {
	if !ev.id.present() || len(ev.id.v.Raw()) == 0 {
		return p.missing(line, ev.start, "id")
	}
	// The id alone names the session: switch even if a later field is bad.
	p.session = ev.id.v.String()
	p.headered = true
	p.user = p.stemUser
	if ev.userID.present() {
		n, ok := ev.userID.v.Int() // exact: no float64 detour
		if !ok {
			return p.bad(line, ev.userID.off, "userId")
		}
		p.user = strconv.FormatInt(n, 10)
	}
	if err := p.timestamp(e, line, ev); err != nil {
		return err
	}
	e.SessionID = p.session
	e.EntryID = p.entryID(p.session, line, e.Object)
	e.Kind = schema.KindSession
	e.Sender = p.user
	return nil
}

// common fills what every non-header entry takes from its event: session,
// entry id, parent id and timestamp.
func (p *Parser) common(e *schema.Entry, line jsonl.Line, ev *event) error {
	if !p.headered && p.ids.Empty() {
		p.log.Debug("no session header before the first event; session id from the file stem",
			"path", p.cfg.Path, "line", line.Number, "session_id", p.session)
	}
	e.SessionID = p.session
	if err := p.timestamp(e, line, ev); err != nil {
		return err
	}
	if ev.parentID.present() {
		// The parent is nearly always the event before: reuse its id.
		e.ParentID = p.prevID
		if !ev.parentID.v.Equal(p.prevID) {
			e.ParentID = ev.parentID.v.String()
		}
	}
	var id string
	if ev.id.present() {
		id = ev.id.v.String()
	}
	e.EntryID = p.entryID(id, line, e.Object)
	return nil
}

// timestamp sets e.TS from the event's timestamp, if any.
func (p *Parser) timestamp(e *schema.Entry, line jsonl.Line, ev *event) error {
	if !ev.ts.present() {
		return nil
	}
	ts, ok := parse.Time(ev.ts.v)
	if !ok {
		return p.bad(line, ev.ts.off, "timestamp")
	}
	e.TS = ts
	return nil
}

// entryID returns the entry id of an event with source id id ("" when it
// has none) from p.ids (ids are 4 random bytes and a file lives as long as
// its user: one may come again), and keeps it as the next event's parent.
func (p *Parser) entryID(id string, line jsonl.Line, obj int) string {
	p.prevID = p.ids.ID(id, line.Number, obj)
	return p.prevID
}

// bad returns the located error for a field of the wrong type or value.
func (p *Parser) bad(line jsonl.Line, off int, name string) error {
	return parse.Fail(&p.cfg, line, off, fmt.Errorf("%w %s", parse.ErrBadField, strconv.Quote(name)))
}

// missing returns the located error for a field that must be present.
func (p *Parser) missing(line jsonl.Line, off int, name string) error {
	return parse.Fail(&p.cfg, line, off, fmt.Errorf("%w %s", parse.ErrMissingField, strconv.Quote(name)))
}
