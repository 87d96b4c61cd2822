// Package fluux parses the conversation history that Fluux Agent
// (processone/fluux-agent) writes per XMPP JID under its memory directory:
// <memory>/<jid>/history.jsonl for the active session and
// <memory>/<jid>/sessions/YYYYMMDD-HHMMSS.jsonl for sessions archived by
// /new or the idle timeout. It does not read knowledge.jsonl (a key/value
// store rewritten in place) nor the markdown files beside the history.
//
// The format is specified in shared/formats/fluux-agent.md, drawn from
// fluux-agent's src/agent/memory.rs (SessionEntry, store_message_full,
// parse_session), src/agent/runtime.rs and docs/SESSION_FORMAT.md.
//
// # Records
//
// A file starts with a header written when history.jsonl is created:
//
//	{"type":"session","version":1,"created":"2026-02-11T15:24:00.123456789+00:00","jid":"alice@example.com"}
//
// followed by one line per message:
//
//	{"type":"message","role":"user","content":"Hello!","msg_id":"abc-123","sender":"alice@example.com","ts":"2025-02-08T19:00:01Z"}
//
// with optional attachments [{filename,mime_type,size}] and an XEP-0444
// reaction {message_id,emojis}. Optional fields are omitted, never null;
// null is nevertheless read as absent.
//
// # Normalisation
//
//   - Header: Kind=session. Its session id, jid + "/" + created (the
//     created string verbatim), names every later line of the file, so the
//     id survives the rename of history.jsonl into sessions/. A file
//     without a header (which Fluux never writes) gets the session id
//     "<jid dir>/<file stem>", where the jid directory is the parent
//     directory, or the grandparent for files under sessions/ (a
//     transcript path is <jid>/history.jsonl or <jid>/sessions/YYYYMMDD-HHMMSS.jsonl);
//     such an id changes when /new renames the file.
//     With no usable directory the id is the file stem alone, and "-" for
//     a nameless stream. A second header later in a file starts a new
//     session from that line on.
//   - message: Kind=message, Role user or assistant (system is kept as
//     system; any other role gives Kind=event with Subtype "message/<role>").
//     msg_id is both EntryID and MessageID; a line without msg_id gets the
//     line-derived id "L<n>". A msg_id already used earlier in the file gets
//     "<msg_id>.L<n>" so that distinct records never share an entry key.
//   - Reactions, structured (reaction object) or legacy text
//     ("[Reacted to msg_id: <id> with <emojis>]" in a user line's content),
//     fill Reaction and are Meta with Subtype "reaction": they are not
//     prompts. A message with empty content, no reaction and no attachments
//     is kept but Meta (Fluux's parse_session skips it); an empty-content
//     message that carries attachments is a real input, as parse_session
//     shows it to the model.
//   - No token usage is recorded by Fluux: Usage is never set.
//   - Any other type, or a line without type (a stray knowledge.jsonl
//     record), is Kind=event with Subtype = the type string.
//
// A field of the wrong JSON type, or a ts or created that is not RFC 3339
// (a ts may also be a number of Unix milliseconds), makes the object a
// located error (parse.ErrBadField) and yields no entry; a header without
// jid or created, or a message without role, is parse.ErrMissingField. A
// header whose created does not parse still names the session of the lines
// after it, since the id needs only the string.
package fluux
