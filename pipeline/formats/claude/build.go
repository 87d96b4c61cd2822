package claude

import (
	"encoding/json"
	"fmt"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// lineKind is a line type with its own treatment, or typeOther.
type lineKind string

// Line types with their own treatment.
const (
	typeNone       lineKind = "" // no type: the minimal shape of old versions
	typeOther      lineKind = "?"
	typeUser       lineKind = "user"
	typeAssistant  lineKind = "assistant"
	typeSystem     lineKind = "system"
	typeSummary    lineKind = "summary"
	typeProgress   lineKind = "progress"
	typeAttachment lineKind = "attachment"
	typeQueue      lineKind = "queue-operation"
	typeSnapshot   lineKind = "file-history-snapshot"
	typeTitle      lineKind = "custom-title"
	typeAITitle    lineKind = "ai-title"
	typeLastPrompt lineKind = "last-prompt"
)

// Subtypes set by the parser.
const (
	subtypeCompactBoundary = "compact_boundary"
	subtypeCompactSummary  = "compact_summary"
	subtypeAPIError        = "api_error"
	subtypeSynthetic       = "synthetic"
)

// knownOther reports whether raw names a documented bookkeeping type
// without a treatment of its own: an event like an unknown type, but not
// logged as unknown.
func knownOther(raw []byte) bool {
	switch string(raw) {
	case "agent-name", "agent-setting", "permission-mode", "mode", "pr-link",
		"bridge-session", "saved_hook_context", "worktree-state":
		return true
	}
	return false
}

// lineType classifies the type value of a line without allocating.
func lineType(v jsonl.Value) lineKind {
	if v.Kind() != jsonl.String {
		return typeNone
	}
	t := v.Raw()
	if v.Escaped() {
		t = v.AppendText(nil)
	}
	switch string(t) {
	case "":
		return typeNone
	case "user":
		return typeUser
	case "assistant":
		return typeAssistant
	case "system":
		return typeSystem
	case "summary":
		return typeSummary
	case "progress":
		return typeProgress
	case "attachment":
		return typeAttachment
	case "queue-operation":
		return typeQueue
	case "file-history-snapshot":
		return typeSnapshot
	case "custom-title":
		return typeTitle
	case "ai-title":
		return typeAITitle
	case "last-prompt":
		return typeLastPrompt
	}
	return typeOther
}

// build fills e (provenance already set) from p.rec. span is the object's
// JSON text. It returns a bare sentinel-wrapping error for an object that
// lacks a field its type needs.
func (p *Parser) build(e *schema.Entry, span []byte) error {
	r := &p.rec
	p.common(e, span)

	typ := lineType(r.typ)
	switch typ {
	case typeUser:
		if !r.hasMessage {
			return fmt.Errorf("%w: message", parse.ErrMissingField)
		}
		p.user(e)
	case typeAssistant:
		if !r.hasMessage {
			return fmt.Errorf("%w: message", parse.ErrMissingField)
		}
		p.assistant(e)
	case typeNone:
		// The minimal shape of old versions: no type, a message.
		switch {
		case !r.hasMessage:
			e.Kind = schema.KindEvent
		case r.msg.role.Equal(string(typeUser)):
			p.user(e)
		default:
			p.assistant(e)
		}
	case typeSystem:
		p.system(e)
	case typeSummary:
		e.Kind = schema.KindSummary
		e.Subtype = string(typeSummary)
		if r.leaf.Kind() == jsonl.String {
			e.ParentID = r.leaf.String()
		}
		if p.cfg.Text {
			e.Text = parse.Str(r.summary)
		}
	case typeTitle, typeAITitle:
		e.Kind = schema.KindSummary
		e.Subtype = p.labels.get("", r.typ)
		e.Title = parse.Str(r.title)
	case typeProgress, typeAttachment, typeQueue:
		e.Kind = schema.KindEvent
		e.Subtype = p.labels.get(string(typ), r.inner)
		if p.cfg.Text {
			switch typ {
			case typeAttachment:
				e.Text = p.joinText(r.prompt)
			case typeQueue:
				e.Text = p.joinText(r.content)
			}
		}
	default:
		e.Kind = schema.KindEvent
		e.Subtype = p.labels.get("", r.typ)
		switch typ {
		case typeSnapshot:
			if e.TS.IsZero() {
				e.TS = r.snapTS
			}
		case typeLastPrompt:
			if r.leaf.Kind() == jsonl.String {
				e.ParentID = r.leaf.String()
			}
		case typeOther:
			p.logUnknown(r.typ)
		}
		if p.cfg.Text {
			e.Text = parse.Str(r.extra)
		}
	}
	return nil
}

// common fills the fields every line type shares.
func (p *Parser) common(e *schema.Entry, span []byte) {
	r := &p.rec
	if r.session.Kind() == jsonl.String && len(r.session.Raw()) > 0 {
		e.SessionID = p.session.get(r.session)
	} else {
		e.SessionID = p.SessionID()
	}
	p.ids2(e, span)
	e.TS = r.ts
	e.CWD = p.cwd.get(r.cwd)
	e.GitBranch = p.branch.get(r.branch)
	e.AgentVersion = p.version.get(r.version)
	e.Slug = p.slug.get(r.slug)
	e.Sidechain = r.sidechain
	e.Background = r.background
	if r.agentID.Kind() == jsonl.String && len(r.agentID.Raw()) > 0 {
		e.AgentID = p.agent.get(r.agentID)
	} else {
		e.AgentID = p.agentID
	}
	e.AgentType = p.agentType
	if p.cfg.Raw {
		e.Raw = append(json.RawMessage(nil), span...)
	}
}

// ids2 sets EntryID and ParentID. The parent is most often the previous
// line, whose uuid string is reused.
func (p *Parser) ids2(e *schema.Entry, span []byte) {
	r := &p.rec
	parent := r.parent
	if parent.Kind() != jsonl.String || len(parent.Raw()) == 0 {
		parent = r.logicalParent
	}
	if parent.Kind() == jsonl.String && len(parent.Raw()) > 0 {
		e.ParentID = p.prevUUID.get(parent)
	}
	if r.uuid.Kind() == jsonl.String && len(r.uuid.Raw()) > 0 {
		e.EntryID = p.prevUUID.get(r.uuid)
	} else {
		e.EntryID = p.ids.ID(span)
	}
}

// user fills a user line: a prompt, injected content, or tool results.
func (p *Parser) user(e *schema.Entry) {
	r, m := &p.rec, &p.rec.msg
	e.Kind = schema.KindMessage
	e.Role = schema.RoleUser

	first := m.text // the first text: meta markers and commands are there
	results, others := 0, 0
	if first.Kind() == jsonl.String && len(first.Raw()) > 0 {
		others++
	}
	for i := range m.blocks {
		b := &m.blocks[i]
		switch {
		case b.typ.Equal("text"):
			if first.Kind() != jsonl.String {
				first = b.text
			}
			others++
		case b.typ.Equal("image"), b.typ.Equal("document"):
			others++
		case b.typ.Equal("tool_result"):
			results++
		}
	}
	if results > 0 && others == 0 {
		e.Role = schema.RoleTool
	}
	// Nothing typed (empty content, unknown blocks only) is no input.
	meta := r.meta || results+others == 0
	if first.Kind() == jsonl.String {
		if p.injected(first) {
			meta = true
			if hasCommand(first.Raw()) {
				e.Command, e.CommandArgs = p.command(first)
			}
		}
	}
	if r.compactSummary {
		e.Kind = schema.KindSummary
		e.Subtype = subtypeCompactSummary
		meta = true
	}
	e.Meta = meta
	prompt := e.Kind == schema.KindMessage && e.Role == schema.RoleUser && !meta && !r.sidechain
	if prompt || p.cfg.Text {
		e.Text = p.userText()
	}
	if results > 0 {
		e.ToolResults = make([]schema.ToolResult, 0, results)
		for i := range m.blocks {
			b := &m.blocks[i]
			if !b.typ.Equal("tool_result") {
				continue
			}
			tr := schema.ToolResult{ToolCallID: parse.Str(b.toolUseID), IsError: b.isError}
			if p.cfg.Text {
				tr.Content = p.joinText(b.content)
			}
			e.ToolResults = append(e.ToolResults, tr)
		}
	}
	for i := range m.blocks {
		b := &m.blocks[i]
		if b.typ.Equal("image") || b.typ.Equal("document") {
			e.Attachments = append(e.Attachments, p.attachment(b))
		}
	}
}

// userText joins the text of a user message: its string content, or its
// text blocks separated by newlines.
func (p *Parser) userText() string {
	m := &p.rec.msg
	if m.text.Kind() == jsonl.String {
		return m.text.String()
	}
	return p.joinBlocks()
}

// joinBlocks joins the text blocks of the message with newlines.
func (p *Parser) joinBlocks() string {
	m := &p.rec.msg
	var one jsonl.Value
	n := 0
	for i := range m.blocks {
		b := &m.blocks[i]
		if b.typ.Equal("text") && b.text.Kind() == jsonl.String {
			one = b.text
			n++
		}
	}
	switch n {
	case 0:
		return ""
	case 1:
		return one.String()
	}
	buf := p.buf[:0]
	n = 0
	for i := range m.blocks {
		b := &m.blocks[i]
		if b.typ.Equal("text") && b.text.Kind() == jsonl.String {
			if n > 0 {
				buf = append(buf, '\n')
			}
			buf = b.text.AppendText(buf)
			n++
		}
	}
	p.buf = buf
	return string(buf)
}

// assistant fills an assistant line: text, tool calls, model and usage.
func (p *Parser) assistant(e *schema.Entry) {
	r, m := &p.rec, &p.rec.msg
	e.Kind = schema.KindMessage
	e.Role = schema.RoleAssistant
	e.Model = p.model.get(m.model)
	synthetic := e.Model == SyntheticModel
	if synthetic {
		// Claude Code's own notice ("No response requested.", "Invalid
		// API key", a rate limit): an event, never a model reply.
		e.Kind = schema.KindEvent
		e.Subtype = subtypeSynthetic
	} else {
		e.Provider = Provider
	}
	e.StopReason = p.labels.get("", m.stop)
	if r.apiError {
		e.Subtype = subtypeAPIError
	}
	key := p.usageKey.get(m.id, r.requestID)
	e.MessageID, e.RequestID = key.messageID, key.requestID
	if m.hasUsage && !synthetic && r.badCount == nil {
		u := m.usage
		u.CacheWrite = cacheWrite(m)
		e.Usage = p.newUsage(u)
		e.UsageKey = key.key
		if e.UsageKey == "" {
			e.UsageKey = "claude:uuid:" + e.EntryID
		}
	}
	if r.hasCost {
		c := r.cost
		e.CostUSD = &c
	}
	calls := 0
	for i := range m.blocks {
		if isToolUse(&m.blocks[i]) {
			calls++
		}
	}
	if calls > 0 {
		e.ToolCalls = make([]schema.ToolCall, 0, calls)
		for i := range m.blocks {
			b := &m.blocks[i]
			if !isToolUse(b) {
				continue
			}
			tc := schema.ToolCall{ID: parse.Str(b.id), Name: p.labels.get("", b.name)}
			if p.cfg.Text {
				tc.Input = rawJSON(b.input)
			}
			e.ToolCalls = append(e.ToolCalls, tc)
		}
	}
	if p.cfg.Text {
		if m.text.Kind() == jsonl.String {
			e.Text = m.text.String()
		} else {
			e.Text = p.joinBlocks()
		}
	}
}

// cacheWrite returns the cache write of a usage object: the larger of
// cache_creation_input_tokens and the sum of its cache_creation
// breakdown. Anthropic's API writes both, equal; Anthropic-compatible
// backends (MiniMax through Claude Code) write the total with a breakdown
// of zeros. Usage.CacheWrite5m and CacheWrite1h keep the breakdown as
// written: what exceeds it is a write whose tier the line does not tell.
func cacheWrite(m *message) int64 {
	return max(m.cacheAll, m.usage.CacheWrite5m+m.usage.CacheWrite1h)
}

// isToolUse reports whether b is a tool call written by the model
// (executed by Claude Code, or server side).
func isToolUse(b *block) bool {
	return b.typ.Equal("tool_use") || b.typ.Equal("server_tool_use")
}

// rawJSON returns a copy of a value as JSON text ([parse.RawJSON]), null
// kept as null, or nil for no value.
func rawJSON(v jsonl.Value) json.RawMessage {
	if v.IsNull() {
		return json.RawMessage("null")
	}
	return parse.RawJSON(v)
}

// system fills a system line.
func (p *Parser) system(e *schema.Entry) {
	r := &p.rec
	e.Kind = schema.KindEvent
	e.Role = schema.RoleSystem
	e.Meta = r.meta
	e.Subtype = p.labels.get("", r.subtype)
	if r.subtype.Equal(subtypeCompactBoundary) {
		e.Kind = schema.KindCompaction
	}
	if r.content.Kind() == jsonl.String {
		if hasCommand(r.content.Raw()) && p.injected(r.content) {
			e.Command, e.CommandArgs = p.command(r.content)
		}
		if p.cfg.Text {
			e.Text = r.content.String()
		}
	}
}

// newUsage returns a pointer to a copy of u, cut from a slab so that
// entries do not cost one allocation each for their usage.
func (p *Parser) newUsage(u schema.Usage) *schema.Usage {
	if len(p.usage) == cap(p.usage) {
		p.usage = make([]schema.Usage, 0, usageSlab)
	}
	p.usage = append(p.usage, u)
	return &p.usage[len(p.usage)-1]
}

// usageSlab is the number of Usage values allocated at once.
const usageSlab = 64

// logUnknown logs the first sighting of an unknown line type in the file.
func (p *Parser) logUnknown(typ jsonl.Value) {
	raw := typ.Raw()
	if knownOther(raw) {
		return
	}
	if _, ok := p.unknown[string(raw)]; ok || len(p.unknown) >= maxLabels {
		return
	}
	if p.unknown == nil {
		p.unknown = make(map[string]struct{})
	}
	p.unknown[string(raw)] = struct{}{}
	p.log.Debug("unknown line type", keyPath, p.cfg.Path, keyType, typ.String())
}

// Log attribute keys.
const (
	keyPath = "path"
	keyType = "type"
)
