// Package qwen parses Qwen Code's chat recordings
// (<runtime dir>/projects/<sanitised cwd>/chats/<session>.jsonl; the
// runtime dir is $QWEN_RUNTIME_DIR, else $QWEN_HOME, else ~/.qwen) into
// normalised entries.
//
// # Sources
//
// QwenLM/qwen-code (Apache-2.0), packages/core/src/services/
// chatRecordingService.ts (read at 015346f and 1ef5167): the file is
// append-only, one ChatRecord per line {uuid, parentUuid, sessionId,
// timestamp, type: user|assistant|tool_result|system, subtype?, cwd,
// version, gitBranch?, message? (a Gemini Content {role, parts}),
// usageMetadata? (the API's GenerateContentResponseUsageMetadata), model?,
// toolCallResult?, systemPayload?, provenance?, agentId?, isSidechain?,
// forkedFrom?}. recordAssistantTurn writes one assistant record per model
// response, with its usage. /branch copies every record into the new
// session with its uuid and timestamp (forkedFrom names the source).
// packages/core/src/core/anthropicContentGenerator/usage.ts: the prompt
// count is the whole prompt (input + cache reads + cache writes) and the
// cached count the cache reads, as Gemini's. Storage (paths.ts):
// QWEN_RUNTIME_DIR, else QWEN_HOME, else ~/.qwen holds projects/.
//
// ccusage (ryoppippi/ccusage, rust/crates/ccusage/src/adapter/qwen, read
// at 5816e64; 20.0.24 behaves the same): reads ${QWEN_DATA_DIR:-~/.qwen}/
// projects/<project>/chats/*.jsonl; an "assistant" record with
// usageMetadata is one call: input promptTokenCount, output
// candidatesTokenCount, cache read cachedContentTokenCount, the thoughts
// added to the output for the cost; a missing model is "unknown"; calls
// are deduplicated by (session, timestamp, model, counters).
//
// # Lines
//
// EntryID is uuid (made unique within the file), ParentID parentUuid,
// SessionID sessionId (else the file's stem), TS timestamp, CWD cwd,
// GitBranch gitBranch, AgentVersion version, AgentID agentId, AgentType
// agentName, Sidechain isSidechain, Subtype subtype.
//
//   - user: a user message, its text the text parts. Meta when its
//     provenance is other than real_user (a notification, a goal's
//     runtime prompt the CLI injects); records of versions without
//     provenance are input. A user record of function responses only is
//     a tool message.
//   - assistant: an assistant message, MessageID uuid, Model model (else
//     the last model named in the file), its functionCall parts the tool
//     calls, its text parts but thoughts the text; usage below.
//   - tool_result: a tool message, its functionResponse parts the
//     results; an error when toolCallResult has an error or status
//     "error", or the response an error.
//   - system chat_compression: a compaction; custom_title: a summary
//     whose Title is the payload's customTitle; every other system
//     record (ui_telemetry, slash_command, session_model, …) and any
//     other type: an event.
//
// # Counting
//
// Only an assistant record's usageMetadata is usage; the ui_telemetry
// records repeat the counts of each API response and are not counted.
// promptTokenCount includes cachedContentTokenCount; thoughtsTokenCount
// is counted beside candidatesTokenCount; toolUsePromptTokenCount is
// input outside the prompt count. So input = prompt − cached + toolUse,
// cache_read = cached, output = candidates + thoughts, reasoning =
// thoughts; when totalTokenCount is prompt + candidates + toolUse (the
// thoughts not added) the candidates hold the thoughts and output =
// candidates; a record with only totalTokenCount counts it as output.
// Cache writes are not recorded apart (inside the prompt count). UsageKey
// is "qwen-code:<uuid>": a /branch copy keeps the uuid, so the call
// counts once across both sessions (in the one created first). The
// provider is not recorded; the model is priced by name (Qwen OAuth's
// aliases, coder-model and vision-model, are not in any price table and
// stay visibly unpriced).
//
// ccusage 20.0.24 counts promptTokenCount whole as input and
// cachedContentTokenCount as cache read too, so its total counts the
// cached tokens twice; its output leaves the thoughts out (they are in
// its cost).
package qwen
