package kilo

import (
	"fmt"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Parser turns message rows of one kilo.db into entries. It keeps no state
// between rows but its scanners: a row changed in place and given again
// gives the same entry id and usage key. A Parser is not safe for
// concurrent use.
type Parser struct {
	cfg  parse.Config
	s    jsonl.Scanner // the row
	d    jsonl.Scanner // data
	data []byte        // data unescaped from a string column
	line []byte        // a database row as a line (Row)
	out  []schema.Entry
	rows int64 // rows given to Row
}

// New returns a parser for the rows of one database; cfg.Path names it.
func New(cfg parse.Config) *Parser { return &Parser{cfg: cfg} }

// Format returns [schema.FormatKilo].
func (p *Parser) Format() schema.Format { return schema.FormatKilo }

// message holds the fields of a message's data that the parser reads.
type message struct {
	id, session, role, parent  jsonl.Value
	model, provider, finish    jsonl.Value
	userModel, userProvider    jsonl.Value // a user message's model {providerID, modelID}
	cwd                        jsonl.Value
	created                    jsonl.Value
	createdOff                 int
	cost                       jsonl.Value
	costOff                    int
	tokens                     jsonl.Value
	tokensOff                  int
	input, output, reasoning   int64
	cacheRead, cacheWrite, tot int64
}

// Parse appends the entry of one row, given as the line {"id",
// "session_id", "data"} (see the package doc), to dst. A line that is not
// such an object, a data that is neither an object nor a string holding
// one, a time or cost of the wrong type, or a token counter that is not an
// integer in 0…10¹² give a *schema.DecodeError (for a bad field, with the
// entry itself without it). Entries never alias line.Bytes.
func (p *Parser) Parse(dst []schema.Entry, line jsonl.Line) ([]schema.Entry, error) {
	s := &p.s
	return parse.Objects(&p.cfg, s, line, dst, func(dst []schema.Entry, obj, _ int) ([]schema.Entry, error) {
		var rowID, rowSession, data jsonl.Value
		dataOff := 0
		for s.NextField() {
			switch string(s.Key()) {
			case "id":
				rowID = s.Value()
			case "session_id":
				rowSession = s.Value()
			case "data":
				dataOff = s.Offset()
				data = s.Value()
			}
		}
		if err := parse.ScanError(&p.cfg, line, s); err != nil {
			return dst, err
		}
		return p.row(dst, line, obj, rowID, rowSession, data, dataOff)
	})
}

// row appends the entry of one row.
func (p *Parser) row(dst []schema.Entry, line jsonl.Line, obj int, rowID, rowSession, data jsonl.Value, dataOff int) ([]schema.Entry, error) {
	var raw []byte
	switch data.Kind() {
	case jsonl.Object:
		raw = data.Raw()
	case jsonl.String:
		p.data = data.AppendText(p.data[:0])
		raw = p.data
	default:
		return dst, parse.Fail(&p.cfg, line, dataOff, fmt.Errorf("%w: data", parse.ErrBadField))
	}
	// Offsets inside a string column are not the line's: errors in it
	// point at the column.
	at := func(off int) int {
		if data.Kind() == jsonl.Object {
			return dataOff + off
		}
		return dataOff
	}
	var m message
	d := &p.d
	d.Reset(raw)
	if !d.EnterObject() {
		return dst, parse.Fail(&p.cfg, line, dataOff, fmt.Errorf("%w: data", parse.ErrBadField))
	}
	for d.NextField() {
		switch string(d.Key()) {
		case "id":
			m.id = d.Value()
		case "sessionID", "session_id":
			m.session = d.Value()
		case "role":
			m.role = d.Value()
		case "parentID":
			m.parent = d.Value()
		case "modelID":
			m.model = d.Value()
		case "providerID":
			m.provider = d.Value()
		case "finish":
			m.finish = d.Value()
		case "model":
			if d.EnterObject() {
				for d.NextField() {
					switch string(d.Key()) {
					case "modelID":
						m.userModel = d.Value()
					case "providerID":
						m.userProvider = d.Value()
					}
				}
			}
		case "path":
			if d.EnterObject() {
				for d.NextField() {
					if string(d.Key()) == "cwd" {
						m.cwd = d.Value()
					}
				}
			}
		case "time":
			if d.EnterObject() {
				for d.NextField() {
					if string(d.Key()) == "created" {
						m.createdOff = d.Offset()
						m.created = d.Value()
					}
				}
			}
		case "cost":
			m.costOff = d.Offset()
			m.cost = d.Value()
		case "tokens":
			m.tokensOff = d.Offset()
			m.tokens = d.Value()
		}
	}
	if d.Err() != nil {
		return dst, parse.Fail(&p.cfg, line, dataOff, fmt.Errorf("%w: data: %v", parse.ErrBadField, d.Err()))
	}

	e := parse.Base(&p.cfg, schema.FormatKilo, line, obj)
	var err error
	fail := func(off int, ferr error) {
		if err == nil {
			err = parse.Fail(&p.cfg, line, at(off), ferr)
		}
	}
	e.MessageID = parse.Str(m.id)
	e.EntryID = e.MessageID
	if e.EntryID == "" {
		if id := parse.Str(rowID); id != "" {
			e.EntryID = "row:" + id
		} else {
			e.EntryID = parse.LineID(line.Number, obj)
		}
	}
	e.SessionID = parse.Str(m.session)
	if e.SessionID == "" {
		e.SessionID = parse.Str(rowSession)
	}
	e.ParentID = parse.Str(m.parent)
	e.CWD = parse.Str(m.cwd)
	e.StopReason = parse.Str(m.finish)
	if p.cfg.Raw {
		e.Raw = append([]byte(nil), raw...)
	}
	switch m.created.Kind() {
	case jsonl.Invalid, jsonl.Null:
	default:
		var ok bool
		if e.TS, ok = created(m.created); !ok {
			fail(m.createdOff, fmt.Errorf("%w: data.time.created", parse.ErrBadField))
		}
	}
	e.Kind = schema.KindEvent
	switch {
	case m.role.Equal("user"):
		e.Kind, e.Role = schema.KindMessage, schema.RoleUser
		e.Model, e.Provider = parse.Str(m.userModel), parse.Str(m.userProvider)
	case m.role.Equal("assistant"):
		e.Kind, e.Role = schema.KindMessage, schema.RoleAssistant
		e.Model, e.Provider = parse.Str(m.model), parse.Str(m.provider)
		switch m.cost.Kind() {
		case jsonl.Invalid, jsonl.Null:
		case jsonl.Number:
			if c, ok := m.cost.Float(); ok && c > 0 {
				e.CostUSD = &c
			} else if !ok || c < 0 {
				fail(m.costOff, fmt.Errorf("%w: data.cost", parse.ErrBadField))
			}
		default:
			fail(m.costOff, fmt.Errorf("%w: data.cost", parse.ErrBadField))
		}
		if ferr := p.tokens(&m, line, at); ferr != nil {
			if err == nil {
				err = ferr
			}
			e.CostUSD = nil
		} else if u := m.usage(); u.Total() > 0 {
			e.Usage = &u
			e.UsageKey = "kilo:" + e.SessionID + ":" + e.EntryID
		}
	}
	if e.SessionID == "" {
		// A row with no session at all cannot be placed: say so.
		if err == nil {
			err = parse.Fail(&p.cfg, line, 0, fmt.Errorf("%w: session_id", parse.ErrMissingField))
		}
		return dst, err
	}
	return append(dst, e), err
}

// tokens decodes the message's tokens object into m.
func (p *Parser) tokens(m *message, line jsonl.Line, at func(int) int) error {
	switch m.tokens.Kind() {
	case jsonl.Object:
	case jsonl.Invalid, jsonl.Null:
		return nil
	default:
		return parse.Fail(&p.cfg, line, at(m.tokensOff), fmt.Errorf("%w: data.tokens", parse.ErrBadField))
	}
	d := &p.d
	d.Reset(m.tokens.Raw())
	d.EnterObject()
	count := func(dst *int64, name string) error {
		off := m.tokensOff + d.Offset()
		v := d.Value()
		n, ok := parse.Count(v)
		if !ok {
			return parse.Fail(&p.cfg, line, at(off), parse.CountError(v, "data.tokens."+name))
		}
		*dst = n
		return nil
	}
	for d.NextField() {
		var err error
		switch string(d.Key()) {
		case "input":
			err = count(&m.input, "input")
		case "output":
			err = count(&m.output, "output")
		case "reasoning":
			err = count(&m.reasoning, "reasoning")
		case "total":
			err = count(&m.tot, "total")
		case "cache":
			if d.Peek() != jsonl.Object {
				v := d.Value()
				if v.Kind() != jsonl.Null {
					err = parse.Fail(&p.cfg, line, at(m.tokensOff+d.Offset()), fmt.Errorf("%w: data.tokens.cache", parse.ErrBadField))
				}
				break
			}
			d.EnterObject()
			for d.NextField() {
				switch string(d.Key()) {
				case "read":
					err = count(&m.cacheRead, "cache.read")
				case "write":
					err = count(&m.cacheWrite, "cache.write")
				}
				if err != nil {
					return err
				}
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// usage converts OpenCode's tokens to the disjoint convention: input and
// the cache as they are (input excludes the cache), output with the
// reasoning (OpenCode counts it apart) and with what total holds beyond
// the parts (as ccusage counts it).
func (m *message) usage() schema.Usage {
	known := m.input + m.output + m.reasoning + m.cacheRead + m.cacheWrite
	extra := max(m.tot-known, 0)
	return schema.Usage{
		Input:      m.input,
		Output:     m.output + m.reasoning + extra,
		CacheRead:  m.cacheRead,
		CacheWrite: m.cacheWrite,
		Reasoning:  m.reasoning,
	}
}

// created decodes time.created: Unix milliseconds, or seconds below 10¹².
func created(v jsonl.Value) (time.Time, bool) {
	n, ok := parse.Int(v)
	if !ok || n <= 0 {
		return time.Time{}, false
	}
	if n < 1_000_000_000_000 {
		n *= 1000
	}
	t := time.UnixMilli(n).UTC()
	if t.Year() > 9999 {
		return time.Time{}, false
	}
	return t, true
}
