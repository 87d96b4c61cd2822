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
// entry, else of the earliest sidechain entry; the host of the earliest
// entry; the latest title, slug and parent; the earliest real prompt.
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
// # Plans and implementations
//
// Claude Code sessions that share a slug are linked: a session whose first
// real prompt starts with "Implement the following plan" is an
// implementation, and the others with its slug are its plan.
package index
