// Package kilo parses the messages of the Kilo CLI (Kilo-Org/kilocode's
// command-line agent, a fork of OpenCode) into normalised entries. Kilo
// keeps them in a SQLite database (~/.local/share/kilo/kilo.db, or under
// $KILO_DATA_DIR): one row of its message table per message, the message
// as JSON in the data column. This package parses rows; reading the
// database (and noticing rows that change) is the SQLite source's job
// (see "Hooking it up").
//
// Sources: ccusage 20.0.24's Kilo adapter (ryoppippi/ccusage,
// rust/crates/ccusage/src/adapter/kilo: "SELECT id, session_id, data FROM
// message", the fields below) and OpenCode's message schema
// (sst/opencode, MessageV2.Assistant: tokens {input, output, reasoning,
// cache {read, write}}, cost, modelID, providerID, time {created,
// completed}, path {cwd, root}, finish), which Kilo keeps.
//
// # Rows
//
// A row is given as one JSON object, {"id", "session_id", "data"}: the
// message table's columns, data the message object (or the column's text,
// a JSON string holding it). [Parser.Parse] reads a row per line, so a
// source can hand rows over as lines and the golden files are rows.
//
// SessionID is data.sessionID (or session_id), else the row's session_id;
// EntryID and MessageID the message id (data.id), else "row:<row id>"; TS
// time.created (Unix milliseconds; below 10¹² seconds); ParentID parentID;
// CWD path.cwd; Model modelID (a user message: model.modelID); Provider
// providerID; StopReason finish. A user message is Kind message, Role user;
// an assistant message Kind message, Role assistant. Text lives in
// OpenCode's part table and is not read.
//
// # Counting
//
// An assistant message's tokens: input (without the cache), output
// (without the reasoning), reasoning, cache.read, cache.write; total.
// Usage is input, output + reasoning (+ what total holds beyond the
// parts, as ccusage counts it), cache read, cache write, reasoning.
// UsageKey "kilo:<session>:<message id>": a message is updated in place
// while it streams, so a source that hands a changed row over again gives
// the same key, and the call counts once at its largest. cost, when above
// 0, is the recorded cost, used as recorded (ccusage uses a recorded 0
// too; here a 0 is priced from the table). A message without a time is
// still an entry (ccusage drops it); one without modelID has no model.
//
// # Hooking it up
//
// Done by the SQLite source ([ReadDB] offline, the tailer's database
// kinds live, both through [Parser.Row]): open kilo.db read-only (WAL: the
// CLI writes while it runs), run "SELECT id, session_id, data FROM
// message" (in time_created order where the column exists), and give each
// row to [Parser.Parse] as the line {"id":…,"session_id":…,"data":<data>}
// (Line.Number the row's ordinal, Path the database's path), on start
// and again for each row whose time_updated advanced; one Parser per
// database. The format name is schema.FormatKilo; the default location
// ${KILO_DATA_DIR:-~/.local/share/kilo}/kilo.db.
package kilo
