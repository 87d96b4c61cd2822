// Package trajectory parses OpenClaw trajectory files
// (<session>.trajectory.jsonl beside the session's transcript, or
// <session>.jsonl under OPENCLAW_TRAJECTORY_DIR) into normalised entries.
// It keeps the per-file state the format needs (the session's transcript
// path, whether the file's run totals count); it does not detect the
// format (package formats does).
//
// The format is OpenClaw's own (openclaw/openclaw, MIT:
// src/trajectory/types.ts, runtime.ts, paths.ts; the model.completed data
// of src/agents/.../attempt and the Codex app-server runtime). It is a
// format of its own, not pi's: a line is one runtime event, not a
// transcript record, and its usage is a run's total, not a call's.
//
// # Lines
//
// Every line is one event {"traceSchema":"openclaw-trajectory",
// "schemaVersion":1, "traceId", "source", "type", "ts", "seq",
// "sourceSeq", "sessionId", "sessionKey", "runId", "workspaceDir",
// "provider", "modelId", "modelApi", "data"}; fields may come in any
// order. Entry ids are derived from the line number (a recorder's seq
// starts again at 1 for every run attempt, so it does not identify an
// event within a file). SessionID is sessionId, else traceId, else the
// file name without ".trajectory.jsonl" (or ".jsonl"). TS is ts, CWD
// workspaceDir, Model modelId, Provider provider, RequestID runId and
// Subtype the event type, for every event.
//
//   - session.started: Kind session. Its data.sessionFile names the
//     session's transcript.
//   - prompt.submitted: the user's prompt of a run (data.prompt, else
//     data.text, with Config.Text).
//   - model.completed: the end of a run attempt; data.usage holds the
//     attempt's usage summed over its model calls ({input, output,
//     cacheRead, cacheWrite, total}, pi's disjoint counters),
//     data.stopReason, data.assistantTexts.
//   - session.ended, context.compiled, trace.artifacts, trace.truncated
//     and every other type: Kind event.
//
// # Counting
//
// A trajectory's usage is per run, not per call, and the session's
// transcript (a pi-format file) holds the same calls one by one. Where
// the transcript, or an archive of it (.jsonl.bak.<ts>, .jsonl.reset.<ts>,
// .jsonl.deleted.<ts>, .jsonl.bak-<pid>-<ms>), is on disk, the transcript's
// per-call figures count and the trajectory adds only metadata: every
// event is Kind event (Meta for the prompt), without usage. Where only
// the trajectory survives, it counts: prompt.submitted is a user message
// (a turn; the prompt of a run submitted again by a retried attempt, same
// runId as the previous prompt, is Meta), and a model.completed with a non-zero usage is an assistant
// message marked as a run-level total, Subtype "run_total", with Usage,
// StopReason and UsageKey "openclaw-trajectory:<session>:<runId>:<ts>".
//
// The transcript looked for is the one data.sessionFile names (an
// absolute .jsonl path) and the file beside the trajectory with
// ".trajectory" taken out of its name; a trajectory archived on reset or
// delete (<session>.trajectory.jsonl.<reason>.<ts>, renamed together with
// its transcript) looks for <session>.jsonl and its archives the same way. The parser decides once per file,
// at its first prompt.submitted or model.completed, from what is on disk
// then, and keeps the decision for the rest of the file: OpenClaw writes the transcript
// before the run's model.completed, so a live file decides with the
// transcript there. A transcript created later is not noticed (its calls
// would count twice), and one deleted later changes only the decision of
// a file read again from its start.
package trajectory
