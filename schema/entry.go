// Package schema defines the normalised record that every sessionpipe stage
// exchanges: [Entry] with its [Usage], tool calls, tool results and
// attachments, their canonical JSON form, and the schema [Version].
//
// The package imports nothing from pipeline/ or NATS, so any binary or test
// can use it alone. It does not parse transcript formats; pipeline/formats
// turns source lines into entries.
package schema

import (
	"encoding/json"
	"time"
)

// Version is the version of the normalised entry contract. It is bumped when
// a contract field is renamed or changes meaning; adding fields does not
// bump it. It is written into Parquet metadata and NATS message headers.
const Version = 1

// Entry is one normalised source record: one JSON object of one transcript
// line. A line holding two JSON objects yields two entries with the same
// Offset and Line and distinct Object indexes.
//
// String fields hold "" when the source has no such value; numeric fields
// hold 0. JSON field names are the snake_case contract names of DESIGN.md.
type Entry struct {
	// Where the record came from.
	Format Format `json:"format"`
	Host   string `json:"host,omitempty"`
	// Labels are the key=value labels of the host that read the record
	// (the tailer's -label flags: team, project, cost centre…), for
	// grouping and filtering fleet usage. They are host metadata, not
	// part of the record: [Entry.Key] ignores them. Keys and values
	// follow [ValidateLabels]; nil when the host has none.
	Labels map[string]string `json:"labels,omitempty"`
	Path   string            `json:"path,omitempty"`
	Offset int64             `json:"offset"` // byte offset of the line in the file
	Line   int64             `json:"line"`   // 1-based line number
	Object int               `json:"object,omitempty"`

	// Identity and threading.
	SessionID       string    `json:"session_id"`
	EntryID         string    `json:"entry_id"`
	ParentID        string    `json:"parent_id,omitempty"`
	ParentSessionID string    `json:"parent_session_id,omitempty"`
	TS              time.Time `json:"ts"`

	// What it is.
	Kind    Kind   `json:"kind"`
	Role    Role   `json:"role,omitempty"`
	Subtype string `json:"subtype,omitempty"` // source line type or subtype, e.g. "compact_boundary"
	Text    string `json:"text,omitempty"`
	Meta    bool   `json:"meta,omitempty"` // injected or bookkeeping content, not real user input
	Copy    bool   `json:"copy,omitempty"` // a replay of a record first written in another session: counts nothing
	// Truncated marks an entry whose text fields were shortened to fit a
	// message size limit; the source file holds the whole record.
	Truncated bool `json:"truncated,omitempty"`

	// Model call.
	Model      string   `json:"model,omitempty"`
	Provider   string   `json:"provider,omitempty"`
	MessageID  string   `json:"message_id,omitempty"`
	RequestID  string   `json:"request_id,omitempty"`
	Usage      *Usage   `json:"usage,omitempty"`
	UsageKey   string   `json:"usage_key,omitempty"`
	CostUSD    *float64 `json:"cost_usd,omitempty"` // cost recorded by the source itself (pi), else nil
	StopReason string   `json:"stop_reason,omitempty"`

	ToolCalls   []ToolCall   `json:"tool_calls,omitempty"`
	ToolResults []ToolResult `json:"tool_results,omitempty"`
	// ToolCallsOmitted and ToolResultsOmitted count the tool calls and
	// results left out of a Truncated entry (too many to fit a message
	// even with their inputs and contents cut): counts of tool calls add
	// them. Error results are the last to be left out.
	ToolCallsOmitted   int          `json:"tool_calls_omitted,omitempty"`
	ToolResultsOmitted int          `json:"tool_results_omitted,omitempty"`
	Attachments        []Attachment `json:"attachments,omitempty"`
	Reaction           *Reaction    `json:"reaction,omitempty"`

	// Context.
	Sender       string  `json:"sender,omitempty"`
	CWD          string  `json:"cwd,omitempty"`
	GitBranch    string  `json:"git_branch,omitempty"`
	AgentVersion string  `json:"agent_version,omitempty"`
	Sidechain    bool    `json:"sidechain,omitempty"`
	Background   bool    `json:"background,omitempty"` // a background session's record (Claude Code "sessionKind":"bg"): it may replay the chain it was handed off or forked from
	AgentID      string  `json:"agent_id,omitempty"`
	AgentType    string  `json:"agent_type,omitempty"` // subagent type, e.g. "general-purpose"
	Slug         string  `json:"slug,omitempty"`
	Command      string  `json:"command,omitempty"`      // slash command name, e.g. "/compact"
	CommandArgs  string  `json:"command_args,omitempty"` // slash command arguments
	Title        string  `json:"title,omitempty"`        // session title lines
	Origin       *Origin `json:"origin,omitempty"`       // chat origin (OpenClaw sessions.json)

	// Raw is the original JSON object, kept only when asked for.
	Raw json.RawMessage `json:"raw,omitempty"`
}

