package claude

import "errors"

// Sentinel errors of the claude package. Line errors are the shared
// *schema.DecodeError values of package parse (wrapping parse.ErrBadField,
// parse.ErrMissingField, parse.ErrNotObject or a *jsonl.SyntaxError).
var (
	// ErrBadAgentMeta reports an agent-<id>.meta.json sidecar that is not a
	// JSON object of the expected shape. [ReadAgentMeta] returns it wrapped
	// with the path; the caller should log it and parse the subagent file
	// without an agent type.
	ErrBadAgentMeta = errors.New("claude: bad agent meta file")
)
