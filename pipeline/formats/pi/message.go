package pi

import (
	"fmt"
	"strconv"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// message builds a message entry. typ is the entry type of a Nexus
// Claude-style entry ("user" or "assistant"), the role when the message
// has none; nil for pi's "message" entries.
func (p *Parser) message(e *schema.Entry, line jsonl.Line, obj, start int, typ []byte) {
	r := &p.r
	m := &r.msg
	var typRole string
	if typ != nil {
		typRole = p.internBytes(typ)
	}
	p.common(e, line, obj)
	if !r.hasMessage {
		if r.message.Kind() == jsonl.Invalid || r.message.IsNull() {
			p.missing(start, "message")
		} else {
			p.bad(r.message, "message")
		}
		return
	}
	msgTime := p.time(m.ts, "message.timestamp")
	if e.TS.IsZero() {
		e.TS = msgTime
	}
	role := p.intern(p.str(m.role, "message.role"))
	if role == "" {
		role = typRole
	}
	if role == "" {
		p.missing(start, "message.role")
		return
	}
	if !m.contentRead && !p.walkValue(m.content, p.cfg.Text || role == "user") {
		p.bad(m.content, "message.content")
	}
	p.contentFault("message.content")

	e.Kind = schema.KindMessage
	switch role {
	case "user":
		e.Role = schema.RoleUser
		e.Text = string(p.text)
		e.Attachments = p.attachments()
	case "assistant":
		p.assistant(e, msgTime)
	case "toolResult":
		e.Role = schema.RoleTool
		tr := schema.ToolResult{ToolCallID: copyStr(p.str(m.toolCallID, "message.toolCallId"))}
		switch m.isError.Kind() {
		case jsonl.Bool:
			tr.IsError, _ = m.isError.Bool()
		case jsonl.Invalid, jsonl.Null:
		default:
			p.bad(m.isError, "message.isError")
		}
		if p.cfg.Text {
			tr.Content = string(p.text)
		}
		e.ToolResults = []schema.ToolResult{tr}
		e.Attachments = p.attachments()
	case "bashExecution":
		e.Role = schema.RoleTool
		e.Subtype = "bashExecution"
		cmd := p.str(m.command, "message.command")
		out := p.str(m.output, "message.output")
		if p.cfg.Text {
			b := cmd.AppendText(p.text[:0])
			if len(out.Raw()) > 0 {
				b = append(b, '\n')
				b = out.AppendText(b)
			}
			p.text = b
			e.Text = string(b)
		}
	case "custom", "hookMessage":
		e.Role = schema.RoleUser
		e.Meta = true
		e.Subtype = p.subtype(role, p.str(m.customType, "message.customType"))
		e.Text = string(p.text)
		e.Attachments = p.attachments()
	case "branchSummary", "compactionSummary":
		e.Kind = schema.KindSummary
		e.Role = schema.RoleUser
		e.Meta = true
		e.Subtype = role
		if sum := p.str(m.summary, "message.summary"); p.cfg.Text {
			e.Text = copyStr(sum)
		}
	default:
		e.Kind = schema.KindEvent
		e.Subtype = role
	}
}

// assistant fills an assistant message: text, tool calls, model, usage.
func (p *Parser) assistant(e *schema.Entry, msgTime time.Time) {
	r := &p.r
	m := &r.msg
	e.Role = schema.RoleAssistant
	e.Text = string(p.text)
	model := p.intern(p.str(m.model, "message.model"))
	e.Model, e.Provider = model, p.intern(p.str(m.provider, "message.provider"))
	if e.Model == "" {
		e.Model = p.model
	}
	if e.Provider == "" {
		e.Provider = p.provider
	}
	e.StopReason = p.intern(p.str(m.stopReason, "message.stopReason"))
	// A record's identity is its entry id. The provider's response id is
	// not unique (Ollama's OpenAI-compatible endpoint reuses chatcmpl-14
	// across replies and sessions), so it never becomes MessageID, where
	// aggregation would take it for one message; it is kept as RequestID.
	e.RequestID = copyStr(p.str(m.responseID, "message.responseId"))
	// OpenClaw's own assistant messages (provider "openclaw":
	// gateway-injected notices, delivery-mirror copies of what a channel
	// delivered) are written by no model.
	e.Meta = e.Provider == OpenClawProvider

	if len(p.calls) == 0 { // Nexus: tool calls beside the content
		if !p.nexusToolCalls(m.toolCalls) {
			p.bad(m.toolCalls, "message.toolCalls")
		}
		if len(p.calls) == 0 && !p.nexusToolCalls(r.toolCalls) {
			p.bad(r.toolCalls, "toolCalls")
		}
	}
	if len(p.calls) > 0 {
		e.ToolCalls = append([]schema.ToolCall(nil), p.calls...)
	}

	u, field := &m.usage, "message.usage"
	if !u.present && u.object.Kind() == jsonl.Invalid {
		u, field = &m.tokens, "message.tokenCount"
		if !u.present && u.object.Kind() == jsonl.Invalid {
			u, field = &r.tokens, "tokenCount"
		}
	}
	callTime := msgTime
	if callTime.IsZero() {
		callTime = e.TS
	}
	p.usage(e, u, field, model, callTime)
}

// usage sets Usage, CostUSD and UsageKey from the counters of one model
// call, unless their total is zero (gateway-injected errors, calls that
// failed before any token was counted).
func (p *Parser) usage(e *schema.Entry, u *usageVals, field, model string, msgTime time.Time) {
	if k := u.object.Kind(); k != jsonl.Invalid && k != jsonl.Null {
		p.bad(u.object, field)
		return
	}
	if !u.present {
		return
	}
	us := schema.Usage{
		Input:      p.count(u.input, field, "input"),
		Output:     p.count(u.output, field, "output"),
		CacheRead:  p.count(u.cacheRead, field, "cacheRead"),
		CacheWrite: p.count(u.cacheWrite, field, "cacheWrite"),
		Reasoning:  p.count(u.reasoning, field, "reasoning"),
	}
	if u.cacheWrite1h.Kind() == jsonl.Number {
		// pi-ai: cacheWrite = cache_creation_input_tokens (all writes),
		// cacheWrite1h = cache_creation.ephemeral_1h_input_tokens.
		us.CacheWrite1h = p.count(u.cacheWrite1h, field, "cacheWrite1h")
		us.CacheWrite5m = max(us.CacheWrite-us.CacheWrite1h, 0)
	} else {
		p.count(u.cacheWrite1h, field, "cacheWrite1h") // null or a bad field
	}
	var cost float64
	hasCost := false
	switch u.costTotal.Kind() {
	case jsonl.Number:
		cost, hasCost = u.costTotal.Float()
		if !hasCost {
			p.bad(u.costTotal, field+".cost.total")
		}
	case jsonl.Invalid, jsonl.Null:
	default:
		p.bad(u.costTotal, field+".cost.total")
	}
	if us.Total() == 0 || p.r.err != nil || p.r.countErr != nil {
		return
	}
	e.Usage = &us
	if hasCost {
		e.CostUSD = &cost
	}
	e.UsageKey = UsageKey(msgTime, model, &us, e.SessionID, e.EntryID)
}

// count decodes one token counter (see parse.Count). A bad one is
// recorded in countErr: the entry stays, without usage.
func (p *Parser) count(v jsonl.Value, field, name string) int64 {
	n, ok := parse.Count(v)
	if !ok && p.r.countErr == nil {
		p.r.countErrOff = p.offset(v)
		p.r.countErr = parse.CountError(v, field+"."+name)
	}
	return n
}

// missing records a field the entry type needs and the object lacks.
func (p *Parser) missing(off int, field string) {
	if p.r.err == nil {
		p.r.errOff = off
		p.r.err = fmt.Errorf("%w: %s", parse.ErrMissingField, field)
	}
}

// UsageKey returns the usage key of one pi model call:
// "pi:<ms>:<model>:<input>/<output>/<cacheRead>/<cacheWrite>", where ms is
// the call's message.timestamp in Unix milliseconds and model is
// message.model as written (not a default inherited from the header). Fork,
// branch, gateway compaction and v1→v3 migration copy entries verbatim, so
// every copy of a call gets the same key while two distinct calls would
// need the same millisecond, model and four counters to collide. A call
// without any timestamp falls back to "pi:id:<session>:<entry>", which
// identifies the record only within its file.
func UsageKey(callTime time.Time, model string, u *schema.Usage, session, entry string) string {
	b := make([]byte, 0, 64+len(model))
	b = append(b, "pi:"...)
	if callTime.IsZero() {
		b = append(b, "id:"...)
		b = append(b, session...)
		b = append(b, ':')
		b = append(b, entry...)
		return string(b)
	}
	b = strconv.AppendInt(b, callTime.UnixMilli(), 10)
	b = append(b, ':')
	b = append(b, model...)
	b = append(b, ':')
	b = strconv.AppendInt(b, u.Input, 10)
	b = append(b, '/')
	b = strconv.AppendInt(b, u.Output, 10)
	b = append(b, '/')
	b = strconv.AppendInt(b, u.CacheRead, 10)
	b = append(b, '/')
	b = strconv.AppendInt(b, u.CacheWrite, 10)
	return string(b)
}
