// Package goose reads Goose's sessions (block/goose): the rows of the
// sessions table of its SQLite database (sessions.db), one per session,
// whose token counters are the session's accumulated totals, updated in
// place after every reply. It turns one session row into one entry
// carrying the session's usage; it does not read the messages table (the
// conversation, which records no usage) and does not follow a database
// (package tail polls it).
//
// # Where the rules come from
//
//   - The database: ~/.local/share/goose/sessions/sessions.db (macOS:
//     ~/Library/Application Support/goose/sessions; GOOSE_PATH_ROOT/data/
//     sessions/sessions.db), table sessions(id, name, working_dir,
//     created_at, updated_at, total_tokens, input_tokens, output_tokens,
//     accumulated_total_tokens, accumulated_input_tokens,
//     accumulated_output_tokens, accumulated_cost (newer versions),
//     provider_name, model_config_json{model_name}, session_type, …) as
//     goose's session_manager.rs creates it (schema version 13 in Goose
//     1.35); the input_/output_/total_tokens columns are the last reply's,
//     the accumulated_ ones the session's sums.
//   - ccusage 20.0.24 (rust/crates/ccusage/src/adapter/goose: loader.rs
//     "SELECT id, model_config_json, provider_name, created_at, … FROM
//     sessions WHERE model_config_json IS NOT NULL"; parser.rs: the
//     accumulated counters, else the last reply's; total − input − output,
//     when positive, is reasoning billed as output; the model is
//     model_config_json.model_name; created_at as Unix seconds or ms, RFC
//     3339 or "YYYY-MM-DD HH:MM:SS" UTC).
//
// # Entries
//
// One entry per session row: Kind message, Role assistant, Meta (a session
// total is no reply), Subtype "session_total", EntryID and usage key
// "goose:<session id>" (the row grows in place: the consumers keep the
// largest), TS created_at, Line updated_at in Unix ms, CWD working_dir,
// Title name. Goose records no cache counters: its input includes what the
// provider read from or wrote to a cache, and is priced as input.
// accumulated_cost, when above 0, is used as recorded.
package goose
