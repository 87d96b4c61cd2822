package copilot

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// SubtypeLegTotal is the Subtype of an entry carrying a model's usage over
// one leg of a session (between two session.shutdown events): a sum over
// the leg's API calls, not one call.
const SubtypeLegTotal = "leg_total"

// Parser turns the lines of one events.jsonl file into entries. Lines
// must be given in file order from the first line: the session id, the
// current model and the usage baseline of the last shutdown are per-file
// state. A Parser is not safe for concurrent use; use one per file.
type Parser struct {
	cfg parse.Config
	log *slog.Logger

	s   jsonl.Scanner // the line
	sub jsonl.Scanner // data
	mm  jsonl.Scanner // modelMetrics
	mu  jsonl.Scanner // one model's metrics and usage
	rec record
	dat data

	fallback string // session id before session.start: the directory's name
	session  string // session.start data.sessionId
	model    string // the current model
	cwd      string

	// base is each model's cumulative counters at the last shutdown.
	base map[string]counters
}

// counters are Copilot's own usage counters of one model: inputTokens
// includes the cache reads and writes, outputTokens the reasoning.
type counters struct {
	input, output, cacheRead, cacheWrite, reasoning int64
}

// New returns a parser for one events.jsonl file. cfg.Path names the
// file: its directory's name (the session id; for a flat
// session-state/<session>.jsonl, its stem) names the session of lines
// before session.start.
func New(cfg parse.Config) *Parser {
	p := &Parser{cfg: cfg, log: cfg.Log().With("component", "copilot")}
	if cfg.Path != "" {
		// session-state/<session>/events.jsonl, or the flat
		// session-state/<session>.jsonl of versions before 0.0.400.
		if base := filepath.Base(cfg.Path); base != "events.jsonl" {
			p.fallback = strings.TrimSuffix(base, ".jsonl")
		} else {
			p.fallback = filepath.Base(filepath.Dir(cfg.Path))
		}
	}
	return p
}

// Format returns [schema.FormatCopilot].
func (p *Parser) Format() schema.Format { return schema.FormatCopilot }

// Parse appends the entries of one line to dst and returns the extended
// slice: one entry per JSON object on the line, but one per model with
// usage for a session.shutdown. A value that is not an object, invalid
// JSON, a timestamp that is not RFC 3339, a data or modelMetrics that is
// not an object, or a token counter that is not an integer in 0…10¹² give
// a *schema.DecodeError; the entries decoded before the fault are
// returned with it (for a bad field, the entry itself without it). The
// parser stays usable for the next line. Entries never alias line.Bytes.
func (p *Parser) Parse(dst []schema.Entry, line jsonl.Line) ([]schema.Entry, error) {
	s := &p.s
	return parse.Objects(&p.cfg, s, line, dst, func(dst []schema.Entry, obj, _ int) ([]schema.Entry, error) {
		if !scanRecord(s, &p.rec) {
			return dst, parse.ScanError(&p.cfg, line, s)
		}
		return p.entries(dst, line, obj)
	})
}

// entries appends the entries of the record just scanned.
func (p *Parser) entries(dst []schema.Entry, line jsonl.Line, obj int) ([]schema.Entry, error) {
	r := &p.rec
	e := parse.Base(&p.cfg, schema.FormatCopilot, line, obj)
	var err error
	fail := func(off int, ferr error) {
		if err == nil {
			err = parse.Fail(&p.cfg, line, off, ferr)
		}
	}
	e.EntryID = parse.Str(r.id)
	if e.EntryID == "" {
		e.EntryID = parse.LineID(line.Number, obj)
	}
	e.ParentID = parse.Str(r.parentID)
	if p.cfg.Raw {
		e.Raw = append([]byte(nil), p.s.Span()...)
	}
	if r.ts.Kind() != jsonl.Invalid && !r.ts.IsNull() {
		var ok bool
		if e.TS, ok = parse.Time(r.ts); !ok {
			fail(r.tsOff, fmt.Errorf("%w: timestamp", parse.ErrBadField))
		}
	}
	e.Subtype = parse.Str(r.typ)
	e.Kind = schema.KindEvent

	d := &p.dat
	hasData := false
	switch r.data.Kind() {
	case jsonl.Object:
		hasData = scanData(&p.sub, r.data.Raw(), d)
	case jsonl.Invalid, jsonl.Null:
	default:
		fail(r.dataOff, fmt.Errorf("%w: data", parse.ErrBadField))
	}
	if !hasData {
		*d = data{}
	}

	switch {
	case r.typ.Equal("session.start"):
		e.Kind = schema.KindSession
		if id := parse.Str(d.sessionID); id != "" && p.session == "" {
			p.session = id
		}
		e.AgentVersion = parse.Str(d.version)
		if d.context.Kind() == jsonl.Object {
			c := scanContext(&p.sub, d.context.Raw())
			p.cwd = parse.Str(c.cwd)
			e.GitBranch = parse.Str(c.branch)
		}
		if m := parse.Str(d.selectedModel); m != "" {
			p.model = m
		}
	case r.typ.Equal("session.model_change"):
		e.Kind = schema.KindModelChange
		if m := parse.Str(d.newModel); m != "" {
			p.model = m
		}
	case r.typ.Equal("session.compaction_complete"):
		e.Kind = schema.KindCompaction
	case r.typ.Equal("user.message"):
		e.Kind, e.Role = schema.KindMessage, schema.RoleUser
		if p.cfg.Text {
			e.Text = parse.Str(d.content)
		}
	case r.typ.Equal("assistant.message"):
		e.Kind, e.Role = schema.KindMessage, schema.RoleAssistant
		e.MessageID = parse.Str(d.messageID)
		if p.cfg.Text {
			e.Text = parse.Str(d.content)
		}
		if d.toolRequests.Kind() == jsonl.Array {
			e.ToolCalls = p.toolCalls(d.toolRequests.Raw())
		}
	case r.typ.Equal("tool.execution_complete") && hasData:
		e.Kind, e.Role = schema.KindMessage, schema.RoleTool
		e.ToolResults = []schema.ToolResult{{
			ToolCallID: parse.Str(d.toolCallID),
			IsError:    isFalse(d.success),
		}}
	}
	e.SessionID = p.sessionID()
	e.CWD = p.cwd
	e.Model = p.model
	if r.typ.Equal("session.shutdown") && hasData {
		if m := parse.Str(d.currentModel); m != "" {
			p.model = m
		}
		return p.shutdown(dst, e, line, r.dataOff, err)
	}
	return append(dst, e), err
}

// sessionID is session.start's sessionId, else the directory's name.
func (p *Parser) sessionID() string {
	if p.session != "" {
		return p.session
	}
	return p.fallback
}

// toolCalls reads assistant.message's toolRequests [{toolCallId, name,
// arguments}].
func (p *Parser) toolCalls(raw []byte) []schema.ToolCall {
	s := &p.mm
	s.Reset(raw)
	if !s.EnterArray() {
		return nil
	}
	var out []schema.ToolCall
	for s.NextElem() {
		if !s.EnterObject() {
			continue
		}
		var tc schema.ToolCall
		for s.NextField() {
			switch string(s.Key()) {
			case "toolCallId":
				tc.ID = parse.Str(s.Value())
			case "name":
				tc.Name = parse.Str(s.Value())
			case "arguments":
				v := s.Value()
				if p.cfg.Text {
					tc.Input = parse.RawJSON(v)
				}
			}
		}
		out = append(out, tc)
	}
	return out
}

// isFalse reports whether v is the JSON false.
func isFalse(v jsonl.Value) bool {
	b, ok := v.Bool()
	return ok && !b
}
