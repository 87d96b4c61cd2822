package codex

import (
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Log attribute keys.
const (
	keyPath = "path"
	keyLine = "line"
)

// DefaultProvider is the provider given to usage when the session header
// names none.
const DefaultProvider = "openai"

// Parser turns the lines of one rollout file into entries. Lines must be
// given in file order from the first line: the session header, the current
// model, the cumulative counters and the replay window are per-file state.
// A Parser is not safe for concurrent use; use one per file.
type Parser struct {
	cfg parse.Config
	log *slog.Logger

	s   jsonl.Scanner // the line
	sub jsonl.Scanner // nested values captured from the line
	rec record
	buf []byte // scratch for unescaped text

	fallback string // session id before or without a session_meta
	session  string // payload.id of the first session_meta
	header   bool   // the first session_meta has been read
	provider string // model_provider of the header
	model    string // model of the latest turn_context (or token_count)

	spawned bool // the header names a thread_spawn parent: a subagent file

	// The replay window of a child file (see the package doc).
	replay bool
	cutoff int64 // Unix second of the child's header line

	// The replayed prefix of a paginated subagent file: lines whose
	// ordinal is below ordStart are the parent's history.
	ordReplay bool
	ordStart  int64

	// inherits is set when the header names a parent thread or a history
	// base: the file's cumulative counters may start from the totals of
	// another file, so its first total is no delta by itself.
	inherits bool

	prev    counters // the last cumulative total
	hasPrev bool
}

// New returns a parser for one rollout file. cfg.Path names the file; it
// gives the session id of lines before, or without, a session_meta.
func New(cfg parse.Config) *Parser {
	return &Parser{cfg: cfg, log: cfg.Log().With("component", "codex"), fallback: fallbackSession(cfg.Path)}
}

// Format returns [schema.FormatCodex].
func (p *Parser) Format() schema.Format { return schema.FormatCodex }

// Parse appends the entries of one line to dst and returns the extended
// slice: one entry per JSON object on the line. A value that is not an
// object, invalid JSON, a timestamp that is not RFC 3339 or a token counter
// that is not an integer give a *schema.DecodeError; the entries decoded
// before the fault are returned with it (for a bad timestamp or counter,
// the entry itself, without the bad value). The parser stays usable for
// the next line. Entries never alias line.Bytes.
func (p *Parser) Parse(dst []schema.Entry, line jsonl.Line) ([]schema.Entry, error) {
	s := &p.s
	return parse.Objects(&p.cfg, s, line, dst, func(dst []schema.Entry, obj, _ int) ([]schema.Entry, error) {
		if !scanRecord(s, &p.rec) {
			return dst, parse.ScanError(&p.cfg, line, s)
		}
		var e schema.Entry
		err := p.entry(&e, line, obj)
		return append(dst, e), err
	})
}

// entry builds the entry of the record just scanned. The returned error
// locates a bad field; the entry is complete apart from that field.
func (p *Parser) entry(e *schema.Entry, line jsonl.Line, obj int) error {
	r := &p.rec
	*e = parse.Base(&p.cfg, schema.FormatCodex, line, obj)
	e.EntryID = parse.LineID(line.Number, obj)
	if p.cfg.Raw {
		e.Raw = append([]byte(nil), p.s.Span()...)
	}

	var err error
	hasTS := false
	if r.ts.Kind() != jsonl.Invalid && !r.ts.IsNull() {
		if e.TS, hasTS = parse.Time(r.ts); !hasTS {
			err = parse.Fail(&p.cfg, line, r.tsOff, parse.ErrBadField)
		}
	}

	// The first session_meta opens the replay window of a child file; any
	// later line is a replay while the window is open.
	replayed := false
	if r.typ.Equal("session_meta") && !p.header {
		p.sessionMeta(e, &r.pl, true)
		if !p.openOrdinalReplay(&r.pl) {
			p.openReplay(e, hasTS, &r.pl)
		}
	} else {
		replayed = p.replayed(e.TS, hasTS, r.ordinal)
		switch {
		case r.typ.Equal("session_meta"):
			p.sessionMeta(e, &r.pl, false)
		case r.typ.Equal("response_item"):
			p.responseItem(e, &r.pl)
		case r.typ.Equal("event_msg"):
			if ferr := p.eventMsg(e, line, &r.pl, replayed); ferr != nil && err == nil {
				err = ferr
			}
		case r.typ.Equal("turn_context"):
			p.turnContext(e, &r.pl)
		case r.typ.Equal("compacted"):
			e.Kind = schema.KindCompaction
			e.Subtype = "compacted"
			if p.cfg.Text {
				e.Text = parse.Str(r.pl.message)
			}
		default:
			e.Kind = schema.KindEvent
			e.Subtype = parse.Str(r.typ)
		}
	}
	if replayed {
		e.Copy = true
	}
	if p.spawned {
		// A subagent's conversation: its prompts come from the parent
		// agent, not from the human.
		e.Sidechain = true
		if e.Kind == schema.KindMessage && e.Role == schema.RoleUser {
			e.Meta = true
		}
	}
	e.SessionID = p.sessionID()
	return err
}

// sessionID returns the session id of the file so far.
func (p *Parser) sessionID() string {
	if p.session != "" {
		return p.session
	}
	return p.fallback
}

// sessionMeta fills a session entry. first marks the file's own header,
// which fixes the session id and provider; a later session_meta (the
// parent's header replayed into a child file) only describes itself.
func (p *Parser) sessionMeta(e *schema.Entry, pl *payload, first bool) {
	e.Kind = schema.KindSession
	e.Subtype = "session_meta"
	e.CWD = parse.Str(pl.cwd)
	e.AgentVersion = parse.Str(pl.cliVersion)
	e.Provider = parse.Str(pl.provider)
	e.GitBranch = p.gitBranch(pl.git)
	var spawned bool
	e.ParentSessionID, spawned = p.parentSession(pl)
	if !first {
		return
	}
	p.spawned = spawned
	p.header = true
	if id := parse.Str(pl.id); id != "" {
		p.session = id
	}
	p.provider = e.Provider
	p.inherits = e.ParentSessionID != "" || pl.historyBase.Kind() == jsonl.Object
	if e.ParentSessionID == "" {
		// A paginated fork or continuation names the thread whose
		// history it starts from (itself for a later page of a thread).
		if base := p.historyBaseThread(pl.historyBase); base != p.session {
			e.ParentSessionID = base
		}
	}
}

// historyBaseThread returns history_base.thread_id, or "".
func (p *Parser) historyBaseThread(base jsonl.Value) string {
	if base.Kind() != jsonl.Object {
		return ""
	}
	s := &p.sub
	s.Reset(base.Raw())
	return findString(s, "thread_id")
}

// openOrdinalReplay opens the replay of a paginated subagent file, whose
// header says where its own lines start: lines with a lower ordinal are
// the parent's history. It reports false for a header without
// subagent_history_start_ordinal (legacy files: see openReplay).
func (p *Parser) openOrdinalReplay(pl *payload) bool {
	n, ok := parse.Int(pl.historyStart)
	if !ok || n < 0 {
		return false
	}
	p.ordReplay, p.ordStart = true, n
	return true
}

// openReplay opens the replay window when the file's header names a
// parent: the file is a fork, branch or spawned subagent.
func (p *Parser) openReplay(e *schema.Entry, hasTS bool, pl *payload) {
	if e.ParentSessionID == "" {
		return
	}
	switch {
	case hasTS:
		p.cutoff = e.TS.Unix()
	default:
		created, ok := parse.Time(pl.timestamp)
		if !ok {
			return // no time to bound the window by: rely on UsageKey
		}
		p.cutoff = created.Unix()
	}
	p.replay = true
}

// replayed reports whether a line stamped ts is part of the parent history
// replayed at the start of a child file. In a paginated subagent file it
// is the line's ordinal that tells, below the header's
// subagent_history_start_ordinal (a line without an ordinal there is the
// child's own). Otherwise the window closes for good at the first line
// stamped after the child's creation second, and a line without a
// timestamp inside the window counts as replayed.
func (p *Parser) replayed(ts time.Time, hasTS bool, ordinal jsonl.Value) bool {
	if p.ordReplay {
		n, ok := parse.Int(ordinal)
		return ok && n < p.ordStart
	}
	if !p.replay {
		return false
	}
	if hasTS && ts.Unix() > p.cutoff {
		p.replay = false
		return false
	}
	return true
}

// gitBranch returns git.branch of a session header.
func (p *Parser) gitBranch(git jsonl.Value) string {
	if git.Kind() != jsonl.Object {
		return ""
	}
	s := &p.sub
	s.Reset(git.Raw())
	var branch string
	if s.EnterObject() {
		for s.NextField() {
			if string(s.Key()) == "branch" {
				branch = parse.Str(s.Value())
			}
		}
	}
	return branch
}

// parentSession returns the parent thread a session header names:
// source.subagent.thread_spawn.parent_thread_id (spawned is then true),
// else forked_from_id, else a top-level parent_thread_id (older headers,
// and newer ones: with thread_source "subagent", spawned is true).
func (p *Parser) parentSession(pl *payload) (id string, spawned bool) {
	if pl.source.Kind() == jsonl.Object {
		s := &p.sub
		s.Reset(pl.source.Raw())
		if id := findString(s, "subagent", "thread_spawn", "parent_thread_id"); id != "" {
			return id, true
		}
	}
	if pl.threadSource.Equal("subagent") {
		if id := parse.Str(pl.parent); id != "" {
			return id, true
		}
	}
	if id := parse.Str(pl.forkedFrom); id != "" {
		return id, false
	}
	return parse.Str(pl.parent), false
}

// findString walks the nested objects named by path from the scanner's
// first value and returns the string at its end, or "".
func findString(s *jsonl.Scanner, path ...string) string {
	for _, key := range path {
		if !s.EnterObject() {
			return ""
		}
		found := false
		for s.NextField() {
			if string(s.Key()) == key {
				found = true
				break
			}
		}
		if !found {
			return ""
		}
	}
	return parse.Str(s.Value())
}

// turnContext fills a turn_context entry and remembers its model.
func (p *Parser) turnContext(e *schema.Entry, pl *payload) {
	e.Kind = schema.KindEvent
	e.Subtype = "turn_context"
	e.RequestID = parse.Str(pl.turnID)
	e.CWD = parse.Str(pl.cwd)
	if m := parse.Str(pl.model); m != "" {
		p.model = m
	}
	e.Model = p.model
}

// fallbackSession derives a session id from a file path: the thread id
// that ends a rollout-<time>-<thread>.jsonl name (of a subagent rollout
// named rollout-<time>-<parent>_<child>.jsonl, the child's), else the name
// without its extension, else "unknown".
func fallbackSession(path string) string {
	if path == "" {
		return "unknown"
	}
	name := filepath.Base(path)
	name = strings.TrimSuffix(name, filepath.Ext(name))
	const idLen = 36 // a UUID
	if strings.HasPrefix(name, "rollout-") && len(name) > len("rollout-")+idLen {
		id := name[len(name)-idLen:]
		if sep := name[len(name)-idLen-1]; isUUID(id) && (sep == '-' || sep == '_') {
			return id
		}
	}
	if name == "" || name == "." || name == string(filepath.Separator) {
		return "unknown"
	}
	return name
}

// isUUID reports whether s has the 8-4-4-4-12 hex form of a UUID.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}
