package kimi

import (
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// DefaultModel is the model of every call: the wire log does not name it,
// and Kimi CLI's own model (what /login sets up and ccusage 20.0.24
// assumes) is kimi-for-coding.
const DefaultModel = "kimi-for-coding"

// maxNesting is how deep SubagentEvent envelopes are unwrapped (a
// subagent's subagent forwards its events wrapped twice).
const maxNesting = 8

// Parser turns the lines of one Kimi CLI wire.jsonl file into entries.
// The session and the subagent come from the file's path; nothing else is
// carried from line to line, but lines must still be given in file order
// from the first (the tailer replays a file to rebuild a parser). A
// Parser is not safe for concurrent use; use one per file.
type Parser struct {
	cfg parse.Config
	log *slog.Logger

	s   jsonl.Scanner // the line
	sub jsonl.Scanner // envelope, payload
	el  jsonl.Scanner // token_usage, user_input, function, return_value
	rec record
	env envelope
	pay payload
	cnt counts

	session string // the session directory's name
	agent   string // the subagent's id, for subagents/<id>/wire.jsonl
}

// New returns a parser for one wire.jsonl file. cfg.Path names the file:
// sessions/<work-dir hash>/<session>/wire.jsonl is session <session>,
// <session>/subagents/<agent>/wire.jsonl the subagent <agent> of
// <session>; a file of another name is the session of its stem.
func New(cfg parse.Config) *Parser {
	p := &Parser{cfg: cfg, log: cfg.Log().With("component", "kimi")}
	base := filepath.Base(cfg.Path)
	if base != "wire.jsonl" {
		p.session = strings.TrimSuffix(base, ".jsonl")
		return p
	}
	dir := filepath.Dir(cfg.Path)
	p.session = filepath.Base(dir)
	if up := filepath.Dir(dir); filepath.Base(up) == "subagents" {
		p.agent = p.session
		p.session = filepath.Base(filepath.Dir(up))
	}
	return p
}

// Format returns [schema.FormatKimi].
func (p *Parser) Format() schema.Format { return schema.FormatKimi }

// Parse appends the entries of one line to dst and returns the extended
// slice: one entry per record. A value that is not an object, invalid
// JSON, a timestamp that is neither a number of seconds nor RFC 3339, a
// message, payload or token_usage of the wrong JSON type, or a token
// counter that is not an integer in 0…10¹² give a *schema.DecodeError;
// the entries decoded before the fault are returned with it (for a bad
// field, the entry itself without it). The parser stays usable for the
// next line. Entries never alias line.Bytes.
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
	e := parse.Base(&p.cfg, schema.FormatKimi, line, obj)
	if p.cfg.Raw {
		e.Raw = append([]byte(nil), span...)
	}
	e.EntryID = parse.LineID(line.Number, obj)
	e.SessionID = p.session
	e.AgentID = p.agent
	e.Sidechain = p.agent != ""
	e.Kind = schema.KindEvent
	if r.typ.Equal("metadata") {
		// The header: {"type": "metadata", "protocol_version": …}.
		e.Kind, e.Subtype = schema.KindSession, "metadata"
		return e, err
	}
	if r.ts.Kind() != jsonl.Invalid && !r.ts.IsNull() {
		var ok bool
		if e.TS, ok = seconds(r.ts); !ok {
			fail(start+r.tsOff, fmt.Errorf("%w: timestamp", parse.ErrBadField))
		}
	}
	switch r.message.Kind() {
	case jsonl.Object:
	case jsonl.Invalid, jsonl.Null:
		return e, err
	default:
		fail(start+r.msgOff, fmt.Errorf("%w: message", parse.ErrBadField))
		return e, err
	}
	p.message(&e, r.message.Raw(), start+r.msgOff, 0, fail)
	return e, err
}

