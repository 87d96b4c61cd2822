// Package gemini parses Gemini CLI's chat recordings
// (~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl, a subagent's
// chats/<parent session>/<session>.jsonl; GEMINI_CLI_HOME replaces the
// home directory) into normalised entries, and the earlier whole-file
// form (session-*.json, one JSON document rewritten on every change,
// which Gemini CLI converts to .jsonl when it resumes it) with the same
// rules ([ParseDocument]).
//
// # Sources
//
// google-gemini/gemini-cli, packages/core/src/services/chatRecordingService.ts
// and chatRecordingTypes.ts (read at 5411f11, 2026-08-21): the file is
// append-only; its first line is the metadata record {sessionId,
// projectHash, startTime, lastUpdated, kind?, directories?}; then message
// records {id, timestamp, type: user|gemini|info|error|warning, content
// (a PartListUnion), and for gemini toolCalls, thoughts, tokens, model};
// {"$set": {…}} updates (lastUpdated, summary, sessionId on resume, and
// after the history changed the whole messages array); {"$rewindTo": id}.
// pushMessage appends a message again, under the same id, when its tokens
// arrive (recordMessageTokens) or its tool calls change (recordToolCalls);
// loadConversationRecord keeps the last copy of each id.
// TokensSummary is the API's usageMetadata: input = promptTokenCount
// (cached included), output = candidatesTokenCount, cached =
// cachedContentTokenCount, thoughts = thoughtsTokenCount, tool =
// toolUsePromptTokenCount, total = totalTokenCount. packages/core/src/
// utils/paths.ts: GEMINI_CLI_HOME replaces the home directory.
//
// ccusage (ryoppippi/ccusage, rust/crates/ccusage/src/adapter/gemini,
// read at 5816e64): a gemini record with tokens is one call, the last
// copy of an id replacing the earlier; cached is taken out of input when
// total is the sum with input inclusive; tool is added to input;
// thoughts are priced as output.
//
// # Rules
//
//   - Session: the metadata's sessionId (a $set naming another replaces
//     it), else the file stem. A subagent's file (kind "subagent") names
//     its parent session by its directory: ParentSessionID.
//   - A message record is an entry with its own id as entry and message
//     id. A copy of a message seen earlier in the file (the same id,
//     re-appended or re-sent in a $set) is Meta and carries only the tool
//     calls and final tool statuses the earlier copies did not: a message,
//     a tool call and a tool error count once.
//   - Usage: key "gemini-cli:<session>:<message id>", the same for every
//     copy, so the aggregator counts the call once at its largest total.
//     Input = input − cached + tool, CacheRead = cached, Output = output +
//     thoughts, Reasoning = thoughts; a record whose total says its input
//     excludes cached (total = input + output + thoughts + tool + cached)
//     keeps its input. Provider "google"; a message without a model takes
//     the last model named earlier in the file.
//   - A user message is the user's input, except the injected context
//     (text opening with <session_context>), a copy, and a message that
//     only a $set brings (a compression's summary turn): Meta.
//   - info, warning and error messages are the CLI's notices: events with
//     the type as subtype. A rewind drops messages from the conversation,
//     not from what was spent: their calls still count.
package gemini
