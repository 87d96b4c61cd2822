package claude

import (
	"log/slog"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Provider is the provider name set on assistant entries.
const Provider = "anthropic"

// SyntheticModel is the model name Claude Code writes on assistant lines it
// generates itself (API errors, "No response requested.", "Invalid API
// key", rate limits). Such lines are events, never model replies: their
// all-zero usage is never counted.
const SyntheticModel = "<synthetic>"

// Parser turns the lines of one Claude Code transcript into entries. It
// keeps the last session id seen (for lines without one) and the content
// ids given out, so lines must be given in file order from the start of
// the file (see formats.Parser). A Parser is not safe for concurrent use.
type Parser struct {
	cfg parse.Config
	log *slog.Logger

	line []byte        // the line being parsed
	s    jsonl.Scanner // walks the line
	sub  jsonl.Scanner // walks a sub-value already read (tool result content)
	rec  record        // fields of the object being read

	fallback  string // session id for lines without sessionId, before any is seen
	agentID   string // agent id derived from an agent-<id>.jsonl path
	agentType string // set by SetAgentType

	ids      parse.ContentIDs // ids of lines without uuid
	session  intern           // last sessionId seen
	cwd      intern
	branch   intern
	version  intern
	slug     intern
	model    intern
	agent    intern
	mime     intern
	usageKey usageKeys
	prevUUID intern              // uuid of the previous line, the usual parentUuid
	labels   labels              // Subtype strings
	usage    []schema.Usage      // slab that Usage pointers are cut from
	buf      []byte              // scratch for joined text
	unknown  map[string]struct{} // unknown types already logged
}

// New returns a parser for the file cfg.Path. The path gives the fallback
// session id of lines without sessionId and, for agent-<id>.jsonl files,
// the agent id of lines without agentId; it is not opened.
func New(cfg parse.Config) *Parser {
	return &Parser{
		cfg:      cfg,
		log:      cfg.Log().With("component", "claude"),
		fallback: fallbackSession(cfg.Path),
		agentID:  agentIDFromPath(cfg.Path),
	}
}

// Format returns [schema.FormatClaudeCode].
func (p *Parser) Format() schema.Format { return schema.FormatClaudeCode }

// SetAgentType sets the subagent type (the agentType of the file's
// agent-<id>.meta.json sidecar, see [ReadAgentMeta]) copied into the
// AgentType of every entry parsed from then on. Call it before the first
// line; "" clears it.
func (p *Parser) SetAgentType(agentType string) { p.agentType = agentType }

// SessionID returns the session id that the next line gets when it has no
// sessionId of its own: the last one seen, or the path-derived fallback.
func (p *Parser) SessionID() string {
	if p.session.s != "" {
		return p.session.s
	}
	return p.fallback
}

// Parse appends the entries of one line to dst: one per JSON object. On bad
// input it returns the entries of the objects before the fault and a
// *schema.DecodeError locating it; the parser stays usable for the next
// line. A bad token counter (see parse.Count) does not stop the line: its
// entry is kept without usage and the error located. Entries never alias
// line.Bytes.
func (p *Parser) Parse(dst []schema.Entry, line jsonl.Line) ([]schema.Entry, error) {
	s := &p.s
	p.line = line.Bytes
	s.Reset(line.Bytes)
	var countErr error // the first bad token counter: its entry is kept
	for obj := 0; s.More(); obj++ {
		start := s.Offset()
		if !s.EnterObject() {
			if s.Err() != nil {
				break
			}
			return dst, parse.Fail(&p.cfg, line, start, parse.ErrNotObject)
		}
		r := &p.rec
		r.reset()
		p.readObject()
		if s.Err() != nil {
			break
		}
		if r.bad != nil {
			return dst, parse.Fail(&p.cfg, line, r.badOff, r.bad)
		}
		dst = append(dst, parse.Base(&p.cfg, schema.FormatClaudeCode, line, obj))
		e := &dst[len(dst)-1]
		if err := p.build(e, s.Span()); err != nil {
			dst = dst[:len(dst)-1]
			return dst, parse.Fail(&p.cfg, line, start, err)
		}
		if r.badCount != nil && countErr == nil {
			countErr = parse.Fail(&p.cfg, line, r.badCountOff, r.badCount)
		}
	}
	if err := parse.ScanError(&p.cfg, line, s); err != nil {
		return dst, err
	}
	return dst, countErr
}