// seconds decodes a record's timestamp: Python's time.time(), a number of
// seconds with a fraction, kept to the microsecond; an RFC 3339 string is
// taken too. ok is false for any other value and for a time outside the
// years 0 to 9999.
func seconds(v jsonl.Value) (time.Time, bool) {
	if v.Kind() == jsonl.String {
		return parse.Time(v)
	}
	f, ok := v.Float()
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 253402300799 {
		return time.Time{}, false
	}
	t := time.UnixMicro(int64(math.Round(f * 1e6))).UTC()
	if t.Year() < 0 || t.Year() > 9999 {
		return time.Time{}, false
	}
	return t, true
}

// message fills e from a wire message envelope (raw) found at off in the
// line, at the given SubagentEvent nesting depth.
func (p *Parser) message(e *schema.Entry, raw []byte, off, depth int, fail func(int, error)) {
	env := &p.env
	if !scanEnvelope(&p.sub, raw, env) {
		fail(off, fmt.Errorf("%w: message", parse.ErrBadField))
		return
	}
	typ := parse.Str(env.typ)
	if depth == 0 {
		e.Subtype = typ
	}
	pay := &p.pay
	switch env.payload.Kind() {
	case jsonl.Object:
		if !scanPayload(&p.sub, env.payload.Raw(), pay) {
			fail(off+env.payloadOff, fmt.Errorf("%w: message.payload", parse.ErrBadField))
			return
		}
	case jsonl.Invalid, jsonl.Null:
		*pay = payload{}
	default:
		fail(off+env.payloadOff, fmt.Errorf("%w: message.payload", parse.ErrBadField))
		return
	}
	poff := off + env.payloadOff

	if depth > 0 {
		// A subagent's event forwarded to its parent: only its usage
		// counts here (its own wire.jsonl holds the rest, and the same
		// usage under the same key).
		switch typ {
		case "StatusUpdate":
			p.usage(e, poff, fail)
		case "SubagentEvent":
			p.subagent(e, poff, depth, fail)
		}
		return
	}
	switch typ {
	case "TurnBegin", "SteerInput":
		e.Kind, e.Role = schema.KindMessage, schema.RoleUser
		if p.cfg.Text {
			e.Text = p.userText(pay.userInput)
		}
	case "StatusUpdate":
		p.usage(e, poff, fail)
	case "ContentPart":
		if p.cfg.Text && pay.partType.Equal("text") {
			e.Text = parse.Str(pay.text)
		}
	case "ToolCall":
		c := schema.ToolCall{ID: parse.Str(pay.id)}
		if pay.function.Kind() == jsonl.Object {
			name, args := p.pair(pay.function.Raw(), "name", "arguments")
			c.Name = parse.Str(name)
			if p.cfg.Text {
				c.Input = parse.RawJSON(args)
			}
		}
		e.ToolCalls = []schema.ToolCall{c}
	case "ToolResult":
		e.Kind, e.Role = schema.KindMessage, schema.RoleTool
		r := schema.ToolResult{ToolCallID: parse.Str(pay.toolCallID)}
		if pay.returnVal.Kind() == jsonl.Object {
			isErr, out := p.pair(pay.returnVal.Raw(), "is_error", "output")
			b, ok := isErr.Bool()
			r.IsError = ok && b
			if p.cfg.Text {
				r.Content = parse.Str(out)
			}
		}
		e.ToolResults = []schema.ToolResult{r}
	case "CompactionBegin":
		e.Kind = schema.KindCompaction
	case "SubagentEvent":
		p.subagent(e, poff, depth, fail)
	}
}

// subagent fills e from a SubagentEvent payload (just scanned, found at
// off): the subagent's id and type, and the usage of the event it wraps.
func (p *Parser) subagent(e *schema.Entry, off, depth int, fail func(int, error)) {
	pay := &p.pay
	e.Sidechain = true
	if id := parse.Str(pay.agentID); id != "" {
		e.AgentID = id
	}
	if t := parse.Str(pay.agentType); t != "" {
		e.AgentType = t
	}
	if depth >= maxNesting {
		return
	}
	switch pay.event.Kind() {
	case jsonl.Object:
		// The nested envelope is copied out: scanning it reuses the
		// scanners the payload's values alias.
		raw := append([]byte(nil), pay.event.Raw()...)
		p.message(e, raw, off+pay.eventOff, depth+1, fail)
	case jsonl.Invalid, jsonl.Null:
	default:
		fail(off+pay.eventOff, fmt.Errorf("%w: message.payload.event", parse.ErrBadField))
	}
}

