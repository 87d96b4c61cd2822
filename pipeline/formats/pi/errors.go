package pi

import "errors"

// Sentinel errors of the pi package. Transcript line errors are
// *schema.DecodeError values wrapping the sentinels of package parse
// (parse.ErrNotObject, parse.ErrMissingField, parse.ErrBadField) or a
// *jsonl.SyntaxError; the caller counts them, dead-letters the line and
// goes on with the next one.
var (
	// ErrSessionStore reports a sessions.json that is not a JSON object of
	// session entries, or an entry of it that cannot be decoded. Entries
	// that decode are still returned by [ReadSessionsJSON].
	ErrSessionStore = errors.New("pi: bad sessions.json")
)
