// Package kimi parses Kimi CLI's wire logs ($KIMI_SHARE_DIR, else
// ~/.kimi: sessions/<work-dir hash>/<session>/wire.jsonl, and a
// subagent's <session>/subagents/<agent>/wire.jsonl) into normalised
// entries. The context.jsonl beside each holds the model's context, not
// its usage, and is not read; nor, by default, are the sessions kimi vis
// imports (imported_sessions/<session>/wire.jsonl, copies of sessions
// of another machine or directory; given as PATH they are read, and a
// copy's calls share their source's keys). The standalone Kimi Code (~/.kimi-code,
// "usage.record" lines that ccusage 20.0.24 also reads) is another
// program whose format we could not read the source of; it is not read.
//
// # Sources
//
// MoonshotAI/kimi-cli (Apache-2.0, read at 4a550ef, 2026-07-16):
// src/kimi_cli/wire/file.py (the first line is the header {"type":
// "metadata", "protocol_version"}; every other line a record
// {"timestamp": time.time(), "message": {"type": <class name>,
// "payload": model_dump()}}), src/kimi_cli/wire/types.py (the message
// types), packages/kosong/src/kosong/chat_provider/__init__.py
// (TokenUsage {input_other, output, input_cache_read,
// input_cache_creation}: input_other excludes the cache reads and
// writes), src/kimi_cli/soul/kimisoul.py (one StatusUpdate with the
// step's token_usage and message_id, the provider's response id, after
// each step's LLM call), src/kimi_cli/subagents/runner.py (a subagent
// writes its own wire.jsonl and forwards each event to its parent wrapped
// in a SubagentEvent), src/kimi_cli/session_fork.py (a fork copies the
// source's wire lines, unchanged, into a new session), docs/en/
// configuration/data-locations.md and env-vars.md (KIMI_SHARE_DIR).
//
// ccusage (ryoppippi/ccusage, rust/crates/ccusage/src/adapter/kimi, read
// at 5816e64, and the 20.0.24 binary run on our fixtures): reads
// ${KIMI_DATA_DIR:-~/.kimi}/sessions/**/wire.jsonl; a top-level
// StatusUpdate with token_usage is one call (input input_other, output
// output, cache read input_cache_read, cache write input_cache_creation);
// the session is the wire file's directory (so a subagent's log is a
// session of its own, and a SubagentEvent is skipped); the model is the
// legacy config.json's "model", else kimi-for-coding, priced as Moonshot's
// kimi-k2.5 before 2026-04-20T15:28:10.072Z and kimi-k2.6 from then on.
//
// # Lines
//
// EntryID is derived from the line (a record has no id), TS the
// timestamp (seconds, kept to the microsecond), SessionID the name of the
// directory wire.jsonl is in (the session id); in a subagent's log
// AgentID is the subagent's id and every entry is Sidechain. Subtype is
// the message type.
//
//   - the metadata header: Kind session.
//   - TurnBegin, SteerInput: a user message, its text user_input (a
//     string, or the text parts of a list of content parts).
//   - StatusUpdate with a non-zero token_usage: the step's assistant
//     message (see Counting); without: an event.
//   - ContentPart: an event (its text, for a text part, with Config.Text).
//   - ToolCall: an event carrying the tool call {id, function.name,
//     function.arguments}.
//   - ToolResult: a tool message, an error when return_value.is_error.
//   - CompactionBegin: a compaction.
//   - SubagentEvent: Sidechain, AgentID payload.agent_id, AgentType
//     payload.subagent_type; the event it wraps (unwrapped through nested
//     SubagentEvents) counts only when it is a StatusUpdate with usage;
//     its other events (the subagent's prompt, tool calls) are in the
//     subagent's own log and are events here.
//   - every other type (StepBegin, TurnEnd, ApprovalRequest, …): an event.
//
// # Counting
//
// A StatusUpdate's token_usage is already disjoint: input = input_other,
// output = output (reasoning is not reported apart), cache_read =
// input_cache_read, cache_write = input_cache_creation. Model is
// kimi-for-coding (the log does not name the model; as ccusage), no
// provider. UsageKey is "kimi-cli:<message_id>:<input>:<output>:<cache
// read>:<cache write>" ("kimi-cli:@<timestamp>:…" without a message id):
// the subagent's own record and its parent's SubagentEvent copy, and a
// fork's copy of its source's lines, share it, so a call counts once; the
// counters are in the key because an OpenAI-compatible server may give
// two responses one id. A step whose StatusUpdate was not written (the
// CLI killed during the step) is not on disk and is not counted.
package kimi
