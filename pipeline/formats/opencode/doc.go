// Package opencode reads OpenCode's sessions (sst/opencode, anomalyco/opencode):
// the rows of the message table of its SQLite database (opencode.db, since
// 1.2) and, before 1.2, the message documents of storage/message/. It turns
// one message into one entry; it does not follow a database (package tail
// polls it) and reads no part rows (message text and tool calls live there).
//
// # Where the rules come from
//
//   - The database: packages/opencode/src/session/session.sql.ts (tables
//     session, message, part; message(id, session_id, time_created,
//     time_updated, data) where data is the message JSON without id and
//     sessionID; time_updated is set by every update, in Unix ms) and
//     storage/schema.sql.ts (the Timestamps columns). The database is
//     ~/.local/share/opencode/opencode.db ($XDG_DATA_HOME/opencode;
//     opencode-<channel>.db for other release channels), in WAL mode.
//   - The message: session/message-v2.ts (Assistant: time.created,
//     parentID, modelID, providerID, path.cwd, cost, tokens{input, output,
//     reasoning, cache{read, write}, total}, finish, error; User:
//     time.created, model{providerID, modelID}).
//   - The counters: session/index.ts getUsage. tokens.input already
//     excludes the cache reads and writes (OpenCode subtracts them for the
//     providers that include them), and tokens.reasoning is billed on top
//     of tokens.output ("charge reasoning tokens at the same rate as
//     output tokens"): so input = tokens.input, output = tokens.output +
//     tokens.reasoning (reasoning kept in Usage.Reasoning), cache read and
//     write as recorded, the disjoint convention.
//   - An assistant message is updated as it streams (processor.ts,
//     "finish-step": tokens set to the step's, cost added): the row is
//     written again under its id, so every version of it carries the usage
//     key "opencode:<session>:<message id>" and the consumers count the
//     largest. cost is OpenCode's own computation and is used as recorded
//     (CostUSD; a recorded 0 is no price, see pipeline/price).
//   - ccusage 20.0.24 (rust/crates/ccusage/src/adapter/opencode: loader.rs
//     reads "SELECT id, session_id, data FROM message" read-only, then the
//     storage/message/**/*.json files, each message once by id, the
//     database first; parser.rs: a message counts with tokens, a modelID
//     and a providerID; a message whose only counter is tokens.total counts
//     it as output; a positive cost is used as recorded). It counts
//     tokens.output without tokens.reasoning.
//
// # Entries
//
// One entry per message row: Kind message, Role user or assistant (an
// unknown role is an event), EntryID and MessageID the message id, TS
// time.created (the same for every version of the row, so the versions
// are one fact), Line the row's time_updated (so each version is an
// occurrence of its own in the Parquet views), Path "<database>#<session>"
// (a session's messages are one sequence for the turn rules, as a file's
// lines are), ParentSessionID, CWD and Title from the session row.
package opencode
