package benchmarks

import (
	"strings"
	"unsafe"
)

// line is what the format parsers need from one transcript line of any
// of the three formats: one Go struct whose JSON paths are the union of
// the Claude Code, pi and Codex paths, so that every implementation does
// the same work on every line. Text fields (message text, tool results,
// thinking, image data) are not extracted, only skipped and validated.
//
// C is the type of message.content, which is a string or an array of
// blocks in Claude Code user lines: each library gets its own named type
// whose UnmarshalJSON re-enters that library, the idiomatic way to decode
// such a union with a reflection-based decoder.
type line[C ~[]block] struct {
	// Claude Code.
	Type        string `json:"type"` // also pi and Codex
	UUID        string `json:"uuid"`
	ParentUUID  string `json:"parentUuid"`
	SessionID   string `json:"sessionId"`
	Timestamp   string `json:"timestamp"` // also pi and Codex
	RequestID   string `json:"requestId"`
	IsSidechain bool   `json:"isSidechain"`
	IsMeta      bool   `json:"isMeta"`

	// pi.
	ID       string `json:"id"`
	ParentID string `json:"parentId"`

	Message message[C] `json:"message"` // Claude Code and pi
	Payload payload    `json:"payload"` // Codex
}

type message[C ~[]block] struct {
	ID         string `json:"id"`
	Model      string `json:"model"`
	Role       string `json:"role"`
	StopReason string `json:"stop_reason"`
	Provider   string `json:"provider"`  // pi
	Timestamp  int64  `json:"timestamp"` // pi, Unix ms
	Usage      usage  `json:"usage"`
	Content    C      `json:"content"`
}

type usage struct {
	// Claude Code.
	InputTokens              int64         `json:"input_tokens"`
	OutputTokens             int64         `json:"output_tokens"`
	CacheCreationInputTokens int64         `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64         `json:"cache_read_input_tokens"`
	CacheCreation            cacheCreation `json:"cache_creation"`

	// pi.
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
	Cost       cost  `json:"cost"`
}

type cacheCreation struct {
	Ephemeral5m int64 `json:"ephemeral_5m_input_tokens"`
	Ephemeral1h int64 `json:"ephemeral_1h_input_tokens"`
}

type cost struct {
	Total float64 `json:"total"`
}

// block is one element of message.content: Claude Code text, thinking,
// tool_use, tool_result and image blocks, pi text and toolCall blocks.
type block struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	ToolUseID string `json:"tool_use_id"`
	IsError   bool   `json:"is_error"`
}

type payload struct {
	Type  string    `json:"type"`
	ID    string    `json:"id"`
	Model string    `json:"model"`
	Info  tokenInfo `json:"info"`
}

type tokenInfo struct {
	Total tokenTotals `json:"total_token_usage"`
}

type tokenTotals struct {
	InputTokens           int64 `json:"input_tokens"`
	CachedInputTokens     int64 `json:"cached_input_tokens"`
	OutputTokens          int64 `json:"output_tokens"`
	ReasoningOutputTokens int64 `json:"reasoning_output_tokens"`
	TotalTokens           int64 `json:"total_tokens"`
}

// record is the extraction result every implementation hands over.
type record = line[[]block]

// asRecord views a library's line as a record: line[C] and record have
// the same memory layout because C's underlying type is []block.
func asRecord[C ~[]block](l *line[C]) *record {
	return (*record)(unsafe.Pointer(l))
}

// clone returns a copy of r that owns its strings (implementations may
// hand over strings aliasing their input or reused buffers) and has a nil
// Content when empty, so that records compare with reflect.DeepEqual.
func clone(r *record) record {
	c := *r
	for _, s := range []*string{&c.Type, &c.UUID, &c.ParentUUID, &c.SessionID, &c.Timestamp, &c.RequestID,
		&c.ID, &c.ParentID, &c.Message.ID, &c.Message.Model, &c.Message.Role, &c.Message.StopReason,
		&c.Message.Provider, &c.Payload.Type, &c.Payload.ID, &c.Payload.Model} {
		*s = strings.Clone(*s)
	}
	c.Message.Content = nil
	for _, b := range r.Message.Content {
		c.Message.Content = append(c.Message.Content, block{Type: strings.Clone(b.Type), ID: strings.Clone(b.ID),
			Name: strings.Clone(b.Name), ToolUseID: strings.Clone(b.ToolUseID), IsError: b.IsError})
	}
	return c
}
