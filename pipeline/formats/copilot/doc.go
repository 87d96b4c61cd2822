// Package copilot parses GitHub Copilot CLI session event logs
// (~/.copilot/session-state/<session>/events.jsonl, or under $COPILOT_HOME)
// into normalised entries. It keeps the per-file state the format needs
// (the session id, the current model, the usage counters of the last
// shutdown); it does not detect the format (package formats does).
//
// Sources: the Copilot CLI writes the file (github/copilot-cli, closed
// source). The event shapes are those its SDK's session events document
// (github/copilot-sdk, MIT: session.shutdown "contains metrics about the
// session's usage"), those quoted in copilot-cli issues #1628 and #3994,
// and those public readers of the file parse (codeburn #684, agentsview
// #577: inputTokens includes the cache reads and writes). ccusage 20.0.24
// reads the same file ("ccusage copilot": session-state events are read
// from ${COPILOT_HOME:-~/.copilot}/session-state/<id>/events.jsonl); how
// it counts was found by running it (cmd/sessionpipe's copilot tests).
//
// # Lines
//
// Every line is one event {"type", "data", "id", "timestamp", "parentId"}.
// EntryID is id (else derived from the line), ParentID parentId, TS
// timestamp, Subtype the type, for every event. SessionID is the
// sessionId of the file's session.start, else the name of the file's
// directory (the session id too). CWD is session.start's data.context.cwd;
// Model the current model: session.start's data.selectedModel, then each
// session.model_change's data.newModel and session.shutdown's
// data.currentModel.
//
//   - session.start: Kind session (data.copilotVersion the agent version,
//     data.context.branch the git branch).
//   - session.model_change: Kind model_change.
//   - session.compaction_complete: Kind compaction.
//   - user.message: a user message (data.content, with Config.Text).
//   - assistant.message: an assistant message, MessageID data.messageId,
//     its data.toolRequests the tool calls. Its data.outputTokens is not
//     counted: the shutdown's figures hold it (below).
//   - tool.execution_complete: a tool message, its result an error when
//     data.success is false.
//   - session.shutdown: see Counting.
//   - session.resume, session.info, tool.execution_start, assistant.turn_*
//     and every other type: Kind event.
//
// # Counting
//
// A response's event carries only its output tokens; input and cache
// figures exist only in session.shutdown's data.modelMetrics:
// {"<model>": {"requests": {"count", "cost"}, "usage": {"inputTokens",
// "outputTokens", "cacheReadTokens", "cacheWriteTokens",
// "reasoningTokens"}}}, written when the CLI exits. inputTokens includes
// the cache reads and writes and outputTokens the reasoning, so a model's
// usage is input = inputTokens − cacheReadTokens − cacheWriteTokens (not
// below 0), output = outputTokens, cache_read, cache_write, reasoning.
//
// A session resumed (copilot --resume) appends to the same file, and its
// next shutdown's counters are cumulative over the legs: each shutdown
// counts, per model, its counters minus the previous shutdown's in the
// file. The counters start again from zero after a reset (a compaction;
// versions before 1.0 did not restore them on resume, issue #1628): a
// shutdown where any model's counter is lower than at the previous one,
// or a model of the previous one is missing, counts its counters whole.
// Each model with a non-zero leg is one entry, Kind message, Role
// assistant, Meta (not a reply: the responses are the assistant.message
// events), Subtype "leg_total", EntryID "<id>:<model>", UsageKey
// "copilot:<session>:<id>:<model>"; a shutdown with no usage is an event.
// A shutdown without metrics (none written, or an empty object) counts
// nothing and leaves the baseline. A re-sent shutdown line has the same id
// and counts once; a leg whose
// usage is broken (a bad counter) counts nothing and leaves the baseline
// where it was, so the next shutdown counts both legs.
//
// ccusage 20.0.24 also takes per-model differences between consecutive
// shutdowns, but counter by counter, clamped at zero, with no reset: a
// leg after a reset counts only what exceeds the previous leg.
//
// A leg is priced as one call. Usage of a leg that ended without a
// shutdown (the CLI killed, /new, issue #3994) is nowhere in the file
// and is not counted.
package copilot
