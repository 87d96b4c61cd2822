package trajectory

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// TraceSchema is the traceSchema of every trajectory line; detection
// keys on it.
const TraceSchema = "openclaw-trajectory"

// SubtypeRunTotal is the Subtype of a counted model.completed: its Usage
// is a run's total over its model calls, not one call's.
const SubtypeRunTotal = "run_total"

// Parser turns the lines of one trajectory file into entries. Lines must
// be given in file order from the first line: the transcript path and the
// counting decision are per-file state. A Parser is not safe for
// concurrent use; use one per file.
type Parser struct {
	cfg parse.Config
	log *slog.Logger

	s   jsonl.Scanner // the line
	sub jsonl.Scanner // nested objects
	rec record
	dat data
	use usage

	fallback string // session id of lines without sessionId and traceId

	// transcripts are the paths the session's transcript may have: beside
	// the trajectory, and as session.started names it.
	transcripts []string
	decided     bool // the counting decision is made
	counts      bool // no transcript was found: the run totals count

	promptRun string // run id of the last prompt counted as user input
}

// New returns a parser for one trajectory file. cfg.Path names the file:
// it gives the session id of lines without one, and the transcript beside
// it (see the package doc).
func New(cfg parse.Config) *Parser {
	p := &Parser{cfg: cfg, log: cfg.Log().With("component", "trajectory")}
	p.fallback = sessionFromPath(cfg.Path)
	if t, ok := besideTranscript(cfg.Path); ok {
		p.transcripts = append(p.transcripts, t)
	}
	return p
}

// Format returns [schema.FormatTrajectory].
func (p *Parser) Format() schema.Format { return schema.FormatTrajectory }

// Parse appends the entries of one line to dst and returns the extended
// slice: one entry per JSON object on the line. A value that is not an
// object, invalid JSON, a ts that is not RFC 3339, a data or usage that is
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
		var e schema.Entry
		err := p.entry(&e, line, obj)
		return append(dst, e), err
	})
}

// entry builds the entry of the record just scanned. The returned error
// locates a bad field; the entry is complete apart from that field.
func (p *Parser) entry(e *schema.Entry, line jsonl.Line, obj int) error {
	r := &p.rec
	*e = parse.Base(&p.cfg, schema.FormatTrajectory, line, obj)
	e.EntryID = parse.LineID(line.Number, obj)
	if p.cfg.Raw {
		e.Raw = append([]byte(nil), p.s.Span()...)
	}
	var err error
	fail := func(off int, ferr error) {
		if err == nil {
			err = parse.Fail(&p.cfg, line, off, ferr)
		}
	}
	if r.ts.Kind() != jsonl.Invalid && !r.ts.IsNull() {
		var ok bool
		if e.TS, ok = parse.Time(r.ts); !ok {
			fail(r.tsOff, fmt.Errorf("%w: ts", parse.ErrBadField))
		}
	}
	e.SessionID = parse.Str(r.sessionID)
	if e.SessionID == "" {
		e.SessionID = parse.Str(r.traceID)
	}
	if e.SessionID == "" {
		e.SessionID = p.fallback
	}
	e.Subtype = parse.Str(r.typ)
	e.CWD = parse.Str(r.workspace)
	e.Model = parse.Str(r.modelID)
	e.Provider = parse.Str(r.provider)
	e.RequestID = parse.Str(r.runID)
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
	if hasData {
		if f := parse.Str(d.sessionFile); filepath.IsAbs(f) && strings.HasSuffix(f, ".jsonl") {
			p.addTranscript(f)
		}
	}

	switch {
	case r.typ.Equal("session.started"):
		e.Kind = schema.KindSession
	case r.typ.Equal("prompt.submitted"):
		if p.cfg.Text && hasData {
			e.Text = parse.Str(d.prompt)
			if e.Text == "" {
				e.Text = parse.Str(d.text)
			}
		}
		switch {
		case !p.counted():
			e.Meta = true
		case e.RequestID != "" && e.RequestID == p.promptRun:
			// A run retried in a new attempt submits its prompt again:
			// one user input.
			e.Kind, e.Role, e.Meta = schema.KindMessage, schema.RoleUser, true
		default:
			e.Kind, e.Role = schema.KindMessage, schema.RoleUser
			p.promptRun = e.RequestID
		}
	case r.typ.Equal("model.completed") && hasData:
		if ferr := p.completed(e, d, r.dataOff); ferr != nil {
			fail(ferr.off, ferr.err)
		}
	}
	return err
}