// Usage holds the token counters of one model call. The four main counters
// are disjoint, as Anthropic reports them: Input excludes cached input,
// and Reasoning is already part of Output. CacheWrite5m and CacheWrite1h
// are the cache writes whose tier the source names; CacheWrite is at
// least their sum, and what it holds beyond it is a write of unknown tier
// (priced at the 5-minute rate).
type Usage struct {
	Input        int64 `json:"input"`
	Output       int64 `json:"output"`
	CacheRead    int64 `json:"cache_read"`
	CacheWrite   int64 `json:"cache_write"`
	CacheWrite5m int64 `json:"cache_write_5m,omitempty"`
	CacheWrite1h int64 `json:"cache_write_1h,omitempty"`
	Reasoning    int64 `json:"reasoning,omitempty"`
	// Speed is the service speed the call ran at when the source says
	// ("fast" for Claude Code fast mode), which some models price higher.
	Speed string `json:"speed,omitempty"`
}

// Total returns Input + Output + CacheRead + CacheWrite.
func (u *Usage) Total() int64 {
	if u == nil {
		return 0
	}
	return u.Input + u.Output + u.CacheRead + u.CacheWrite
}

// IsZero reports whether every counter is zero.
func (u *Usage) IsZero() bool {
	return u == nil || u.Total() == 0 && u.CacheWrite5m == 0 && u.CacheWrite1h == 0 && u.Reasoning == 0
}

// Add adds v's counters to u.
func (u *Usage) Add(v Usage) {
	u.Input += v.Input
	u.Output += v.Output
	u.CacheRead += v.CacheRead
	u.CacheWrite += v.CacheWrite
	u.CacheWrite5m += v.CacheWrite5m
	u.CacheWrite1h += v.CacheWrite1h
	u.Reasoning += v.Reasoning
}

// ToolCall is a tool invocation written by the model. Input is the raw JSON
// of its arguments (an object in most formats).
type ToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input,omitempty"`
}

// ToolResult is the result of a tool call. IsError is the source format's
// own error flag; it is never guessed from the content.
type ToolResult struct {
	ToolCallID string `json:"tool_call_id"`
	IsError    bool   `json:"is_error,omitempty"`
	Content    string `json:"content,omitempty"`
}

// Attachment is a file, image or document attached to a message. Size is
// the source's own rendering (bytes as a decimal string, or a human string
// such as "1.2MB").
type Attachment struct {
	Filename string `json:"filename,omitempty"`
	MimeType string `json:"mime_type,omitempty"`
	Size     string `json:"size,omitempty"`
}

// Reaction is an emoji reaction to an earlier message (Fluux Agent).
type Reaction struct {
	MessageID string   `json:"message_id"`
	Emojis    []string `json:"emojis"`
}

// Origin describes where a chat session came from (OpenClaw sessions.json).
type Origin struct {
	Provider string `json:"provider,omitempty"`
	Surface  string `json:"surface,omitempty"`
	ChatType string `json:"chat_type,omitempty"`
	From     string `json:"from,omitempty"`
	Label    string `json:"label,omitempty"`
}

// Key returns the stable key of the entry: the same source record always
// yields the same key, wherever and however often it is read, and two
// distinct records never share one. It is used as the JetStream
// Nats-Msg-Id and as the consumers' idempotency key.
//
// The key is format:host:session:entry_id, followed by :agent_id for an
// entry of a subagent file. A subagent file may replay records of its
// session's main transcript with their ids (Claude Code's compaction and
// side-question files, agent-acompact-*.jsonl and
// agent-aside_question-*.jsonl): those replays are records of their own
// and must reach the stream, not be dropped as duplicates of the main
// transcript's lines.
//
// A copy of a record in another session (a resumed or forked transcript)
// has a different key; such copies are reconciled by UsageKey and EntryID,
// not by Key.
func (e *Entry) Key() string {
	n := len(e.Format) + len(e.Host) + len(e.SessionID) + len(e.EntryID) + len(e.AgentID) + 4
	b := make([]byte, 0, n)
	b = e.AppendKey(b)
	return string(b)
}

// AppendKey appends [Entry.Key] to b.
func (e *Entry) AppendKey(b []byte) []byte {
	b = append(b, e.Format...)
	b = append(b, ':')
	b = append(b, e.Host...)
	b = append(b, ':')
	b = append(b, e.SessionID...)
	b = append(b, ':')
	b = append(b, e.EntryID...)
	if e.AgentID != "" {
		b = append(b, ':')
		b = append(b, e.AgentID...)
	}
	return b
}
