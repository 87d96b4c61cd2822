package schema

import "slices"

// The field table: every field of [Entry], at every depth, with what each
// form of the entry does with it. It is the one place a field is
// described; TestFields checks it against [Entry] by reflection (a field
// added to Entry and not here fails there), and the round-trip test of
// pipeline/export (TestEntryFieldTable_*) takes an entry with every field
// set through each form and checks it against this table: the JSON
// encoder and decoders, the batch message, the Parquet row (pack, unpack,
// a file read back by DuckDB), redaction and fitting.
//
// The hot paths keep their hand-written code (a switch on the JSON name,
// a packed row, a list of text fields): they are checked against the
// table, not driven by it. What costs nothing at run time is derived from
// it: the decoder's list of known names ([FieldNames]).

// FieldType is how a field's value is held.
type FieldType uint8

// Field types.
const (
	TypeString  FieldType = iota + 1 // string, or a string type (Format, Kind, Role)
	TypeInt                          // int or int64
	TypeFloat                        // float64
	TypeBool                         // bool
	TypeTime                         // time.Time, RFC 3339 in JSON, microseconds in Parquet
	TypeJSON                         // json.RawMessage, embedded in the JSON as is, text in Parquet
	TypeObject                       // a struct (through a pointer): its fields follow, named parent.child
	TypeList                         // a slice of structs: its element's fields follow, named parent.child
	TypeStrings                      // []string
	TypeLabels                       // map[string]string
)

// Redaction is what pipeline/redact does to a field.
type Redaction uint8

// Redactions.
const (
	Kept       Redaction = iota // never changed by redaction
	RedactText                  // secrets replaced as text, emptied in metadata mode
	RedactJSON                  // secrets replaced inside the JSON, emptied in metadata mode
)

// Fitting is what bus.FitEntryMsg does to a field of an entry too large
// for a message, in the order the values are listed.
type Fitting uint8

// Fittings.
const (
	FitKept    Fitting = iota // never changed
	FitDropped                // first step: dropped whole
	FitCut                    // second step: cut to a common length (on a character boundary)
	FitWhole                  // second step: kept whole when within the common length, else left out
	FitOmitted                // third step: elements left out from the end, counted in a FitCount field
	FitCount                  // set by fitting: counts the elements left out
	FitMark                   // set by fitting: marks a shortened entry
)

// Field describes one field of [Entry] or of a struct it holds.
type Field struct {
	// JSON is the field's path in the canonical JSON: its name, after its
	// parent's path and a dot for a field of a struct or of a list's
	// elements ("usage.input", "tool_calls.input").
	JSON string
	// Go is the field's path in Go, dotted the same way ("Usage.Input",
	// "ToolCalls.Input").
	Go string
	// Type is how the value is held; Pointer reports a pointer, nil when
	// absent (Usage, CostUSD, Reaction, Origin).
	Type    FieldType
	Pointer bool
	// Omitempty reports a field the JSON leaves out when it holds its
	// zero value; the others are always written.
	Omitempty bool
	// Redact is what redaction does to it; Fit what fitting does.
	Redact Redaction
	Fit    Fitting
	// Column is its Parquet column path (dotted as JSON); "" for none.
	Column string
}

