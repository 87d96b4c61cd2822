package export

import (
	"time"

	"github.com/sessionpipe/sessionpipe/schema"
)

// row is one Parquet row: every field of [schema.Entry] plus the stream
// sequence and the entry key. Column names are the snake_case names of the
// entry's JSON form, so that the same SQL runs on `sessionpipe entries`
// output and on the Parquet files.
//
// Encodings are chosen per column: dictionary for the few distinct values
// of a file (format, host, path, session, model, role, kind, cwd, …), delta
// for monotone integers and prefix-sharing keys, plain for free text and
// random ids, everything compressed with zstd (the writer's codec).
//
// Optional columns are NULL where the entry holds its zero value ("" for a
// string, nil for a pointer), which is what "absent" means in the entry
// contract; a zero time is a NULL ts.
type row struct {
	Seq int64  `parquet:"seq,delta"`
	Key string `parquet:"key,delta"`

	Format string `parquet:"format,dict"`
	Host   string `parquet:"host,optional,dict"`
	Path   string `parquet:"path,optional,dict"`
	Offset int64  `parquet:"offset,delta"`
	Line   int64  `parquet:"line,delta"`
	Object int32  `parquet:"object"`

	SessionID       string `parquet:"session_id,dict"`
	EntryID         string `parquet:"entry_id"`
	ParentID        string `parquet:"parent_id,optional"`
	ParentSessionID string `parquet:"parent_session_id,optional,dict"`
	TS              int64  `parquet:"ts,optional,timestamp(microsecond:utc)"`

	Kind      string `parquet:"kind,dict"`
	Role      string `parquet:"role,optional,dict"`
	Subtype   string `parquet:"subtype,optional,dict"`
	Text      string `parquet:"text,optional"`
	Meta      bool   `parquet:"meta"`
	Copy      bool   `parquet:"copy"`
	Truncated bool   `parquet:"truncated"`

	Model      string   `parquet:"model,optional,dict"`
	Provider   string   `parquet:"provider,optional,dict"`
	MessageID  string   `parquet:"message_id,optional"`
	RequestID  string   `parquet:"request_id,optional"`
	Usage      *usage   `parquet:"usage,optional"`
	UsageKey   string   `parquet:"usage_key,optional"`
	CostUSD    *float64 `parquet:"cost_usd,optional"`
	StopReason string   `parquet:"stop_reason,optional,dict"`

	ToolCalls   []toolCall   `parquet:"tool_calls,list"`
	ToolResults []toolResult `parquet:"tool_results,list"`
	Attachments []attachment `parquet:"attachments,list"`
	Reaction    *reaction    `parquet:"reaction,optional"`

	Sender       string  `parquet:"sender,optional,dict"`
	CWD          string  `parquet:"cwd,optional,dict"`
	GitBranch    string  `parquet:"git_branch,optional,dict"`
	AgentVersion string  `parquet:"agent_version,optional,dict"`
	Sidechain    bool    `parquet:"sidechain"`
	AgentID      string  `parquet:"agent_id,optional,dict"`
	AgentType    string  `parquet:"agent_type,optional,dict"`
	Slug         string  `parquet:"slug,optional,dict"`
	Command      string  `parquet:"command,optional,dict"`
	CommandArgs  string  `parquet:"command_args,optional"`
	Title        string  `parquet:"title,optional,dict"`
	Origin       *origin `parquet:"origin,optional"`

	Raw string `parquet:"raw,optional"`
}

// usage is [schema.Usage] as a struct column: usage.input, usage.output, …
// It is NULL when the entry has no usage, which differs from all-zero
// counters.
type usage struct {
	Input        int64  `parquet:"input"`
	Output       int64  `parquet:"output"`
	CacheRead    int64  `parquet:"cache_read"`
	CacheWrite   int64  `parquet:"cache_write"`
	CacheWrite5m int64  `parquet:"cache_write_5m"`
	CacheWrite1h int64  `parquet:"cache_write_1h"`
	Reasoning    int64  `parquet:"reasoning"`
	Speed        string `parquet:"speed,optional,dict"`
}

type toolCall struct {
	ID    string `parquet:"id"`
	Name  string `parquet:"name,dict"`
	Input string `parquet:"input,optional"`
}

type toolResult struct {
	ToolCallID string `parquet:"tool_call_id"`
	IsError    bool   `parquet:"is_error"`
	Content    string `parquet:"content,optional"`
}

type attachment struct {
	Filename string `parquet:"filename,optional"`
	MimeType string `parquet:"mime_type,optional,dict"`
	Size     string `parquet:"size,optional"`
}

