// Package codex parses OpenAI Codex CLI and Codex Desktop rollout files
// (~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl) into
// normalised entries. It keeps the per-file state the format needs: the
// session header, the current model and the cumulative token counters. It
// does not detect the format of a file (package formats does) and does not
// reconcile copies across files (the aggregator does, by UsageKey).
//
// The format is described in /work/shared/formats/codex.md, built from
// ccusage's Codex adapter (ryoppippi/ccusage, MIT), real redacted rollouts
// of madshn/localpush (MIT), claude-code-log's format notes
// (daaain/claude-code-log, MIT) and ccusage issues #876, #884, #897, #988,
// #1288 and #1349.
//
// # Lines
//
// Every line is {"timestamp", "type", "payload"}, and in paginated
// rollouts (CLI 0.150 and later, session_meta history_mode "paginated";
// codex-rs rollout/src/ordinal.rs, protocol RolloutLine) also "ordinal",
// the line's position from 0; fields may come in any order. Entry ids are derived from the line number ([parse.LineID]):
// rollouts are append-only and their lines carry no id. The session id of
// every entry is the payload.id of the first session_meta of the file;
// lines before it (or all lines of a file without one) use the thread id
// at the end of a rollout-<time>-<thread>.jsonl file name, else the file
// name without extension.
//
//   - session_meta: Kind session with CWD, AgentVersion (cli_version),
//     Provider (model_provider), GitBranch (git.branch) and ParentSessionID
//     (source.subagent.thread_spawn.parent_thread_id, else forked_from_id,
//     else a top-level parent_thread_id, else history_base.thread_id when
//     it names another thread). A header with thread_source "subagent"
//     and a parent_thread_id is a subagent's, as one with a thread_spawn
//     source.
//   - turn_context: Kind event, Subtype "turn_context", Model, RequestID =
//     turn_id. Its model becomes the model of later usage.
//   - response_item message: role assistant is the assistant message that
//     counts (Kind message, Role assistant, MessageID = payload.id when
//     present). Roles user and developer are injected context (the
//     environment, instructions): Kind message, Role user or system,
//     Meta true; the human input is event_msg user_message.
//   - response_item reasoning: Kind event, Subtype "reasoning"; its summary
//     text only with Config.Text.
//   - response_item function_call and custom_tool_call: Kind event, Role
//     assistant, Subtype the payload type, one ToolCall (call_id, name,
//     input). Kind message with Role assistant is kept for the assistant
//     messages so that a tool call is not counted as one. A function_call's
//     arguments are a JSON string holding JSON: Input is the decoded inner
//     JSON when it is valid JSON, else the string itself as a JSON string;
//     a custom_tool_call's input is a free-form string kept as a JSON
//     string. Input is filled only with Config.Text.
//   - response_item function_call_output and custom_tool_call_output: Kind
//     message, Role tool, one ToolResult. Rollouts carry no error flag, so
//     IsError is always false; it is never guessed from the output.
//   - response_item web_search_call and any other payload type: Kind event,
//     Subtype the payload type.
//   - event_msg user_message: the real user input (Kind message, Role user,
//     Text always set, images and local_images as Attachments). An old-style
//     user_message whose kind is not "plain" (user_instructions,
//     environment_context) is injected: Meta true.
//   - event_msg agent_message and agent_reasoning: Kind event (mirrors of
//     the response items; agent_message is not an assistant message).
//   - event_msg task_started, task_complete, turn_aborted: Kind event with
//     Subtype the event type and RequestID = turn_id (the turn markers);
//     turn_aborted's reason goes to StopReason.
//   - event_msg token_count: Kind event, Subtype "token_count", the usage
//     entry (see below). Any other event_msg: Kind event, Subtype its type.
//   - compacted: Kind compaction (its summary in Text with Config.Text);
//     the event_msg context_compacted that follows it is an event, so a
//     compaction is counted once.
//   - any other line type: Kind event, Subtype the type.
//
// # Usage
//
// total_token_usage is cumulative per thread and token_count is re-emitted
// with unchanged totals. Per file the parser keeps the previous total; for
// each token_count with info, delta = total - previous component-wise, and
// the entry gets Usage and UsageKey only when delta.total_tokens > 0. A
// token_count with info null, or a re-emit, counts nothing. When any
// component of the total decreases the counter was reset (a new process
// writing the same thread): the new total is taken as the delta from zero
// and a debug event is logged. When total_token_usage is absent,
// last_token_usage is the delta. A counter object without total_tokens
// has input + output as its total (reasoning is part of output).
//
// OpenAI counters map onto the disjoint contract counters: Input = input -
// cached input, CacheRead = cached input (capped at input), Output =
// output, Reasoning = reasoning output (part of Output), CacheWrite =
// cache_write_input_tokens when present, else 0. Model is the model named
// by the token_count itself (info.model, info.model_name or
// payload.model), else the model of the latest turn_context; Provider is
// the session's model_provider, else "openai". A file with neither (early
// September 2025 rollouts have no turn_context) leaves Model empty: ccusage
// assumes "gpt-5" there, but this parser does not guess, so the
// aggregator reports such usage as unpriced.
//
// # Copies across files
//
// Forked and branched rollouts copy the parent's token_count lines
// verbatim: same timestamp, same cumulative totals. The UsageKey is
// "codex:" + timestamp (RFC 3339, UTC) + ":" + the cumulative input,
// cached, output, reasoning and total tokens (or ":last:" + the
// last_token_usage counters when there is no total), so the copy and its
// original share one key and the aggregator counts the call once. The
// model is not part of the key: a copy may lack the turn_context that named
// it.
//
// Thread-spawn subagents and newer forks replay the parent's history into
// the child file, either with the original timestamps or re-stamped at the
// second the child was created (ccusage detect_subagent_replay_second,
// issue #1349); re-stamped copies defeat the key. So in a file whose first
// session_meta names a parent, every line from that header on whose
// timestamp falls in or before the header line's second is a replay: it
// gets Copy true (it counts nothing in this session), and a replayed token_count gets no Usage but sets the
// previous total (the baseline is the last replayed value). The replay ends
// for good at the first line stamped after that second; from there on the
// child's own calls count as deltas over the parent's last total. A child
// call completing within its creation second would be taken for replay;
// a replay written over more than one second is counted from its second
// second on (the key still catches copies that kept their timestamps).
//
// A paginated subagent rollout says where its own lines start
// (session_meta subagent_history_start_ordinal; the lines below are the
// parent's history "replayed so the child has context"): there the
// ordinals decide, not the timestamps, and a line at or past the start is
// the child's own whatever its time. A paginated fork, or a later page of
// a thread, names the history it starts from (history_base: thread_id,
// end_ordinal_exclusive) instead of copying it, and its cumulative
// counters go on from that history's. So in a file whose header names a
// parent or a history base, the first token_count with totals, when no
// replayed token_count set a baseline, counts only its last_token_usage
// (capped at the totals) and becomes the baseline; a file whose counters
// start afresh is counted the same, as its first total is its first call.
// Subagent rollouts may be named rollout-<time>-<parent>_<child>.jsonl: a
// line before any session_meta takes the child's id. The upstream source
// read (codex-rs rollout/src/ordinal.rs, RolloutLine with an optional
// ordinal, ThreadHistoryMode, SessionMeta history_base and
// subagent_history_start_ordinal) has no writer of the <parent>_<child>
// name nor a statement that a fork's counters continue its base's: both
// follow issue #21 and third-party readers of such files.
package codex
