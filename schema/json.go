package schema

import (
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/segmentio/encoding/json"
)

// The canonical JSON form of an entry is one object with the snake_case
// contract names in the declaration order of [Entry], empty optional fields
// omitted, labels with their keys in byte order, ts in RFC 3339 UTC with nanoseconds (omitted when zero), and raw
// JSON fields (tool call input, raw) embedded as is. It is what
// `sessionpipe entries` prints and what the tailer publishes.

// AppendJSON appends the canonical JSON form of e to b and returns the
// extended buffer. It does not allocate when b has room. ToolCall.Input and
// Raw must hold valid JSON (the parsers guarantee it); they are copied
// verbatim.
func (e *Entry) AppendJSON(b []byte) []byte {
	b = append(b, `{"format":`...)
	b = appendString(b, string(e.Format))
	b = appendStringField(b, "host", e.Host)
	if len(e.Labels) > 0 {
		b = append(b, `,"labels":`...)
		b = appendLabels(b, e.Labels)
	}
	b = appendStringField(b, "path", e.Path)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, e.Offset, 10)
	b = append(b, `,"line":`...)
	b = strconv.AppendInt(b, e.Line, 10)
	if e.Object != 0 {
		b = append(b, `,"object":`...)
		b = strconv.AppendInt(b, int64(e.Object), 10)
	}
	b = append(b, `,"session_id":`...)
	b = appendString(b, e.SessionID)
	b = append(b, `,"entry_id":`...)
	b = appendString(b, e.EntryID)
	b = appendStringField(b, "parent_id", e.ParentID)
	b = appendStringField(b, "parent_session_id", e.ParentSessionID)
	if !e.TS.IsZero() {
		b = append(b, `,"ts":"`...)
		b = e.TS.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
	}
	b = append(b, `,"kind":`...)
	b = appendString(b, string(e.Kind))
	b = appendStringField(b, "role", string(e.Role))
	b = appendStringField(b, "subtype", e.Subtype)
	b = appendStringField(b, "text", e.Text)
	b = appendBoolField(b, "meta", e.Meta)
	b = appendBoolField(b, "copy", e.Copy)
	b = appendBoolField(b, "truncated", e.Truncated)
	b = appendStringField(b, "model", e.Model)
	b = appendStringField(b, "provider", e.Provider)
	b = appendStringField(b, "message_id", e.MessageID)
	b = appendStringField(b, "request_id", e.RequestID)
	if e.Usage != nil {
		b = append(b, `,"usage":`...)
		b = e.Usage.appendJSON(b)
	}
	b = appendStringField(b, "usage_key", e.UsageKey)
	if e.CostUSD != nil {
		b = append(b, `,"cost_usd":`...)
		b = appendFloat(b, *e.CostUSD)
	}
	b = appendStringField(b, "stop_reason", e.StopReason)
	if len(e.ToolCalls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i := range e.ToolCalls {
			if i > 0 {
				b = append(b, ',')
			}
			tc := &e.ToolCalls[i]
			b = append(b, `{"id":`...)
			b = appendString(b, tc.ID)
			b = append(b, `,"name":`...)
			b = appendString(b, tc.Name)
			if len(tc.Input) > 0 {
				b = append(b, `,"input":`...)
				b = append(b, tc.Input...)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(e.ToolResults) > 0 {
		b = append(b, `,"tool_results":[`...)
		for i := range e.ToolResults {
			if i > 0 {
				b = append(b, ',')
			}
			tr := &e.ToolResults[i]
			b = append(b, `{"tool_call_id":`...)
			b = appendString(b, tr.ToolCallID)
			b = appendBoolField(b, "is_error", tr.IsError)
			b = appendStringField(b, "content", tr.Content)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = appendIntField(b, "tool_calls_omitted", int64(e.ToolCallsOmitted))
	b = appendIntField(b, "tool_results_omitted", int64(e.ToolResultsOmitted))
	if len(e.Attachments) > 0 {
		b = append(b, `,"attachments":[`...)
		for i := range e.Attachments {
			if i > 0 {
				b = append(b, ',')
			}
			a := &e.Attachments[i]
			b = append(b, '{')
			n := len(b)
			b = appendStringField(b, "filename", a.Filename)
			b = appendStringField(b, "mime_type", a.MimeType)
			b = appendStringField(b, "size", a.Size)
			if len(b) > n {
				b = append(b[:n], b[n+1:]...) // drop the leading comma
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if e.Reaction != nil {
		b = append(b, `,"reaction":{"message_id":`...)
		b = appendString(b, e.Reaction.MessageID)
		b = append(b, `,"emojis":[`...)
		for i, s := range e.Reaction.Emojis {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, s)
		}
		b = append(b, "]}"...)
	}
	b = appendStringField(b, "sender", e.Sender)
	b = appendStringField(b, "cwd", e.CWD)
	b = appendStringField(b, "git_branch", e.GitBranch)
	b = appendStringField(b, "agent_version", e.AgentVersion)
	b = appendBoolField(b, "sidechain", e.Sidechain)
	b = appendBoolField(b, "background", e.Background)
	b = appendStringField(b, "agent_id", e.AgentID)
	b = appendStringField(b, "agent_type", e.AgentType)
	b = appendStringField(b, "slug", e.Slug)
	b = appendStringField(b, "command", e.Command)
	b = appendStringField(b, "command_args", e.CommandArgs)
	b = appendStringField(b, "title", e.Title)
	if o := e.Origin; o != nil {
		b = append(b, `,"origin":{`...)
		n := len(b)
		b = appendStringField(b, "provider", o.Provider)
		b = appendStringField(b, "surface", o.Surface)
		b = appendStringField(b, "chat_type", o.ChatType)
		b = appendStringField(b, "from", o.From)
		b = appendStringField(b, "label", o.Label)
		if len(b) > n {
			b = append(b[:n], b[n+1:]...)
		}
		b = append(b, '}')
	}
	if len(e.Raw) > 0 {
		b = append(b, `,"raw":`...)
		b = append(b, e.Raw...)
	}
	return append(b, '}')
}

func (u *Usage) appendJSON(b []byte) []byte {
	b = append(b, `{"input":`...)
	b = strconv.AppendInt(b, u.Input, 10)
	b = append(b, `,"output":`...)
	b = strconv.AppendInt(b, u.Output, 10)
	b = append(b, `,"cache_read":`...)
	b = strconv.AppendInt(b, u.CacheRead, 10)
	b = append(b, `,"cache_write":`...)
	b = strconv.AppendInt(b, u.CacheWrite, 10)
	b = appendIntField(b, "cache_write_5m", u.CacheWrite5m)
	b = appendIntField(b, "cache_write_1h", u.CacheWrite1h)
	b = appendIntField(b, "reasoning", u.Reasoning)
	b = appendStringField(b, "speed", u.Speed)
	return append(b, '}')
}

// MarshalJSON returns the canonical JSON form of e ([Entry.AppendJSON]).
func (e Entry) MarshalJSON() ([]byte, error) {
	return e.AppendJSON(make([]byte, 0, 512)), nil
}

// UnmarshalEntry decodes the JSON form of an entry. It accepts the
// canonical form and any JSON object with the same field names; unknown
// fields are ignored so that newer producers can add fields.
func UnmarshalEntry(data []byte, e *Entry) error {
	*e = Entry{}
	// entryJSON has Entry's fields but not its MarshalJSON method, and keeps
	// the raw JSON fields raw.
	type entryJSON Entry
	return json.Unmarshal(data, (*entryJSON)(e))
}

// appendLabels appends m as a JSON object with its keys in byte order, so
// that the same labels always give the same bytes. It allocates only for
// more than a few labels.
func appendLabels(b []byte, m map[string]string) []byte {
	var buf [8]string
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendString(b, m[k])
	}
	return append(b, '}')
}

func appendStringField(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return appendString(b, s)
}

func appendBoolField(b []byte, name string, v bool) []byte {
	if !v {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	return append(b, `":true`...)
}

func appendIntField(b []byte, name string, v int64) []byte {
	if v == 0 {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, v, 10)
}

// appendFloat formats f as encoding/json does: shortest representation,
// exponent form only for very small or very large magnitudes. NaN and
// infinities, which JSON cannot hold, are written as 0.
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, '0')
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9, as encoding/json does
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
