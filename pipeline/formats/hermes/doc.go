// Package hermes parses the session rows of Hermes Agent
// (NousResearch/hermes-agent) into normalised entries. Hermes keeps its
// sessions in a SQLite database ($HERMES_HOME/state.db, by default
// ~/.hermes/state.db): one row of its sessions table per session, whose
// token and cost columns it increments after every API call. This
// package parses rows and reads the database (see "Reading the
// database"); noticing the rows that change is the tailer's job.
//
// Sources: hermes-agent's hermes_state.py and hermes_state_common.py
// (SCHEMA_SQL: the sessions table; profiles' homes
// <root>/profiles/<name> in hermes_constants.py), hermes_state_usage.py
// (its update_token_counts, run by a background writer, increments
// input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
// reasoning_tokens, estimated_cost_usd and actual_cost_usd) and
// agent/usage_pricing.py
// (CanonicalUsage: input_tokens is the input without the cache reads and
// writes; reasoning is telemetry within the output), and ccusage 20.0.24's
// Hermes adapter (ryoppippi/ccusage,
// rust/crates/ccusage/src/adapter/hermes: the columns it selects, actual
// cost before estimated, the provider names).
//
// # Rows
//
// A row is given as one JSON object of its columns: "id", "model",
// "billing_provider", "started_at" (Unix seconds, a real), "ended_at",
// "message_count", "api_call_count", "input_tokens", "output_tokens",
// "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
// "estimated_cost_usd", "actual_cost_usd", "parent_session_id", "title",
// "source", "cwd". [Parser.Parse] reads a row per line, so a source can
// hand rows over as lines and the golden files are rows.
//
// # Counting
//
// A row's counters are the session's totals so far, not one call's: the
// row is one entry, Kind message, Role assistant, Meta (not a reply),
// Subtype "session_total", SessionID id, EntryID "session", UsageKey
// "hermes:<id>", TS started_at, Model model, Provider billing_provider
// (normalised: claude → anthropic, openai_codex → openai, gemini,
// google_ai, vertex → google; from the model's name without one),
// ParentSessionID parent_session_id, Title title, CWD cwd. Usage: input, output
// (which holds the reasoning), cache read, cache write, reasoning. The row
// given again as it grows keeps its key, and the aggregator keeps the
// largest total: the session counts once, at its last state, as one API
// call. The recorded cost is actual_cost_usd when above 0, else
// estimated_cost_usd when above 0 (as ccusage); else the table prices the
// totals as one call. A row without model or without any usage is an
// event (ccusage skips it).
//
// ccusage 20.0.24 adds reasoning_tokens to the output and total (Hermes's
// output already holds them), so its totals exceed these by the
// reasoning.
//
// # Reading the database
//
// [Open] opens state.db read-only (mode=ro, never immutable: Hermes runs
// in WAL mode and writes it meanwhile; a reader neither waits for nor
// blocks it) and checks the schema before any row is read: a sessions
// table with id, model, started_at, input_tokens and output_tokens, else
// [ErrNotDatabase] (the name state.db is generic: [DatabaseName]). A
// column an older Hermes lacks is left out of the row. [DB.Rows] reads
// every row in one read, each as a [Row]: its columns as a JSON object,
// its rowid (the entry's Line), its activity (the latest of started_at,
// ended_at, last_activity_at) and [Row.Version]; [Parser.Row] parses one;
// [ReadDB] reads a database whole. Hermes's token writer stamps no time
// when it adds to the counters, so a row that changed is told by its
// version, not by a time column. The default location is
// ${HERMES_HOME:-~/.hermes}/state.db (HERMES_HOME may list several,
// comma-separated, as ccusage reads it) and, for each named profile,
// <home>/profiles/<name>/state.db (which ccusage does not read).
package hermes
