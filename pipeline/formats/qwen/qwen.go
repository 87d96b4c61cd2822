package qwen

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Parser turns the lines of one Qwen Code chat file into entries. Lines
// must be given in file order from the first line: the entry ids given
// out and the last model named are per-file state. A Parser is not safe
// for concurrent use; use one per file.
type Parser struct {
	cfg parse.Config
	log *slog.Logger

	s   jsonl.Scanner // the line
	sub jsonl.Scanner // message, usageMetadata, toolCallResult
	el  jsonl.Scanner // parts
	rec record
	cnt counts

	fallback string // the file stem: the session id of a record without one
	model    string // the last model named in the file
	ids      parse.UniqueIDs
}

// New returns a parser for one Qwen Code chat file. cfg.Path names the
// file: its stem (the CLI names the file after the session) is the
// session id of a record without sessionId.
func New(cfg parse.Config) *Parser {
	p := &Parser{cfg: cfg, log: cfg.Log().With("component", "qwen")}
	p.fallback = strings.TrimSuffix(filepath.Base(cfg.Path), ".jsonl")
	return p
}

// Format returns [schema.FormatQwen].
func (p *Parser) Format() schema.Format { return schema.FormatQwen }

// Parse appends the entries of one line to dst and returns the extended
// slice: one entry per ChatRecord. A value that is not an object, invalid
// JSON, a timestamp that is not RFC 3339, a message or usageMetadata of
// the wrong JSON type, or a token counter that is not an integer in
// 0…10¹² give a *schema.DecodeError; the entries decoded before the fault
// are returned with it (for a bad field, the entry itself without it).
// The parser stays usable for the next line. Entries never alias
// line.Bytes.
func (p *Parser) Parse(dst []schema.Entry, line jsonl.Line) ([]schema.Entry, error) {
	s := &p.s
	return parse.Objects(&p.cfg, s, line, dst, func(dst []schema.Entry, obj, start int) ([]schema.Entry, error) {
		if !scanRecord(s, &p.rec) {
			return dst, parse.ScanError(&p.cfg, line, s)
		}
		e, err := p.record(line, obj, start, s.Span())
		return append(dst, e), err
	})
}

// record returns the entry of the record just scanned, found at start in
// the line (span its bytes).
func (p *Parser) record(line jsonl.Line, obj, start int, span []byte) (schema.Entry, error) {
	r := &p.rec
	var err error
	fail := func(off int, ferr error) {
		if err == nil {
			err = parse.Fail(&p.cfg, line, off, ferr)
		}
	}
	e := parse.Base(&p.cfg, schema.FormatQwen, line, obj)
	if p.cfg.Raw {
		e.Raw = append([]byte(nil), span...)
	}
	uuid := parse.Str(r.uuid)
	e.EntryID = p.ids.ID(uuid, line.Number, obj)
	e.ParentID = parse.Str(r.parentUUID)
	e.SessionID = parse.Str(r.sessionID)
	if e.SessionID == "" {
		e.SessionID = p.fallback
	}
	if r.ts.Kind() != jsonl.Invalid && !r.ts.IsNull() {
		var ok bool
		if e.TS, ok = parse.Time(r.ts); !ok {
			fail(start+r.tsOff, fmt.Errorf("%w: timestamp", parse.ErrBadField))
		}
	}
	e.CWD = parse.Str(r.cwd)
	e.GitBranch = parse.Str(r.gitBranch)
	e.AgentVersion = parse.Str(r.version)
	e.AgentID = parse.Str(r.agentID)
	e.AgentType = parse.Str(r.agentName)
	if b, ok := r.sidechain.Bool(); ok && b {
		e.Sidechain = true
	}
	e.Subtype = parse.Str(r.subtype)

	var parts jsonl.Value
	switch r.message.Kind() {
	case jsonl.Object:
		parts = p.parts(r.message.Raw())
	case jsonl.Invalid, jsonl.Null:
	default:
		fail(start+r.msgOff, fmt.Errorf("%w: message", parse.ErrBadField))
	}

	switch {
	case r.typ.Equal("user"):
		e.Kind, e.Role = schema.KindMessage, schema.RoleUser
		// Only the user's own input is input: a record the CLI injects
		// (a notification, a goal's runtime prompt) names another
		// provenance.
		if r.provenance.Kind() == jsonl.String && !r.provenance.Equal("real_user") {
			e.Meta = true
		}
		p.content(&e, parts)
		if len(e.ToolResults) > 0 && !p.hasText(parts) {
			e.Role = schema.RoleTool
		}
	case r.typ.Equal("assistant"):
		e.Kind, e.Role = schema.KindMessage, schema.RoleAssistant
		if m := parse.Str(r.model); m != "" {
			p.model = m
		}
		e.Model = parse.Str(r.model)
		if e.Model == "" {
			e.Model = p.model
		}
		e.MessageID = uuid
		p.content(&e, parts)
		p.usage(&e, start, fail)
	case r.typ.Equal("tool_result"):
		e.Kind, e.Role = schema.KindMessage, schema.RoleTool
		p.content(&e, parts)
		if isError(&p.sub, r.toolResult) {
			if len(e.ToolResults) == 0 {
				e.ToolResults = []schema.ToolResult{{}}
			}
			for i := range e.ToolResults {
				e.ToolResults[i].IsError = true
			}
		}
	case r.typ.Equal("system") && r.subtype.Equal("chat_compression"):
		e.Kind = schema.KindCompaction
	case r.typ.Equal("system") && r.subtype.Equal("custom_title"):
		e.Kind = schema.KindSummary
		e.Title = payloadString(&p.sub, r.payload, "customTitle")
	default:
		e.Kind = schema.KindEvent
		if e.Subtype == "" {
			e.Subtype = parse.Str(r.typ)
		}
	}
	return e, err
}

