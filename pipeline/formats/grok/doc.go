// Package grok parses the Grok Build CLI's session update logs
// (~/.grok/sessions/<url-encoded cwd>/<session>/updates.jsonl, or under
// $GROK_HOME) into normalised entries. It keeps the per-file state the
// format needs (the current model, the prompt being written, the tool
// calls already counted); it does not detect the format (package formats
// does).
//
// Sources: the Grok Build CLI (xAI, closed source; its crates
// xai-grok-shell and xai-grok-tools as public readers quote them) writes
// the file: one Agent Client Protocol session update per line
// (agent-client-protocol-schema: session/update notifications, their
// sessionUpdate kinds user_message_chunk, agent_message_chunk,
// agent_thought_chunk, tool_call, tool_call_update, plan) and xAI's own
// (_x.ai/session_notification turn_completed with the turn's usage:
// PromptUsage with a per-model PromptUsageModel in modelUsage;
// costUsdTicks, 10¹⁰ ticks to the dollar). ccusage 20.0.24 reads the same
// file ("ccusage grok": ${GROK_HOME:-~/.grok}/sessions/*/*/updates.jsonl
// and the summary.json beside it); how it counts was found by running it
// (cmd/sessionpipe's grok tests). Its siblings chat_history.jsonl,
// events.jsonl and rewind_points.jsonl describe the same turns and are
// not read by the default location (their lines are not Grok updates and
// are not detected as this format).
//
// # Lines
//
// Every line is {"timestamp": <Unix seconds>, "method", "params":
// {"sessionId", "_meta": {"eventId", "promptId", "agentTimestampMs"},
// "update": {"sessionUpdate", …}}}. EntryID is the event id (params._meta,
// else a top-level _meta), else derived from the line's content (a line
// written twice is one record); TS the timestamp (seconds; a number from
// 10¹¹ up is milliseconds; an RFC 3339 string is accepted), else
// agentTimestampMs; RequestID the prompt id; Subtype the update's kind,
// else the method. SessionID is the session directory's name (as ccusage;
// for any file of a session directory, so a copy of an update in a
// sibling file shares its keys), else the first params.sessionId, else
// the file's stem; CWD the project
// directory its parent names (URL-decoded, when absolute). Model is the
// model of the last prompt (a user chunk's _meta.modelId), Provider "xai"
// for a grok model.
//
//   - user_message_chunk: a user message; the chunks of one prompt (the
//     same _meta.promptIndex with no turn completed between, other
//     updates may come between; without an index, one after the other)
//     are one input: the first counts, the rest are Meta.
//   - agent_message_chunk, agent_thought_chunk: Kind event, with the
//     chunk's text (Config.Text). The reply is the turn_completed below.
//   - tool_call: Kind event with the tool call (toolCallId; the name of
//     _meta["x.ai/tool"], else the title; rawInput); a call re-sent under
//     the same id is listed once.
//   - tool_call_update with status completed or failed: a tool message
//     whose result is an error when failed, once per call id; other
//     updates are events.
//   - turn_completed: see Counting; without usage (a cancelled turn), an
//     event.
//   - plan and every other update or method: Kind event.
//
// # Counting
//
// A turn's usage is its sum over the turn's model calls (modelCalls):
// usage {"inputTokens", "outputTokens", "cachedReadTokens",
// "cacheCreationTokens", "reasoningTokens", "costUsdTicks", "modelUsage":
// {"<model>": {the same}}}. inputTokens includes the cache reads and
// writes and outputTokens the reasoning (inputTokens + outputTokens =
// totalTokens), so input = inputTokens − cache read − cache write, the
// cache read at most inputTokens and the write at most what is left (as
// ccusage clamps them). Each model of modelUsage with usage is one entry,
// Kind message, Role assistant, Subtype "turn_total", EntryID
// "<event>:<model>", UsageKey "grok-build:<session>:<event>:<model>"; the
// first is the turn's reply, the others Meta. A usage without modelUsage
// is one entry for the turn's own figures, its model the prompt's
// (ccusage names it "unknown"), EntryID and key without the model. A
// line written again (the same event id) is the same record and counts
// once. costUsdTicks / 10¹⁰ is the recorded cost (CostUSD), used as
// recorded; a model without it is priced from the table. A turn is
// priced as one call. A subagent has a session directory of its own
// (summary.json, not read, says session_kind "subagent") and counts as a
// session of its own, as ccusage counts it; one public reader of these
// files says the parent's turn totals include a finished subagent's usage,
// which neither this parser nor ccusage can tell from updates.jsonl (not
// verified: no sample). A usage that is not an object, or a bad counter,
// leaves the turn a reply without usage, with the line's error.
package grok
