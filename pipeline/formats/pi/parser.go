package pi

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// UnknownSession is the session id of entries read without a session
// header, without a Nexus sessionId field and without a file path: a
// stream whose session cannot be named.
const UnknownSession = "unknown"

// OpenClawProvider is the provider of the assistant messages that OpenClaw
// writes itself (models "gateway-injected" and "delivery-mirror"): they
// have Meta set, as no model wrote them.
const OpenClawProvider = "openclaw"

// Log attribute keys.
const (
	keyPath = "path"
	keyLine = "line"
	keyType = "entry_type"
)

// maxInterned bounds the strings a Parser shares between entries (model,
// provider and tool names, stop reasons, subtypes).
const maxInterned = 4096

// Parser reads the lines of one pi, OpenClaw, clawdbot or Nexus transcript
// (see the package documentation for the mapping). It keeps the per-file
// state the format needs: the session id of the header (or of the file
// name) and the default model set by the header, model_change entries and
// OpenClaw model snapshots. Lines must be given in file order from the
// first line.
//
// A Parser is not safe for concurrent use; create one per file.
type Parser struct {
	cfg parse.Config
	log *slog.Logger

	s    jsonl.Scanner // the line
	sub  jsonl.Scanner // content read after the object (role known late)
	line []byte        // the line being parsed, for error offsets
	r    rec           // fields of the current object

	pathSession string // SessionIDFromPath(cfg.Path)
	session     string // header id, "" before a header
	lastSession string // last Nexus sessionId seen, shared between entries
	model       string // default model
	provider    string // default provider
	prevID      string // EntryID of the previous entry
	v1          bool   // the header has no version: entries have no ids

	// Content of the current object's message.
	text    []byte
	hasText bool
	calls   []schema.ToolCall
	atts    []schema.Attachment

	scratch []byte
	strs    map[string]string
}

// New returns a Parser for one file. cfg.Path names the file: a file
// without a session header takes its session id from it
// ([SessionIDFromPath]).
func New(cfg parse.Config) *Parser {
	return &Parser{
		cfg:         cfg,
		log:         cfg.Log().With("component", "pi"),
		pathSession: SessionIDFromPath(cfg.Path),
		strs:        make(map[string]string),
	}
}

// Format returns [schema.FormatPi].
func (p *Parser) Format() schema.Format { return schema.FormatPi }

// Parse appends the entries of one line to dst: one per JSON object, two
// for the lines where pi forgot a newline between two entries. On bad
// input (invalid JSON, a value that is not an object, a missing type, a
// field of the wrong JSON type, an unparsable timestamp) it returns the
// entries of the objects before the fault and a *schema.DecodeError
// locating it; the Parser stays usable for the next line. Unknown entry
// types are not errors. Entries never alias line.Bytes.
func (p *Parser) Parse(dst []schema.Entry, line jsonl.Line) ([]schema.Entry, error) {
	s := &p.s
	s.Reset(line.Bytes)
	p.line = line.Bytes
	defer func() { p.line = nil }()
	var countErr error // the first bad token counter: its entry is kept
	for obj := 0; s.More(); obj++ {
		start := s.Offset()
		if !s.EnterObject() {
			if s.Err() == nil && s.Peek() == jsonl.Invalid {
				s.Skip() // reports the syntax error
			}
			if s.Err() != nil {
				return dst, parse.ScanError(&p.cfg, line, s)
			}
			return dst, parse.Fail(&p.cfg, line, start, parse.ErrNotObject)
		}
		p.reset()
		p.collect(s)
		if s.Err() != nil {
			return dst, parse.ScanError(&p.cfg, line, s)
		}
		var e schema.Entry
		if err := p.build(&e, line, obj, start); err != nil {
			return dst, err
		}
		if p.cfg.Raw {
			e.Raw = append([]byte(nil), s.Span()...)
		}
		dst = append(dst, e)
		if p.r.countErr != nil && countErr == nil {
			countErr = parse.Fail(&p.cfg, line, p.r.countErrOff, p.r.countErr)
		}
	}
	if s.Err() != nil {
		return dst, parse.ScanError(&p.cfg, line, s)
	}
	return dst, countErr
}

// reset clears the state of the previous object.
func (p *Parser) reset() {
	p.r = rec{}
	p.text = p.text[:0]
	p.hasText = false
	p.calls = p.calls[:0]
	p.atts = p.atts[:0]
}

// offset returns the offset in the line of a value read from it.
func (p *Parser) offset(v jsonl.Value) int {
	if v.Kind() == jsonl.Invalid {
		return 0
	}
	return cap(p.line) - cap(v.Raw())
}

// bad records a field of the wrong JSON type or with an unparsable value.
// Only the first fault of an object is kept.
func (p *Parser) bad(v jsonl.Value, field string) {
	if p.r.err == nil {
		p.r.errOff = p.offset(v)
		p.r.err = fmt.Errorf("%w: %s", parse.ErrBadField, field)
	}
}

// str returns v if it is a string, a zero Value if it is null or absent,
// and records a bad field otherwise.
func (p *Parser) str(v jsonl.Value, field string) jsonl.Value {
	s, ok := parse.OptString(v)
	if !ok {
		p.bad(v, field)
	}
	return s
}

// textField sets e.Text to a copy of the string field v, named field, when
// text is wanted; v of any other kind but null is a bad field either way.
func (p *Parser) textField(e *schema.Entry, v jsonl.Value, field string) {
	if s := p.str(v, field); p.cfg.Text {
		e.Text = copyStr(s)
	}
}

// copyStr returns a copy of the text of a string value ("" for others).
func copyStr(v jsonl.Value) string {
	if v.Kind() != jsonl.String || len(v.Raw()) == 0 {
		return ""
	}
	return v.String()
}

// bytesOf returns the unescaped text of a string value without allocating
// when it holds no escapes. The result is valid until the next call.
func (p *Parser) bytesOf(v jsonl.Value) []byte {
	if v.Kind() != jsonl.String {
		return nil
	}
	if v.Plain() {
		return v.Raw()
	}
	p.scratch = v.AppendText(p.scratch[:0])
	return p.scratch
}

// intern returns the text of a string value, shared with earlier entries
// when it has been seen before: model and tool names repeat on every line.
func (p *Parser) intern(v jsonl.Value) string {
	if v.Kind() != jsonl.String || len(v.Raw()) == 0 {
		return ""
	}
	return p.internBytes(p.bytesOf(v))
}

func (p *Parser) internBytes(b []byte) string {
	if s, ok := p.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(p.strs) < maxInterned {
		p.strs[s] = s
	}
	return s
}

// subtype returns the interned "<kind>:<name>" subtype, or kind alone when
// name is empty.
func (p *Parser) subtype(kind string, name jsonl.Value) string {
	n := p.bytesOf(name)
	if len(n) == 0 {
		return kind
	}
	b := make([]byte, 0, 64)
	b = append(b, kind...)
	b = append(b, ':')
	b = append(b, n...)
	return p.internBytes(b)
}

// debug logs a per-line event when debug logging is on.
func (p *Parser) debug(msg string, line jsonl.Line, attrs ...slog.Attr) {
	ctx := context.Background()
	if !p.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	attrs = append(attrs, slog.String(keyPath, p.cfg.Path), slog.Int64(keyLine, line.Number))
	p.log.LogAttrs(ctx, slog.LevelDebug, msg, attrs...)
}
