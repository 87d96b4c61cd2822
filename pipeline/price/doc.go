// Package price prices the token usage of one model call in US dollars,
// at the call's own time, and says where the price came from. Its
// embedded table holds two snapshots taken from ccusage 20.0.24: the
// LiteLLM rows ccusage uses offline (prices.json) and the models.dev rows
// it embeds (modelsdev.json, the models people run against Claude Code
// and OpenClaw: MiniMax, GLM, Qwen, Kimi, DeepSeek, …), with dated
// periods laid over them (history.json); a file of either shape overrides
// it. It does not count calls: that, and skipping "<synthetic>" calls, is
// the caller's (pipeline/index).
//
// # The table
//
// [Default] parses the embedded files (see README.md in this directory
// for where every row comes from); [Load] parses a file; [Table.Merge]
// lays one table over another. A [Table] is immutable and safe for
// concurrent use; [Table.Fingerprint] tells two tables apart. Each row is
// keyed by model name and is either LiteLLM-shaped or, when it has a
// "cost" object, models.dev-shaped: input, output, cache_read and
// cache_write in USD per million tokens, and one context tier ("tiers"
// entries of type "context", the smallest kept, or "context_over_200k"),
// a whole-request tier like the 272k one below. Rates a models.dev row
// leaves out are derived as for LiteLLM rows, as ccusage does. Lookups try
// every name step on the LiteLLM rows before the models.dev rows
// ([Table.Lookup]).
//
// # Dated periods
//
// A row of either shape may carry "periods": a list of objects, each with
// valid_from and/or valid_until (RFC 3339, or YYYY-MM-DD for midnight
// UTC; kept to the microsecond) and the fields that hold between them
// (from inclusive, until exclusive), laid over the row's own. Periods of
// a row may not overlap. A call is priced at the period holding its
// timestamp, else at the row's base price, also when its time is unknown
// ([Table.LookupAt], [Table.CostAt]). An override's periods replace the
// row's.
//
// # Sources
//
// [Table.PriceEntry] prices a call from its entry and returns where the
// price came from, first that applies: [SourceOverride] (the row was set
// by a price file), [SourceRecorded] (a cost above 0 that the log
// recorded), [SourceLocal] (a local runtime, [Local]: $0 by rule),
// [SourceLiteLLM] or [SourceModelsDev] (the embedded rows); else the call
// is unpriced, never $0.
//
// # LiteLLM rows
//
// A LiteLLM-shaped row reads these fields (all others are ignored):
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
