// Package m4dtimes parses the session recordings of the m4dtimes agent SDK
// (github.com/dmorn/m4dtimes/sdk/session): one append-only JSONL file per
// Telegram user, <dir>/<userID>.jsonl, holding every conversation of that
// user for its whole lifetime. It does not locate files nor read the SDK's
// other state.
//
// The format is specified in shared/formats/m4dtimes.md, drawn from the SDK
// as vendored in dmorn/m4d-coso (module version v0.0.0-20260224221404-f36cefa8aeba):
// sdk/session/{event.go,recorder.go,README.md}, sdk/llm/{types.go,anthropic.go}
// and sdk/agent/{agent.go,context.go}.
//
// # Records
//
// A header is written only when the file is empty on open:
//
//	{"type":"session","version":1,"id":"a1b2c3d4","timestamp":"2026-02-24T23:14:59.123456789Z","userId":7756297856}
//
// then one event per llm.Message appended to the user's context:
//
//	{"type":"message","id":"e5f6a7b8","parentId":"a1b2c3d4","timestamp":"…","message":{"role":"user","content":[{"type":"text","text":"Cosa ho oggi?"}]}}
//
// Content blocks are text {text}, tool_use {tool_call:{id,name,arguments}}
// and tool_result {tool_result:{tool_call_id,content,is_error}}; assistant
// messages carry usage {input_tokens,output_tokens}, one Anthropic call each.
//
// # Normalisation
//
//   - Header: Kind=session, SessionID = EntryID = its id, Sender = userId as
//     a decimal string (read exactly as an int64, beyond 2^53 too). The
//     header's id names every later event of the file. After a process
//     restart the SDK writes no new header and the first event has no
//     parentId: it stays in the same session. A file without any header
//     uses the file stem (the user id) as session id, and "-" for a nameless
//     stream. A later header starts a new session from its line on.
//   - message: Kind=message; id → EntryID, parentId → ParentID, timestamp →
//     TS. A user event whose blocks are all tool_result has Role=tool; a
//     user event with no content block at all is Meta. Text joins the text
//     blocks with "\n"; it is always set on user input and otherwise only
//     with parse.Config.Text, as are tool call inputs (arguments, raw JSON)
//     and tool result contents. Sender = the user id on user events.
//   - Usage on assistant events: Usage{Input, Output} (and cache counters
//     should a later SDK keep Anthropic's cache_read_input_tokens /
//     cache_creation_input_tokens), UsageKey = "m4dtimes:" + SessionID + ":"
//   - EntryID, Provider "anthropic". The SDK records no model: Model stays
//     empty, which pricing reports as unpriced.
//   - Messages injected by the SDK's ContextInjector (an assistant event
//     with no user event before it) are ordinary entries.
//   - Ids are 4 random bytes, so they can repeat in a long-lived file: an id
//     already given out earlier in the file gets "<id>.L<n>", and an event
//     without id gets "L<n>".
//   - Unknown event types are Kind=event with Subtype = the type; unknown
//     roles are Kind=event with Subtype "message/<role>"; unknown block
//     types are ignored.
//
// A field of the wrong JSON type, a timestamp that is not RFC 3339 (a
// number of Unix milliseconds is tolerated), a userId or token count that is
// not an exact non-negative integer makes the object a located error
// (parse.ErrBadField) with no entry; a header without id, a message event
// without message or role, a tool_use block without tool_call or a
// tool_result block without tool_result is parse.ErrMissingField. A header
// whose timestamp or userId is bad still names the session of the events
// after it, since the session id needs only the header's id.
package m4dtimes