type reaction struct {
	MessageID string   `parquet:"message_id"`
	Emojis    []string `parquet:"emojis,list"`
}

type origin struct {
	Provider string `parquet:"provider,optional"`
	Surface  string `parquet:"surface,optional"`
	ChatType string `parquet:"chat_type,optional"`
	From     string `parquet:"from,optional"`
	Label    string `parquet:"label,optional"`
}

// tsMicros returns t as microseconds since the Unix epoch, 0 for the zero
// time (written as NULL).
func tsMicros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

// copier copies the strings of entries into an arena, so that a buffered
// row does not keep the caller's entry (often a reused batch) alive and its
// size is known exactly.
type copier interface {
	str(s string) string
	bytes(b []byte) string
}

// fromEntry fills r from e with seq, copying every string through c.
func (r *row) fromEntry(e *schema.Entry, seq uint64, c copier) {
	var kb [256]byte
	*r = row{
		Seq:             int64(seq),
		Key:             c.bytes(e.AppendKey(kb[:0])),
		Format:          c.str(string(e.Format)),
		Host:            c.str(e.Host),
		Path:            c.str(e.Path),
		Offset:          e.Offset,
		Line:            e.Line,
		Object:          int32(e.Object),
		SessionID:       c.str(e.SessionID),
		EntryID:         c.str(e.EntryID),
		ParentID:        c.str(e.ParentID),
		ParentSessionID: c.str(e.ParentSessionID),
		TS:              tsMicros(e.TS),
		Kind:            c.str(string(e.Kind)),
		Role:            c.str(string(e.Role)),
		Subtype:         c.str(e.Subtype),
		Text:            c.str(e.Text),
		Meta:            e.Meta,
		Copy:            e.Copy,
		Truncated:       e.Truncated,
		Model:           c.str(e.Model),
		Provider:        c.str(e.Provider),
		MessageID:       c.str(e.MessageID),
		RequestID:       c.str(e.RequestID),
		UsageKey:        c.str(e.UsageKey),
		StopReason:      c.str(e.StopReason),
		Sender:          c.str(e.Sender),
		CWD:             c.str(e.CWD),
		GitBranch:       c.str(e.GitBranch),
		AgentVersion:    c.str(e.AgentVersion),
		Sidechain:       e.Sidechain,
		AgentID:         c.str(e.AgentID),
		AgentType:       c.str(e.AgentType),
		Slug:            c.str(e.Slug),
		Command:         c.str(e.Command),
		CommandArgs:     c.str(e.CommandArgs),
		Title:           c.str(e.Title),
		Raw:             c.bytes(e.Raw),
	}
	if u := e.Usage; u != nil {
		r.Usage = &usage{
			Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite,
			CacheWrite5m: u.CacheWrite5m, CacheWrite1h: u.CacheWrite1h, Reasoning: u.Reasoning,
			Speed: c.str(u.Speed),
		}
	}
	if e.CostUSD != nil {
		v := *e.CostUSD
		r.CostUSD = &v
	}
	if len(e.ToolCalls) > 0 {
		r.ToolCalls = make([]toolCall, len(e.ToolCalls))
		for i, tc := range e.ToolCalls {
			r.ToolCalls[i] = toolCall{ID: c.str(tc.ID), Name: c.str(tc.Name), Input: c.bytes(tc.Input)}
		}
	}
	if len(e.ToolResults) > 0 {
		r.ToolResults = make([]toolResult, len(e.ToolResults))
		for i, tr := range e.ToolResults {
			r.ToolResults[i] = toolResult{ToolCallID: c.str(tr.ToolCallID), IsError: tr.IsError, Content: c.str(tr.Content)}
		}
	}
	if len(e.Attachments) > 0 {
		r.Attachments = make([]attachment, len(e.Attachments))
		for i, a := range e.Attachments {
			r.Attachments[i] = attachment{Filename: c.str(a.Filename), MimeType: c.str(a.MimeType), Size: c.str(a.Size)}
		}
	}
	if rc := e.Reaction; rc != nil {
		r.Reaction = &reaction{MessageID: c.str(rc.MessageID), Emojis: make([]string, len(rc.Emojis))}
		for i, s := range rc.Emojis {
			r.Reaction.Emojis[i] = c.str(s)
		}
	}
	if o := e.Origin; o != nil {
		r.Origin = &origin{Provider: c.str(o.Provider), Surface: c.str(o.Surface), ChatType: c.str(o.ChatType),
			From: c.str(o.From), Label: c.str(o.Label)}
	}
}
