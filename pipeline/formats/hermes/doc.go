// Package hermes parses the session rows of Hermes Agent
// (NousResearch/hermes-agent) into normalised entries. Hermes keeps its
// sessions in a SQLite database ($HERMES_HOME/state.db, by default
// ~/.hermes/state.db): one row of its sessions table per session, whose
// token and cost columns it increments after every API call. This
// package parses rows; reading the database (and noticing rows that
// change) is the SQLite source's job (see "Hooking it up").
//
// Sources: hermes-agent's hermes_state.py (the sessions table; its
// update_token_counts increments input_tokens, output_tokens,
// cache_read_tokens, cache_write_tokens, reasoning_tokens,
// estimated_cost_usd and actual_cost_usd) and agent/usage_pricing.py
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
// "source". [Parser.Parse] reads a row per line, so a source can hand rows
// over as lines and the golden files are rows.
//
// # Counting
//
// A row's counters are the session's totals so far, not one call's: the
// row is one entry, Kind message, Role assistant, Meta (not a reply),
// Subtype "session_total", SessionID id, EntryID "session", UsageKey
// "hermes:<id>", TS started_at, Model model, Provider billing_provider
// (normalised: claude → anthropic, openai_codex → openai, gemini,
// google_ai, vertex → google; from the model's name without one),
// ParentSessionID parent_session_id, Title title. Usage: input, output
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
// # Hooking it up
//
// What remains for the SQLite source: open state.db read-only (WAL),
// "SELECT * FROM sessions" (or the columns above), and give each row to
// [Parser.Parse] as a JSON object line of its columns (Line.Number the
// row's ordinal, Path the database's path), on start and again for each
// row whose counters changed; one Parser per database. The format name is
// schema.FormatHermes; the default location
// ${HERMES_HOME:-~/.hermes}/state.db (HERMES_HOME may list several,
// comma-separated, as ccusage reads it).
package hermes
