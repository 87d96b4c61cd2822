// Package pi reads the session transcripts of pi-coding-agent
// (badlogic/pi-mono) and of the agents built on it: OpenClaw, clawdbot and
// Nexus. It turns each JSON object of a transcript line into a
// [schema.Entry], reads the OpenClaw sessions.json store
// ([ReadSessionsJSON]) and derives session ids from file names
// ([SessionIDFromPath]). It does not detect formats or follow files.
//
// The format is specified in ../shared/formats/pi-coding-agent.md, whose
// sources are pi-mono's docs/session.md, session-manager.ts and
// packages/ai types.ts (MIT), ccusage's pi and openclaw adapters (MIT), and
// OpenClaw's session-management-compaction.md and gateway sessions.ts
// (MIT).
//
// # Files and versions
//
// A transcript starts with a header {"type":"session","id","timestamp",
// "cwd"}: version 1 has no "version" key and no entry ids (the header may
// carry provider, modelId, thinkingLevel and branchedFrom), versions 2 and
// 3 give every entry an 8-hex "id" and a "parentId". OpenClaw's gateway
// compaction keeps the last 400 lines of a transcript without its header
// and renames the original to <file>.jsonl.bak.<ts>; such a headerless
// file takes its session id from its file name ([SessionIDFromPath]), which
// equals the header id of its .bak archive, so both are one session.
// OpenClaw's session file repair, before dropping malformed lines, copies
// the whole file to <file>.jsonl.bak-<pid>-<ms>: the backup is read like
// any archive (its records keep their ids, so those also in the repaired
// file count once, and those only it holds count too).
//
// # Mapping
//
//   - header: Kind session, SessionID and EntryID = header id, CWD, TS,
//     Model/Provider (v1). ParentSessionID is the session id encoded in the
//     stem of parentSession (v2/v3) or branchedFrom (v1), both file paths,
//     or the Nexus parentSessionId / forkedFromSessionId, both ids; a
//     Nexus subagent header (parentSessionId) has Subtype "subagent".
//   - EntryID is the entry's "id" (v2/v3; Nexus "uuid"), else the line
//     index parse.LineID (v1). A v1 entry's ParentID is the previous
//     entry's derived id, the chain pi's v1→v2 migration builds.
//   - message user: a real user input (Text always set, images as
//     Attachments). OpenClaw's channel metadata prefix ("Sender (untrusted
//     metadata): …") is part of what the gateway hands the model and stays
//     in Text.
//   - message assistant: text and toolCall blocks (thinking excluded),
//     Model (message.model, else the latest model of the header, a
//     model_change or a model-snapshot), Provider, StopReason, Usage,
//     UsageKey and CostUSD (usage.cost.total). The message's identity is
//     its EntryID: MessageID stays empty, and the provider's responseId,
//     which is not unique (Ollama's OpenAI-compatible endpoint reuses
//     chatcmpl-14 across replies and sessions), is kept in RequestID, a
//     field that identifies nothing.
//   - message toolResult: Role tool with one ToolResult (IsError = isError);
//     bashExecution (a shell command the user ran with "!", not a model
//     tool call): Role tool, Subtype "bashExecution", Text "command\noutput";
//     custom (v2: hookMessage): an injected user message, Meta, Subtype
//     "custom:<customType>"; branchSummary/compactionSummary: Kind
//     summary, Role user, Meta (the compaction entry is the boundary);
//     any other role: Kind event with Subtype = the role.
//   - model_change: Kind model_change with Model/Provider;
//     thinking_level_change: Kind model_change, Subtype
//     "thinking_level_change", Text = the level; compaction: Kind
//     compaction, Text = summary; branch_summary: Kind summary; custom:
//     Kind event, Subtype "custom:<customType>" (OpenClaw model-snapshot
//     also sets the default model); custom_message: an injected user
//     message, Meta, Subtype "custom_message:<customType>"; label: Kind
//     event, Text = label; session_info: Kind session, Subtype
//     "session_info", Title = name; any other type: Kind event with
//     Subtype = the type.
//   - Text other than a real user input's is filled only when
//     parse.Config.Text is set, as are tool call inputs and tool result contents.
//   - OpenClaw's own assistant messages, provider "openclaw"
//     ([OpenClawProvider]), are written by no model and have Meta set, so
//     that they count as no assistant message: model "gateway-injected"
//     (a notice such as an error shown to the user) and model
//     "delivery-mirror" (a copy, in the transcript, of what a channel
//     delivered, e.g. a message sent with the message tool). Both carry
//     all-zero usage, which is never counted.
//
// # Usage
//
// The counters of message.usage are disjoint as in Anthropic's API
// (totalTokens = input + output + cacheRead + cacheWrite); cacheWrite
// includes the 1-hour writes that newer pi versions report apart in
// cacheWrite1h, and reasoning is part of output. Usage is set only on
// assistant messages with a non-zero total. Fork, branch, gateway
// compaction and v1→v3 migration copy entries verbatim into other files,
// so UsageKey is a fingerprint of the call, not of the file:
// "pi:<message.timestamp ms>:<message.model>:<input>/<output>/<cacheRead>/<cacheWrite>".
//
// # Nexus
//
// Nexus (~/nexus/state/sessions) writes the same transcripts; its design
// notes add optional fields, read when present: entry or message
// "toolCalls" [{id,name,params}] (tool calls when the content has none),
// "tokenCount" {inputTokens,outputTokens} (usage when message.usage is
// absent), header parentSessionId/forkedFromSessionId, Claude-style
// {"type":"user"|"assistant","uuid","sessionId","message"} entries, and
// turn markers {"type":"turn","id","parentTurnId",…} (Kind event, Subtype
// "turn", EntryID "turn:<id>" so that it never collides with the message
// whose id the turn reuses). "context" is tolerated and ignored.
package pi