// fieldError is a bad field found in a nested object, at off in the line.
type fieldError struct {
	off int
	err error
}

// completed fills a model.completed entry: a run total where the file's
// runs count (see the package doc), else an event.
func (p *Parser) completed(e *schema.Entry, d *data, dataOff int) *fieldError {
	e.StopReason = parse.Str(d.stopReason)
	if p.cfg.Text && d.texts.Kind() == jsonl.Array {
		e.Text = p.joinTexts(d.texts.Raw())
	}
	var u schema.Usage
	var bad *fieldError
	switch d.usage.Kind() {
	case jsonl.Object:
		u, bad = p.usage(d.usage.Raw(), dataOff+d.usageOff)
	case jsonl.Invalid, jsonl.Null:
	default:
		bad = &fieldError{dataOff + d.usageOff, fmt.Errorf("%w: data.usage", parse.ErrBadField)}
	}
	if bad != nil || u.Total() == 0 || !p.counted() {
		return bad
	}
	e.Kind, e.Role, e.Subtype = schema.KindMessage, schema.RoleAssistant, SubtypeRunTotal
	e.Usage = &u
	e.UsageKey = usageKey(e)
	return nil
}

// usage decodes the counters of a usage object found at off in the line.
func (p *Parser) usage(raw []byte, off int) (schema.Usage, *fieldError) {
	u := &p.use
	if !scanUsage(&p.sub, raw, u) {
		return schema.Usage{}, &fieldError{off, fmt.Errorf("%w: data.usage", parse.ErrBadField)}
	}
	var out schema.Usage
	dst := [4]*int64{&out.Input, &out.Output, &out.CacheRead, &out.CacheWrite}
	names := [4]string{"input", "output", "cacheRead", "cacheWrite"}
	for i, v := range [4]jsonl.Value{u.input, u.output, u.cacheRead, u.cacheWrite} {
		n, ok := parse.Count(v)
		if !ok {
			return schema.Usage{}, &fieldError{off + u.offs[i], parse.CountError(v, "data.usage."+names[i])}
		}
		*dst[i] = n
	}
	return out, nil
}

// joinTexts joins the strings of an assistantTexts array, one per line.
func (p *Parser) joinTexts(raw []byte) string {
	s := &p.sub
	s.Reset(raw)
	if !s.EnterArray() {
		return ""
	}
	var b []byte
	for s.NextElem() {
		v := s.Value()
		if v.Kind() != jsonl.String {
			continue
		}
		if len(b) > 0 {
			b = append(b, '\n')
		}
		b = v.AppendText(b)
	}
	return string(b)
}

// usageKey identifies one run attempt's total: the session, the run and
// the time of its model.completed (a run retried in a new attempt writes
// another model.completed under the same run id); without a run id or a
// time, the entry id stands for them.
func usageKey(e *schema.Entry) string {
	run, at := e.RequestID, e.EntryID
	if !e.TS.IsZero() {
		at = e.TS.UTC().Format(time.RFC3339Nano)
	}
	if run == "" {
		run = e.EntryID
	}
	return "openclaw-trajectory:" + e.SessionID + ":" + run + ":" + at
}

// counted reports whether the file's runs count: no transcript of the
// session is on disk. It is decided once, at the first call.
func (p *Parser) counted() bool {
	if !p.decided {
		p.decided = true
		p.counts = true
		for _, t := range p.transcripts {
			if transcriptOnDisk(t) {
				p.counts = false
				break
			}
		}
		p.log.Debug("trajectory counting decided", "path", p.cfg.Path, "counts", p.counts, "transcripts", p.transcripts)
	}
	return p.counts
}

func (p *Parser) addTranscript(path string) {
	for _, t := range p.transcripts {
		if t == path {
			return
		}
	}
	p.transcripts = append(p.transcripts, path)
}
