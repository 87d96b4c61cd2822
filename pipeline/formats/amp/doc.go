// Package amp parses Amp's (Sourcegraph) thread files
// (~/.local/share/amp/threads/T-<id>.json; AMP_DATA_DIR replaces
// ~/.local/share/amp) into normalised entries. A thread is one JSON
// document that Amp writes again whole on every change: [Parse] reads one
// version of it; following it as it is rewritten (each message published
// once per content) is the tailer's document mode.
//
// # Sources
//
// ccusage (ryoppippi/ccusage, rust/crates/ccusage/src/adapter/amp,
// parser.rs and paths.rs, read at 5816e64; the TypeScript loader it
// replaced, apps/amp/src/data-loader.ts): a thread is {id, created (Unix
// ms), title, messages: [{role, messageId (an integer), content, usage:
// {model, inputTokens, outputTokens, cacheCreationInputTokens,
// cacheReadInputTokens, totalInputTokens, totalTokens, credits,
// timestamp}}], usageLedger: {events: [{id, timestamp, model, credits,
// tokens: {input, output, total}, operationType, fromMessageId,
// toMessageId}]}}. Where the ledger is present its events are the calls
// (the cache counters taken from the assistant message the event's
// toMessageId names); otherwise each assistant message's usage is one.
// A call whose counters are all 0 but totalTokens counts totalTokens as
// output; a call of no tokens is no call. Message content parts: text,
// thinking, tool_use {id, name, input}, tool_result {toolUseID, run:
// {status, result}}; user messages carry meta.sentAt (Unix ms).
//
// # Rules
//
//   - Session: the thread's id; its header entry (kind session) has the
//     creation time, the title and the working directory (the first
//     env.initial.trees[].uri, a file:// URI).
//   - A message is an entry whose entry and message id are its
//     messageId; user text is the user's input; a user message made only
//     of tool results is a tool message (role tool); info and other roles
//     are events. An assistant message still streaming (state.type
//     "streaming") without usage yet is left out: not even its time is
//     known, and the thread is written again once it is; one with usage
//     counts (as ccusage counts it), so that a reply cut short by a
//     killed Amp still counts.
//   - Time: a user message's meta.sentAt, an assistant message's
//     usage.timestamp, else the previous message's time: a message keeps
//     its time from version to version of the thread (the consumers key
//     an entry by id and time), also when the ledger names it later.
//   - Usage: input = inputTokens (Anthropic's convention: cache reads and
//     writes apart), output = outputTokens, cache write =
//     cacheCreationInputTokens, cache read = cacheReadInputTokens; usage
//     key "amp:<thread>:<messageId>". With a ledger, each event is the
//     call (key "amp:<thread>:ledger:<event id>"): on the assistant
//     message its toMessageId names (the first event naming it), else an
//     entry of its own (kind message, role assistant, meta, subtype
//     ledger_event: no reply), and assistant messages carry no usage of
//     their own. No provider is recorded; credits (Amp's own unit) are
//     not dollars and are not a recorded cost: calls are priced from the
//     model.
//   - A counter that is not an integer in 0…10¹² is a located error; the
//     message keeps its entry without usage.
package amp
