// Package corpusgen generates synthetic, realistic agent session
// transcripts for benchmarks: Claude Code, pi-coding-agent (v3) and Codex
// CLI lines with the keys, nesting and key order of real files, varied
// content (escapes, raw UTF-8, multi-MB base64 images) and consistent ids.
//
// Generation is deterministic: the same [Config] (same Seed) gives the same
// bytes within one build of the program. It is not meant to reproduce
// byte-identical output across Go releases (math/rand/v2 only fixes its
// generators' algorithms, not every derived method).
//
// # Corpora of lines
//
// [Lines] and [Write] produce a stream of lines of the requested [Mix] and
// total size, held in memory or written to an io.Writer. They are what the
// decode benchmarks in package benchmarks use.
//
// # Directory trees
//
// [WriteTree] writes whole session files in the on-disk layouts the agents
// use, for end-to-end runs of the tailer:
//
//	claude/projects/<enc-cwd>/<session>.jsonl
//	claude/projects/<enc-cwd>/<session>/subagents/agent-<id>.jsonl
//	codex/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<uuid>.jsonl
//	pi/sessions/--<cwd>--/<ts>_<uuid>.jsonl
//
// About 1% of the sessions are resumed or forked copies: a new file that
// replays the first lines of an earlier session (same uuids, message ids,
// request ids and timestamps) under another session id, then goes on.
//
// The shapes (keys, nesting, key order) follow the real samples in
// testdata/corpus (see their SOURCES.md files) and the specs in
// shared/formats. Content is generated; the only text taken from a sample
// is Claude Code's fixed local-command caveat of isMeta lines, as it
// appears in testdata/corpus/claude-code/spotter/tool_heavy.jsonl
// (marot/spotter, MIT).
package corpusgen
