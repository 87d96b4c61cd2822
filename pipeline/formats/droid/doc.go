// Package droid parses Factory Droid's session settings
// (~/.factory/sessions/**/<session>.settings.json; DROID_SESSIONS_DIR
// replaces ~/.factory/sessions) into normalised entries: the session's
// token totals, which Droid rewrites whole as the session goes on.
// It does not read the <session>.jsonl transcript Droid keeps beside it
// (its messages carry no token counts) but for the model, when the
// settings name none.
//
// # Sources
//
// ccusage (ryoppippi/ccusage, rust/crates/ccusage/src/adapter/droid,
// parser.rs, paths.rs and loader.rs, read at 5816e64): a settings file is
// an object with tokenUsage {inputTokens, outputTokens,
// cacheCreationTokens, cacheReadTokens, thinkingTokens, totalTokens},
// model, providerLock and providerLockTimestamp; the session id is the
// file name without ".settings.json"; the time is providerLockTimestamp,
// else the file's modification time; a model is normalised
// (normalize_droid_model_name: "custom:" and bracketed parts dropped,
// lower case, dots and spaces made dashes) and the provider taken from
// providerLock or inferred from the model; thinking tokens are priced as
// output; when every part is 0, totalTokens counts as output.
//
// # Rules
//
//   - One entry per file: kind message, role assistant, Meta (not a
//     reply), subtype session_total, the session's totals as its usage:
//     input = inputTokens, cache write = cacheCreationTokens, cache read =
//     cacheReadTokens, output = outputTokens + thinkingTokens, reasoning =
//     thinkingTokens. Usage key "droid:<session>": every rewrite of the
//     file is the same call, counted once at its largest total, so
//     api_calls is one per session.
//   - Model: the settings' model, else the first "Model:" in the first
//     500 lines of <session>.jsonl beside it (ccusage's
//     extract_model_from_sidecar_jsonl), normalised; else none (the call
//     is visibly unpriced; ccusage prices a provider's "unknown" model at
//     nothing).
//   - A settings file without token usage gives no entry; a counter that
//     is not an integer in 0…10¹² is a located error and no usage.
package droid
