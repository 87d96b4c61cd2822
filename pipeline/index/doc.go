// Package index keeps per-session aggregates of normalised entries: turns,
// messages, API calls, tool calls and errors, the four token counters,
// cost, models, compactions and subagents, counted by the rules of
// DESIGN.md ("Aggregates"). The offline `sessionpipe sessions` command and
// the live indexer share the [Aggregator], so both give the same numbers.
//
// # Counting once
//
// The same record can reach the aggregator several times: a resumed Claude
// Code session replays the lines of the session it resumes, Claude Code's
// compaction and side-question files (subagents/agent-acompact-*.jsonl,
// agent-aside_question-*.jsonl) replay main-transcript records as
// sidechain lines, pi and OpenClaw forks and archives copy entries
// verbatim, one Claude API response is written over several lines, and a
// stream redelivers after a restart. The Aggregator therefore counts
// facts, not lines: an entry (identified by format, entry id and
// timestamp), an assistant message (by message id for Claude Code, whose
// responses span lines; by the record's own id in every other format,
// never by a provider's response id, which need not be unique) and an API
// call (by usage key) each count once.
//
// # Which occurrence counts
//
// A fact counts in one of its occurrences, chosen by a rule over all of
// them, so that the result does not depend on the order in which files,
// or the lines of different files, arrive; when a better occurrence
// arrives later, the counts move to it. In order:
//
//  1. For an API call, the occurrence with the largest token total: a
//     streamed response grows, the last line holds the whole.
//  2. A main-transcript occurrence before a sidechain replay: a compaction
//     or side-question copy never takes a record from the transcript it
//     copies.
//  3. The earliest timestamp (an unknown one last): a record counts where
//     it was first written.
//  4. The session created first: its header's time, else its first
//     entry's; a parent before a child that names it; then the session
//     whose activity ended first (a resumed session goes on after the one
//     it copies); then the session id.
//  5. The position: agent id, line, object, then path (two verbatim copies
//     of one file).
//
// Session fields drawn from several entries follow the same idea: the
// working directory of a header, else of the earliest main-transcript
// entry, else of the earliest sidechain entry; the latest title, slug and
// parent; the earliest real prompt.
//
// # Identity
//
// A session is identified by its format (the agent), its host and its id:
// ids are unique only within an agent, and within a host for some
// (m4dtimes names sessions by Telegram user id, Fluux by JID), so two
// agents or two hosts may each have a session "session-alpha", and they
// are two sessions. The facts of m4dtimes and Fluux, whose record ids are
// unique only within a host as well, include the host in their identity;
// those of the other formats (UUIDs, content-derived usage keys) do not,
// so a transcript copied to a second host counts once (rule 4 ends with
// the host). [Aggregator.Find] lists the sessions of an id.
//
// Whether a real user input starts a turn depends on the inputs and
// replies before it in its own file, so the entries of one file must be
// added in file order; files may interleave freely.
//
// # Arithmetic
//
// Token sums saturate at the int64 limit instead of wrapping; cost is
// summed in integer nano-dollars (each call rounded to the nearest one),
// so that it is exact and independent of the order of addition.
//
// # The indexer
//
// The [Indexer] is the live consumer: a durable JetStream consumer
// (pipeline/bus) applies the stream's entries to an Aggregator over a
// [store.Store] (pipeline/index/store), a pebble database under the data
// directory, whose records this package encodes (codec.go). The Aggregator's
// maps are then a write-back cache: facts, sessions, file turn states and
// rollup cells are read from the store when not cached, changed in
// memory, and written at each commit in one synced batch together with
// the last stream sequence applied, the stream's identity, the alert
// state and the running totals. Memory follows the sessions active
// lately: the cache keeps about [DefaultMaxFacts] facts and whatever they
// reference, the rest of the history (tens of millions of facts) stays on
// disk behind bloom filters and a bounded block cache. Nearly every fact
// looked up is new, so a fact is read with [store.Store.Probe]: the bloom
// filters of every level answer a missing key without a data block read.
// In a state that held no fact of a kind when it was opened, the cache
// keeps a Bloom filter of the facts it lets go of (the only way out of
// it): a fact neither cached nor in the filter is new, and the store is
// not asked at all.
//
// A restart resumes at the sequence after the one committed (the durable
// consumer is repositioned there, whatever it acknowledged), so an entry
// is applied exactly once to the committed state; a redelivered message at
// or below the applied sequence is skipped. A state without a sequence is
// built from the start of the stream. A state whose stream identity
// differs from the stream's (deleted and recreated, another cluster), or
// that does not decode, is discarded and rebuilt, never applied to; so is a
// state of another [StoreLayout] (one written before sessions were keyed
// by host), whose keys would be misread.
// Entries that aged out of the stream before they were applied are
// reported (a log line, a metric): the aggregates lack them.
//
// Duplicates past the stream's duplicate window (a tailer that re-sent
// acknowledged lines after a long outage) reach the indexer as new
// messages; they change nothing, since every count is a fact counted once.
//
// # Rollups and turns
//
// Every counted API call is also in a cell of a cube (UTC hour, host,
// format, model, project): [Aggregator.Usage] sums cells by any of them,
// by day or by hour. With Config.Turns each session keeps a ledger of its
// turn starts and calls, from which [Aggregator.Turns] gives tokens and
// cost per turn. Both move with the facts they come from.
//
// # Plans and implementations
//
// Claude Code sessions that share a slug are linked: a session whose first
// real prompt starts with "Implement the following plan" is an
// implementation, and the others with its slug are its plan.
//
// # Packages
//
// This package is the counting rules and the daemon. pipeline/index/store
// holds the state (pebble, the only package that imports it): this
// package encodes its own records (codec.go) and keys them, the store
// keeps bytes. pipeline/index/api serves an Indexer over HTTP (API,
// dashboard, live events) and holds the API's Go client;
// pipeline/index/alert is the alert rules. This package imports schema,
// pipeline/bus (the stream), index/store and index/alert; never
// index/api.
package index