// usage sets e's usage from a StatusUpdate payload (just scanned, found at
// off) whose token_usage has a non-zero counter: e becomes the step's
// assistant message. TokenUsage's counters are disjoint (input_other
// excludes the cache reads and writes), as sessionpipe counts them.
func (p *Parser) usage(e *schema.Entry, off int, fail func(int, error)) {
	pay := &p.pay
	switch pay.tokenUsage.Kind() {
	case jsonl.Object:
	case jsonl.Invalid, jsonl.Null:
		return
	default:
		fail(off+pay.usageOff, fmt.Errorf("%w: token_usage", parse.ErrBadField))
		return
	}
	base := off + pay.usageOff
	c := &p.cnt
	if !scanUsage(&p.el, pay.tokenUsage.Raw(), c) {
		fail(base, fmt.Errorf("%w: token_usage", parse.ErrBadField))
		return
	}
	var n [4]int64
	for i, v := range c.vals {
		x, ok := parse.Count(v)
		if !ok {
			fail(base+c.offs[i], parse.CountError(v, "token_usage."+usageNames[i]))
			return
		}
		n[i] = x
	}
	u := schema.Usage{Input: n[0], Output: n[1], CacheRead: n[2], CacheWrite: n[3]}
	if u.Total() == 0 {
		return
	}
	id := parse.Str(pay.messageID)
	e.Kind, e.Role = schema.KindMessage, schema.RoleAssistant
	e.MessageID = id
	e.Model = DefaultModel
	e.Usage = &u
	// The key holds the counters: a provider's response id need not be
	// unique (an OpenAI-compatible local server may reuse them), and a
	// step's usage is written once with its own counters. A record
	// without an id is known by its timestamp, which a fork's copy keeps.
	var b []byte
	b = append(b, "kimi-cli:"...)
	if id != "" {
		b = append(b, id...)
	} else {
		b = append(b, '@')
		b = append(b, p.rec.ts.Raw()...)
	}
	for _, x := range n {
		b = append(b, ':')
		b = strconv.AppendInt(b, x, 10)
	}
	e.UsageKey = string(b)
}

// userText returns the text of a TurnBegin's user_input: a string, or the
// text parts of a list of content parts, one per line.
func (p *Parser) userText(v jsonl.Value) string {
	switch v.Kind() {
	case jsonl.String:
		return parse.Str(v)
	case jsonl.Array:
	default:
		return ""
	}
	s := &p.el
	s.Reset(v.Raw())
	if !s.EnterArray() {
		return ""
	}
	var b []byte
	for s.NextElem() {
		if s.Peek() != jsonl.Object || !s.EnterObject() {
			s.Skip()
			continue
		}
		var typ, text jsonl.Value
		for s.NextField() {
			switch string(s.Key()) {
			case "type":
				typ = s.Value()
			case "text":
				text = s.Value()
			}
		}
		if typ.Equal("text") && text.Kind() == jsonl.String {
			if len(b) > 0 {
				b = append(b, '\n')
			}
			b = text.AppendText(b)
		}
	}
	return string(b)
}

// pair returns the values of two named fields of an object (raw).
func (p *Parser) pair(raw []byte, a, b string) (va, vb jsonl.Value) {
	s := &p.el
	s.Reset(raw)
	if !s.EnterObject() {
		return va, vb
	}
	for s.NextField() {
		switch string(s.Key()) {
		case a:
			va = s.Value()
		case b:
			vb = s.Value()
		}
	}
	return va, vb
}