// fields is the table, in the declaration order of the structs (which is
// the order of the canonical JSON).
var fields = [...]Field{
	{JSON: "format", Go: "Format", Type: TypeString, Column: "format"},
	{JSON: "host", Go: "Host", Type: TypeString, Omitempty: true, Column: "host"},
	{JSON: "labels", Go: "Labels", Type: TypeLabels, Omitempty: true, Column: "labels"},
	{JSON: "path", Go: "Path", Type: TypeString, Omitempty: true, Column: "path"},
	{JSON: "offset", Go: "Offset", Type: TypeInt, Column: "offset"},
	{JSON: "line", Go: "Line", Type: TypeInt, Column: "line"},
	{JSON: "object", Go: "Object", Type: TypeInt, Omitempty: true, Column: "object"},

	{JSON: "session_id", Go: "SessionID", Type: TypeString, Column: "session_id"},
	{JSON: "entry_id", Go: "EntryID", Type: TypeString, Column: "entry_id"},
	{JSON: "parent_id", Go: "ParentID", Type: TypeString, Omitempty: true, Column: "parent_id"},
	{JSON: "parent_session_id", Go: "ParentSessionID", Type: TypeString, Omitempty: true, Column: "parent_session_id"},
	{JSON: "ts", Go: "TS", Type: TypeTime, Column: "ts"},

	{JSON: "kind", Go: "Kind", Type: TypeString, Column: "kind"},
	{JSON: "role", Go: "Role", Type: TypeString, Omitempty: true, Column: "role"},
	{JSON: "subtype", Go: "Subtype", Type: TypeString, Omitempty: true, Column: "subtype"},
	{JSON: "text", Go: "Text", Type: TypeString, Omitempty: true, Redact: RedactText, Fit: FitCut, Column: "text"},
	{JSON: "meta", Go: "Meta", Type: TypeBool, Omitempty: true, Column: "meta"},
	{JSON: "copy", Go: "Copy", Type: TypeBool, Omitempty: true, Column: "copy"},
	{JSON: "truncated", Go: "Truncated", Type: TypeBool, Omitempty: true, Fit: FitMark, Column: "truncated"},

	{JSON: "model", Go: "Model", Type: TypeString, Omitempty: true, Column: "model"},
	{JSON: "provider", Go: "Provider", Type: TypeString, Omitempty: true, Column: "provider"},
	{JSON: "message_id", Go: "MessageID", Type: TypeString, Omitempty: true, Column: "message_id"},
	{JSON: "request_id", Go: "RequestID", Type: TypeString, Omitempty: true, Column: "request_id"},
	{JSON: "usage", Go: "Usage", Type: TypeObject, Pointer: true, Omitempty: true, Column: "usage"},
	{JSON: "usage.input", Go: "Usage.Input", Type: TypeInt, Column: "usage.input"},
	{JSON: "usage.output", Go: "Usage.Output", Type: TypeInt, Column: "usage.output"},
	{JSON: "usage.cache_read", Go: "Usage.CacheRead", Type: TypeInt, Column: "usage.cache_read"},
	{JSON: "usage.cache_write", Go: "Usage.CacheWrite", Type: TypeInt, Column: "usage.cache_write"},
	{JSON: "usage.cache_write_5m", Go: "Usage.CacheWrite5m", Type: TypeInt, Omitempty: true, Column: "usage.cache_write_5m"},
	{JSON: "usage.cache_write_1h", Go: "Usage.CacheWrite1h", Type: TypeInt, Omitempty: true, Column: "usage.cache_write_1h"},
	{JSON: "usage.reasoning", Go: "Usage.Reasoning", Type: TypeInt, Omitempty: true, Column: "usage.reasoning"},
	{JSON: "usage.speed", Go: "Usage.Speed", Type: TypeString, Omitempty: true, Column: "usage.speed"},
	{JSON: "usage_key", Go: "UsageKey", Type: TypeString, Omitempty: true, Column: "usage_key"},
	{JSON: "cost_usd", Go: "CostUSD", Type: TypeFloat, Pointer: true, Omitempty: true, Column: "cost_usd"},
	{JSON: "stop_reason", Go: "StopReason", Type: TypeString, Omitempty: true, Column: "stop_reason"},

	{JSON: "tool_calls", Go: "ToolCalls", Type: TypeList, Omitempty: true, Fit: FitOmitted, Column: "tool_calls"},
	{JSON: "tool_calls.id", Go: "ToolCalls.ID", Type: TypeString, Column: "tool_calls.id"},
	{JSON: "tool_calls.name", Go: "ToolCalls.Name", Type: TypeString, Column: "tool_calls.name"},
	{JSON: "tool_calls.input", Go: "ToolCalls.Input", Type: TypeJSON, Omitempty: true, Redact: RedactJSON, Fit: FitWhole, Column: "tool_calls.input"},
	{JSON: "tool_results", Go: "ToolResults", Type: TypeList, Omitempty: true, Fit: FitOmitted, Column: "tool_results"},
	{JSON: "tool_results.tool_call_id", Go: "ToolResults.ToolCallID", Type: TypeString, Column: "tool_results.tool_call_id"},
	{JSON: "tool_results.is_error", Go: "ToolResults.IsError", Type: TypeBool, Omitempty: true, Column: "tool_results.is_error"},
	{JSON: "tool_results.content", Go: "ToolResults.Content", Type: TypeString, Omitempty: true, Redact: RedactText, Fit: FitCut, Column: "tool_results.content"},
	{JSON: "tool_calls_omitted", Go: "ToolCallsOmitted", Type: TypeInt, Omitempty: true, Fit: FitCount, Column: "tool_calls_omitted"},
	{JSON: "tool_results_omitted", Go: "ToolResultsOmitted", Type: TypeInt, Omitempty: true, Fit: FitCount, Column: "tool_results_omitted"},
	{JSON: "attachments", Go: "Attachments", Type: TypeList, Omitempty: true, Column: "attachments"},
	{JSON: "attachments.filename", Go: "Attachments.Filename", Type: TypeString, Omitempty: true, Column: "attachments.filename"},
	{JSON: "attachments.mime_type", Go: "Attachments.MimeType", Type: TypeString, Omitempty: true, Column: "attachments.mime_type"},
	{JSON: "attachments.size", Go: "Attachments.Size", Type: TypeString, Omitempty: true, Column: "attachments.size"},
	{JSON: "reaction", Go: "Reaction", Type: TypeObject, Pointer: true, Omitempty: true, Column: "reaction"},
	{JSON: "reaction.message_id", Go: "Reaction.MessageID", Type: TypeString, Column: "reaction.message_id"},
	{JSON: "reaction.emojis", Go: "Reaction.Emojis", Type: TypeStrings, Column: "reaction.emojis"},

	{JSON: "sender", Go: "Sender", Type: TypeString, Omitempty: true, Column: "sender"},
	{JSON: "cwd", Go: "CWD", Type: TypeString, Omitempty: true, Column: "cwd"},
	{JSON: "git_branch", Go: "GitBranch", Type: TypeString, Omitempty: true, Column: "git_branch"},
	{JSON: "agent_version", Go: "AgentVersion", Type: TypeString, Omitempty: true, Column: "agent_version"},
	{JSON: "sidechain", Go: "Sidechain", Type: TypeBool, Omitempty: true, Column: "sidechain"},
	{JSON: "background", Go: "Background", Type: TypeBool, Omitempty: true, Column: "background"},
	{JSON: "agent_id", Go: "AgentID", Type: TypeString, Omitempty: true, Column: "agent_id"},
	{JSON: "agent_type", Go: "AgentType", Type: TypeString, Omitempty: true, Column: "agent_type"},
	{JSON: "slug", Go: "Slug", Type: TypeString, Omitempty: true, Column: "slug"},
	{JSON: "command", Go: "Command", Type: TypeString, Omitempty: true, Column: "command"},
	{JSON: "command_args", Go: "CommandArgs", Type: TypeString, Omitempty: true, Redact: RedactText, Column: "command_args"},
	{JSON: "title", Go: "Title", Type: TypeString, Omitempty: true, Redact: RedactText, Column: "title"},
	{JSON: "origin", Go: "Origin", Type: TypeObject, Pointer: true, Omitempty: true, Column: "origin"},
	{JSON: "origin.provider", Go: "Origin.Provider", Type: TypeString, Omitempty: true, Column: "origin.provider"},
	{JSON: "origin.surface", Go: "Origin.Surface", Type: TypeString, Omitempty: true, Column: "origin.surface"},
	{JSON: "origin.chat_type", Go: "Origin.ChatType", Type: TypeString, Omitempty: true, Column: "origin.chat_type"},
	{JSON: "origin.from", Go: "Origin.From", Type: TypeString, Omitempty: true, Column: "origin.from"},
	{JSON: "origin.label", Go: "Origin.Label", Type: TypeString, Omitempty: true, Column: "origin.label"},

	{JSON: "raw", Go: "Raw", Type: TypeJSON, Omitempty: true, Redact: RedactJSON, Fit: FitDropped, Column: "raw"},
}

// Fields returns the field table of [Entry]: every field at every depth,
// a struct's or list's fields right after it, in declaration order. The
// slice is the caller's.
func Fields() []Field { return slices.Clone(fields[:]) }

// FieldNames returns the JSON names of the fields directly under parent
// (a [Field.JSON] path of an object or list; "" for the entry itself), in
// order: what a decoder of that object knows.
func FieldNames(parent string) []string {
	var names []string
	for i := range fields {
		f := &fields[i]
		p, name := splitPath(f.JSON)
		if p == parent {
			names = append(names, name)
		}
	}
	return names
}

// splitPath splits a dotted path into its parent and last name.
func splitPath(path string) (parent, name string) {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '.' {
			return path[:i], path[i+1:]
		}
	}
	return "", path
}
