package parquet

import "time"

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
// string, nil for a pointer or map), which is what "absent" means in the
// entry contract; a zero time is a NULL ts. Every optional column is a
// pointer here (nil: NULL), never a value the writer tests for zero:
// parquet-go v0.32.0 finds the zero values of a batch 64 rows at a time
// and, for some patterns of NULLs and values within 64 rows, writes ""
// where NULL was meant (TestWriter_EmptyIsNullWhateverItsNeighbours);
// pointers are written row by row.
type row struct {
	Seq int64  `parquet:"seq,delta"`
	Key string `parquet:"key,delta"`

	Format string  `parquet:"format,dict"`
	Host   *string `parquet:"host,optional,dict"`
	// Labels is a MAP(VARCHAR, VARCHAR), NULL when the entry has none:
	// DuckDB filters it as labels['team'] = 'infra' and lists its keys
	// with map_keys(labels). A map, not a list of key/value structs,
	// because that is what DuckDB indexes by key; its keys are written
	// in byte order.
	Labels *map[string]string `parquet:"labels,optional" parquet-key:",dict" parquet-value:",dict"`
	Path   *string            `parquet:"path,optional,dict"`
	Offset int64              `parquet:"offset,delta"`
	Line   int64              `parquet:"line,delta"`
	Object int32              `parquet:"object"`

	SessionID       string  `parquet:"session_id,dict"`
	EntryID         string  `parquet:"entry_id"`
	ParentID        *string `parquet:"parent_id,optional"`
	ParentSessionID *string `parquet:"parent_session_id,optional,dict"`
	// TS is NULL (nil) for an entry without a time only: an optional
	// int64 is NULL for its zero value, 1970-01-01T00:00:00Z; a time.Time
	// is read back through Unix nanoseconds, which wrap outside
	// 1677–2262. Microseconds name every year a timestamp can.
	TS *int64 `parquet:"ts,optional,timestamp(microsecond:utc)"`

	Kind      string  `parquet:"kind,dict"`
	Role      *string `parquet:"role,optional,dict"`
	Subtype   *string `parquet:"subtype,optional,dict"`
	Text      *string `parquet:"text,optional"`
	Meta      bool    `parquet:"meta"`
	Copy      bool    `parquet:"copy"`
	Truncated bool    `parquet:"truncated"`

	Model      *string  `parquet:"model,optional,dict"`
	Provider   *string  `parquet:"provider,optional,dict"`
	MessageID  *string  `parquet:"message_id,optional"`
	RequestID  *string  `parquet:"request_id,optional"`
	Usage      *usage   `parquet:"usage,optional"`
	UsageKey   *string  `parquet:"usage_key,optional"`
	CostUSD    *float64 `parquet:"cost_usd,optional"`
	StopReason *string  `parquet:"stop_reason,optional,dict"`

	ToolCalls   []toolCall   `parquet:"tool_calls,list"`
	ToolResults []toolResult `parquet:"tool_results,list"`
	// ToolCallsOmitted and ToolResultsOmitted count what an entry too
	// large for a message left out (bus.FitEntryMsg): the views count
	// those tool calls as the indexer does. NULL in files written before
	// they existed, read as 0.
	ToolCallsOmitted   int32        `parquet:"tool_calls_omitted"`
	ToolResultsOmitted int32        `parquet:"tool_results_omitted"`
	Attachments        []attachment `parquet:"attachments,list"`
	Reaction           *reaction    `parquet:"reaction,optional"`

	Sender       *string `parquet:"sender,optional,dict"`
	CWD          *string `parquet:"cwd,optional,dict"`
	GitBranch    *string `parquet:"git_branch,optional,dict"`
	AgentVersion *string `parquet:"agent_version,optional,dict"`
	Sidechain    bool    `parquet:"sidechain"`
	Background   bool    `parquet:"background"`
	AgentID      *string `parquet:"agent_id,optional,dict"`
	AgentType    *string `parquet:"agent_type,optional,dict"`
	Slug         *string `parquet:"slug,optional,dict"`
	Command      *string `parquet:"command,optional,dict"`
	CommandArgs  *string `parquet:"command_args,optional"`
	Title        *string `parquet:"title,optional,dict"`
	Origin       *origin `parquet:"origin,optional"`

	Raw *string `parquet:"raw,optional"`
}

// usage is [schema.Usage] as a struct column: usage.input, usage.output, …
// It is NULL when the entry has no usage, which differs from all-zero
// counters.
type usage struct {
	Input        int64   `parquet:"input"`
	Output       int64   `parquet:"output"`
	CacheRead    int64   `parquet:"cache_read"`
	CacheWrite   int64   `parquet:"cache_write"`
	CacheWrite5m int64   `parquet:"cache_write_5m"`
	CacheWrite1h int64   `parquet:"cache_write_1h"`
	Reasoning    int64   `parquet:"reasoning"`
	Speed        *string `parquet:"speed,optional,dict"`
}

type toolCall struct {
	ID    string  `parquet:"id"`
	Name  string  `parquet:"name,dict"`
	Input *string `parquet:"input,optional"`
}

type toolResult struct {
	ToolCallID string  `parquet:"tool_call_id"`
	IsError    bool    `parquet:"is_error"`
	Content    *string `parquet:"content,optional"`
}

type attachment struct {
	Filename *string `parquet:"filename,optional"`
	MimeType *string `parquet:"mime_type,optional,dict"`
	Size     *string `parquet:"size,optional"`
}

type reaction struct {
	MessageID string   `parquet:"message_id"`
	Emojis    []string `parquet:"emojis,list"`
}

type origin struct {
	Provider *string `parquet:"provider,optional"`
	Surface  *string `parquet:"surface,optional"`
	ChatType *string `parquet:"chat_type,optional"`
	From     *string `parquet:"from,optional"`
	Label    *string `parquet:"label,optional"`
}

// tsMicros returns t as microseconds since the Unix epoch (every year a
// timestamp names fits), 0 for the zero time: the order of rows by ts,
// rows without one among those of 1970-01-01T00:00:00Z.
func tsMicros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

// tsKey returns r's ts as rows are ordered by ([tsMicros]).
func (r *row) tsKey() int64 {
	if r.TS == nil {
		return 0
	}
	return *r.TS
}
