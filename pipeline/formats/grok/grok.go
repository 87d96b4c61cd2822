package grok

import (
	"fmt"
	"hash/fnv"
	"log/slog"
	"math"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// SubtypeTurnTotal is the Subtype of an entry carrying a model's usage over
// one prompt turn (a turn_completed update): a sum over the turn's model
// calls, not one call.
const SubtypeTurnTotal = "turn_total"

// ticksPerUSD is Grok's cost unit: costUsdTicks / 10^10 is US dollars.
const ticksPerUSD = 1e10

// Parser turns the lines of one updates.jsonl file into entries. Lines
// must be given in file order from the first line: the current model, the
// prompt being written and the tool calls already counted are per-file
// state. A Parser is not safe for concurrent use; use one per file.
type Parser struct {
	cfg parse.Config
	log *slog.Logger

	s   jsonl.Scanner // the line
	sub jsonl.Scanner // nested values read after the line
	rec record

	dirSession string // the session directory's name
	stem       string // the file's stem, the last fallback
	session    string // the first params.sessionId, when the path names none
	cwd        string // the project directory, from the path

	model     string // the model of the last prompt (user chunk _meta.modelId)
	lastUser  bool   // the previous record was a user_message_chunk
	promptIdx string // the last user chunk's _meta.promptIndex ("" for none)
	replied   bool   // a turn completed since the last user chunk
	calls     map[string]struct{}
	results   map[string]struct{}
}

// New returns a parser for one updates.jsonl file. cfg.Path names the
// file: in Grok's layout, sessions/<url-encoded cwd>/<session>/updates.jsonl
// (or another file of that directory), the directory names the session
// and its parent the project directory. Another path (a copy, a test's
// input.jsonl) takes the session of the first params.sessionId, else the
// file's stem.
func New(cfg parse.Config) *Parser {
	p := &Parser{cfg: cfg, log: cfg.Log().With("component", "grok")}
	if cfg.Path != "" {
		base := filepath.Base(cfg.Path)
		p.stem = strings.TrimSuffix(base, filepath.Ext(base))
		dir := filepath.Dir(cfg.Path)
		// updates.jsonl, or a sibling in a session directory of Grok's
		// layout (sessions/<cwd>/<session>/): the directory names the
		// session, so copies of an update there share its keys.
		if base == "updates.jsonl" || filepath.Base(filepath.Dir(filepath.Dir(dir))) == "sessions" {
			p.dirSession = filepath.Base(dir)
			if proj, err := url.PathUnescape(filepath.Base(filepath.Dir(dir))); err == nil && strings.HasPrefix(proj, "/") {
				p.cwd = proj
			}
		}
	}
	return p
}

// Format returns [schema.FormatGrok].
func (p *Parser) Format() schema.Format { return schema.FormatGrok }

// Parse appends the entries of one line to dst and returns the extended
// slice: one entry per JSON object on the line, but one per model with
// usage for a turn_completed update. A value that is not an object,
// invalid JSON, a timestamp that is neither a number of seconds nor RFC
// 3339, a usage that is not an object, or a token counter that is not an
// integer in 0…10¹² give a *schema.DecodeError; the entries decoded before
// the fault are returned with it (for a bad field, the entry itself
// without it). The parser stays usable for the next line. Entries never
// alias line.Bytes.
func (p *Parser) Parse(dst []schema.Entry, line jsonl.Line) ([]schema.Entry, error) {
	s := &p.s
	return parse.Objects(&p.cfg, s, line, dst, func(dst []schema.Entry, obj, start int) ([]schema.Entry, error) {
		if !scanRecord(s, &p.rec) {
			return dst, parse.ScanError(&p.cfg, line, s)
		}
		return p.entries(dst, line, obj, line.Bytes[start:s.Offset()])
	})
}

// entries appends the entries of the record just scanned; span is its
// JSON text.
func (p *Parser) entries(dst []schema.Entry, line jsonl.Line, obj int, span []byte) ([]schema.Entry, error) {
	r := &p.rec
	u := &r.u
	e := parse.Base(&p.cfg, schema.FormatGrok, line, obj)
	var err error
	fail := func(off int, ferr error) {
		if err == nil {
			err = parse.Fail(&p.cfg, line, off, ferr)
		}
	}
	e.EntryID = parse.Str(r.eventID)
	if e.EntryID == "" {
		// No event id: the content names the record, so a line written
		// twice is one record.
		e.EntryID = contentID(span)
	}
	if p.cfg.Raw {
		e.Raw = append([]byte(nil), span...)
	}
	var ok bool
	if e.TS, ok = timestamp(r.ts); !ok {
		fail(r.tsOff, fmt.Errorf("%w: timestamp", parse.ErrBadField))
	} else if e.TS.IsZero() && r.agentTS.Kind() != jsonl.Invalid && !r.agentTS.IsNull() {
		if e.TS, ok = parse.Time(r.agentTS); !ok {
			fail(r.agentOf, fmt.Errorf("%w: params._meta.agentTimestampMs", parse.ErrBadField))
		}
	}
	if p.session == "" && p.dirSession == "" {
		p.session = parse.Str(r.session)
	}
	e.SessionID = p.sessionID()
	e.CWD = p.cwd
	e.Kind = schema.KindEvent
	e.Subtype = parse.Str(u.kind)
	if e.Subtype == "" {
		e.Subtype = parse.Str(r.method)
	}
	e.RequestID = parse.Str(u.promptID)
	if e.RequestID == "" {
		e.RequestID = parse.Str(r.promptM)
	}

	user := false
	switch {
	case u.kind.Equal("user_message_chunk"):
		user = true
		if m := parse.Str(u.modelID); m != "" {
			p.model = m
		}
		idx := string(u.promptIdx.Raw())
		// The chunks of one prompt (its text, images, resources) are one
		// user input: the first counts, the rest are its continuation.
		// With a promptIndex, a chunk continues the last prompt when it
		// has its index and no turn completed since (other updates may
		// come between); without one, when it follows a user chunk.
		cont := !p.replied && idx == p.promptIdx && (idx != "" || p.lastUser)
		p.promptIdx, p.replied = idx, false
		e.Kind, e.Role, e.Meta = schema.KindMessage, schema.RoleUser, cont
		if p.cfg.Text {
			e.Text = scanText(&p.sub, u.content)
		}
	case u.kind.Equal("agent_message_chunk"), u.kind.Equal("agent_thought_chunk"):
		if p.cfg.Text {
			e.Text = scanText(&p.sub, u.content)
		}
	case u.kind.Equal("tool_call"):
		id := parse.Str(u.toolCallID)
		if !p.seen(&p.calls, id) {
			name := parse.Str(u.toolName)
			if name == "" {
				name = parse.Str(u.title)
			}
			tc := schema.ToolCall{ID: id, Name: name}
			if p.cfg.Text {
				tc.Input = parse.RawJSON(u.rawInput)
			}
			e.ToolCalls = []schema.ToolCall{tc}
		}
	case u.kind.Equal("tool_call_update"):
		st := strings.ToLower(parse.Str(u.status))
		if id := parse.Str(u.toolCallID); (st == "completed" || st == "failed") && !p.seen(&p.results, id) {
			e.Kind, e.Role = schema.KindMessage, schema.RoleTool
			e.ToolResults = []schema.ToolResult{{ToolCallID: id, IsError: st == "failed"}}
		}
	}
	p.lastUser = user
	e.Model = p.model
	e.Provider = provider(e.Model)
	if u.kind.Equal("turn_completed") {
		p.replied = true
		e.StopReason = parse.Str(u.stopReason)
		return p.turn(dst, e, line, err)
	}
	return append(dst, e), err
}

// seen reports whether id was recorded in *set before, and records it. An
// empty id is never seen: without an id, records cannot be told apart.
func (p *Parser) seen(set *map[string]struct{}, id string) bool {
	if id == "" {
		return false
	}
	if *set == nil {
		*set = make(map[string]struct{})
	}
	if _, ok := (*set)[id]; ok {
		return true
	}
	(*set)[id] = struct{}{}
	return false
}

// sessionID is the session directory's name, else the first
// params.sessionId, else the file's stem.
func (p *Parser) sessionID() string {
	switch {
	case p.dirSession != "":
		return p.dirSession
	case p.session != "":
		return p.session
	}
	return p.stem
}

// timestamp decodes the line's timestamp: a number of Unix seconds (a
// number from 10¹¹ up is taken as milliseconds), or an RFC 3339 string.
// No timestamp gives the zero time and ok; ok is false for any other
// value and for a time outside the years 0 to 9999.
func timestamp(v jsonl.Value) (time.Time, bool) {
	switch v.Kind() {
	case jsonl.Invalid, jsonl.Null:
		return time.Time{}, true
	case jsonl.String:
		return parse.Time(v)
	case jsonl.Number:
		f, ok := v.Float()
		if !ok || f < 0 || math.IsInf(f, 0) {
			return time.Time{}, false
		}
		if f >= 1e11 {
			f /= 1000
		}
		if f > 253402300799 { // 9999-12-31T23:59:59Z
			return time.Time{}, false
		}
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(math.Round(frac*1e6))*1e3).UTC(), true
	}
	return time.Time{}, false
}

// contentID names a record without an event id by its bytes: "h<fnv-1a
// 64 in hex>", the same for a line written twice.
func contentID(span []byte) string {
	h := fnv.New64a()
	h.Write(span)
	return "h" + strconv.FormatUint(h.Sum64(), 16)
}

// provider is "xai" for a Grok model, else unknown ("").
func provider(model string) string {
	if strings.HasPrefix(strings.ToLower(model), "grok") {
		return "xai"
	}
	return ""
}