// parts returns the parts array of a Content object.
func (p *Parser) parts(raw []byte) jsonl.Value {
	s := &p.sub
	s.Reset(raw)
	if !s.EnterObject() {
		return jsonl.Value{}
	}
	var parts jsonl.Value
	for s.NextField() {
		if string(s.Key()) == "parts" {
			parts = s.Value()
		}
	}
	if parts.Kind() != jsonl.Array {
		return jsonl.Value{}
	}
	return parts
}

// content fills e's text (the text parts that are not thoughts, with
// Config.Text), tool calls (functionCall parts) and tool results
// (functionResponse parts) from a parts array.
func (p *Parser) content(e *schema.Entry, parts jsonl.Value) {
	if parts.Kind() != jsonl.Array {
		return
	}
	s := &p.el
	s.Reset(parts.Raw())
	if !s.EnterArray() {
		return
	}
	var text []byte
	for s.NextElem() {
		if s.Peek() != jsonl.Object || !s.EnterObject() {
			s.Skip()
			continue
		}
		var txt, call, resp jsonl.Value
		thought := false
		for s.NextField() {
			switch string(s.Key()) {
			case "text":
				txt = s.Value()
			case "thought":
				b, ok := s.Value().Bool()
				thought = ok && b
			case "functionCall":
				call = s.Value()
			case "functionResponse":
				resp = s.Value()
			}
		}
		switch {
		case call.Kind() == jsonl.Object:
			id, name, args, _ := fields(&p.sub, call.Raw(), "id", "name", "args")
			c := schema.ToolCall{ID: parse.Str(id), Name: parse.Str(name)}
			if p.cfg.Text {
				c.Input = parse.RawJSON(args)
			}
			e.ToolCalls = append(e.ToolCalls, c)
		case resp.Kind() == jsonl.Object:
			id, _, response, _ := fields(&p.sub, resp.Raw(), "id", "name", "response")
			r := schema.ToolResult{ToolCallID: parse.Str(id)}
			if response.Kind() == jsonl.Object {
				out, errv, _, _ := fields(&p.sub, response.Raw(), "output", "error", "")
				r.IsError = errv.Kind() == jsonl.String || errv.Kind() == jsonl.Object
				if p.cfg.Text {
					r.Content = parse.Str(out)
					if r.Content == "" {
						r.Content = parse.Str(errv)
					}
				}
			}
			e.ToolResults = append(e.ToolResults, r)
		case txt.Kind() == jsonl.String && !thought && p.cfg.Text:
			if len(text) > 0 {
				text = append(text, '\n')
			}
			text = txt.AppendText(text)
		}
	}
	if len(text) > 0 {
		e.Text = string(text)
	}
}

// hasText reports whether a parts array holds a text part that is not a
// thought.
func (p *Parser) hasText(parts jsonl.Value) bool {
	if parts.Kind() != jsonl.Array {
		return false
	}
	s := &p.el
	s.Reset(parts.Raw())
	if !s.EnterArray() {
		return false
	}
	found := false
	for s.NextElem() {
		if s.Peek() != jsonl.Object || !s.EnterObject() {
			s.Skip()
			continue
		}
		txt, thought := false, false
		for s.NextField() {
			switch string(s.Key()) {
			case "text":
				txt = s.Value().Kind() == jsonl.String
			case "thought":
				b, ok := s.Value().Bool()
				thought = ok && b
			}
		}
		found = found || (txt && !thought)
	}
	return found
}

// fields returns the values of up to three named fields of an object
// (raw); a "" name is not looked for. ok is false when raw is not an
// object.
func fields(s *jsonl.Scanner, raw []byte, a, b, c string) (va, vb, vc jsonl.Value, ok bool) {
	s.Reset(raw)
	if !s.EnterObject() {
		return va, vb, vc, false
	}
	for s.NextField() {
		switch k := string(s.Key()); {
		case k == a:
			va = s.Value()
		case k == b:
			vb = s.Value()
		case c != "" && k == c:
			vc = s.Value()
		}
	}
	return va, vb, vc, true
}

// isError reports whether a toolCallResult says the tool failed: an error
// set, or status "error".
func isError(s *jsonl.Scanner, v jsonl.Value) bool {
	if v.Kind() != jsonl.Object {
		return false
	}
	errv, status, _, _ := fields(s, v.Raw(), "error", "status", "")
	return (errv.Kind() != jsonl.Invalid && !errv.IsNull()) || status.Equal("error")
}

// payloadString returns the string field name of a systemPayload.
func payloadString(s *jsonl.Scanner, v jsonl.Value, name string) string {
	if v.Kind() != jsonl.Object {
		return ""
	}
	x, _, _, _ := fields(s, v.Raw(), name, "", "")
	return parse.Str(x)
}
