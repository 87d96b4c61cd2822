// Package price prices the token usage of one model call in US dollars,
// from an embedded table holding the prices ccusage 20.0.24 uses offline,
// optionally overridden by a file in LiteLLM's
// model_prices_and_context_window.json shape. It does not decide whether a
// call should be priced at all: a cost recorded in the log (pi) is the
// caller's to use as is, and so is the choice to skip "<synthetic>" calls.
//
// # The table
//
// [Default] parses the embedded prices.json (see README.md in this
// directory for where every row comes from); [Load] parses a LiteLLM-shaped
// file; [Table.Merge] lays one table over another. A [Table] is immutable
// and safe for concurrent use. Each row is keyed by model name and reads
// these LiteLLM fields (all others are ignored):
//
//   - input_cost_per_token, output_cost_per_token: required for a row to
//     price anything on its own;
//   - cache_read_input_token_cost: default input × 0.1, as ccusage;
//   - cache_creation_input_token_cost (5-minute writes): default
//     input × 1.25, as ccusage;
//   - cache_creation_input_token_cost_above_1hr (1-hour writes): default
//     input × 2, which is what ccusage always charges (it never reads this
//     field; the embedded Anthropic rows set it to exactly that);
//   - the *_above_200k_tokens rates: a per-counter tier, see below;
//   - the *_above_272k_tokens rates: a whole-request tier, see below;
//   - provider_specific_entry.fast: the fast-mode multiplier, default 1.
//
// # Long-context tiers
//
// ccusage prices long context in two ways, and so does this package.
//
// Rows with *_above_200k_tokens rates (LiteLLM's Anthropic rows) use a
// marginal per-counter tier: each counter (input, output, cache read,
// 5-minute write, 1-hour write) is looked at on its own, and only the
// tokens of that counter beyond 200,000 are charged the higher rate. A
// counter without its own higher rate stays at its base rate; the 1-hour
// write's higher rate defaults to input_cost_per_token_above_200k_tokens × 2.
// This is not how Anthropic bills (a request whose prompt exceeds 200k is
// charged the long-context rate on all of it), but it is what ccusage does.
//
// Rows with *_above_272k_tokens rates (OpenAI's GPT-5.4 and later, which
// ccusage takes from its models.dev snapshot) use a whole-request tier: when
// the context of the call, Input + CacheRead + CacheWrite, exceeds 272,000
// tokens, every counter of the call is charged its higher rate (its base
// rate where the row has none). Output never counts towards the threshold.
// A row with both kinds uses the 200k tier only, as ccusage.
//
// # Cache writes and reasoning
//
// When [schema.Usage] splits cache writes (CacheWrite5m, CacheWrite1h),
// each part is charged its own rate, and any rest of CacheWrite beyond the
// two parts is charged as 5-minute writes; without a split, all of
// CacheWrite is charged as 5-minute writes. Reasoning tokens are already
// part of Output and are never charged again.
//
// # Model names
//
// [Table.Lookup] documents how a name is matched to a row. Unknown models,
// and "<synthetic>" (the name Claude Code gives to messages it generates
// itself, which are not model calls and which callers must not count at
// all), are reported with ok=false, never as $0.
package price
