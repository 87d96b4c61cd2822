// Package index keeps per-session aggregates of normalised entries: turns,
// messages, API calls, tool calls and errors, the four token counters,
// cost, models, compactions and subagents, counted by the rules of
// DESIGN.md ("Aggregates"). The offline `sessionpipe sessions` command and
// the live indexer share the [Aggregator], so both give the same numbers.
//
// # Counting once
//
// The same record can reach the aggregator several times: a resumed Claude
// Code session replays the lines of the session it resumes, pi and OpenClaw
// forks and compactions copy entries verbatim, one Claude API response is
// written over several lines, and a stream redelivers after a restart. The
// Aggregator therefore counts facts, not lines: an entry (identified by
// format, entry id and timestamp), an assistant response (by message id)
// and an API call (by usage key) each count once, in the session where they
// were first written: the earliest timestamp wins, and on a tie the session
// created first (its header's time, else its first entry's; a parent before
// the child that names it; then the session whose activity ended first,
// which puts a resumed session after the one it copies). For usage the
// occurrence with the largest total wins first, because a streamed response
// grows.
//
// # Plans and implementations
//
// Claude Code sessions that share a slug are linked: a session whose first
// real prompt starts with "Implement the following plan" is an
// implementation, and the others with its slug are its plan.
package index
