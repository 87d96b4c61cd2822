package price

import (
	"math"
	"strings"

	"github.com/sessionpipe/sessionpipe/schema"
)

// Where the price of a call comes from ([Table.PriceEntry]'s source, the
// indexer's and the DuckDB views' price_source).
const (
	// SourceOverride: a row of a price file (--prices) that set or
	// changed the model's price.
	SourceOverride = "override"
	// SourceRecorded: the cost the transcript recorded itself (pi and
	// OpenClaw write usage.cost.total), used as is.
	SourceRecorded = "recorded"
	// SourceLocal: a model served by a local runtime (see [Local]),
	// priced at $0 by rule.
	SourceLocal = "local"
	// SourceLiteLLM: the embedded LiteLLM-shaped rows.
	SourceLiteLLM = "litellm"
	// SourceModelsDev: the embedded models.dev snapshot.
	SourceModelsDev = "models.dev"
)

// localProviders are the providers that name a runtime on the user's own
// machine: OpenClaw's and pi's provider ids for Ollama, LM Studio,
// llama.cpp and vLLM, as their docs spell them.
var localProviders = []string{"ollama", "lmstudio", "lm-studio", "llama.cpp", "llamacpp", "llama-cpp", "vllm", "local"}

// Local reports whether a call to model through provider ran on a local
// runtime and so cost nothing per token: the provider (case folded) is
// one of ollama, lmstudio, lm-studio, llama.cpp, llamacpp, llama-cpp, vllm
// or local, and the model is not one of Ollama's cloud models (a name
// ending in "-cloud" or ":cloud", which Ollama runs on its own servers).
// The model name alone never makes a call local: "qwen3.5:9b" may be
// Ollama's tag or any other server's name, and a call without a provider
// stays priced by the tables, or unpriced.
func Local(provider, model string) bool {
	m := strings.ToLower(model)
	if strings.HasSuffix(m, "-cloud") || strings.HasSuffix(m, ":cloud") {
		return false
	}
	for _, p := range localProviders {
		if strings.EqualFold(provider, p) {
			return true
		}
	}
	return false
}

// LocalProviders returns the provider ids [Local] reads as local
// runtimes, lower case.
func LocalProviders() []string { return append([]string(nil), localProviders...) }

// PriceEntry prices the API call an entry records (its Model, Provider,
// TS, Usage and CostUSD), trying in order and stopping at the first that
// applies:
//
//  1. [SourceOverride]: the model's row was set by a price file: its
//     price at the entry's time, whatever the transcript recorded (an
//     override is there to correct what a log or a table says).
//  2. [SourceRecorded]: a cost the transcript recorded, when it is above
//     zero. A recorded 0 (or less) on a call with tokens is not a price:
//     pi writes 0 for every model its own table lacks; such a call goes on
//     to the next rules.
//  3. [SourceLocal]: a local runtime's call ([Local]): $0.
//  4. [SourceLiteLLM] or [SourceModelsDev]: the table's price at the
//     entry's time ([Table.CostAt]).
//
// ok is false when none applies: the call is unpriced, and must be
// counted so, never as $0. Entries without usage, and "<synthetic>"
// messages (Claude Code's own, not model calls), are not calls: ok false.
func (t *Table) PriceEntry(e *schema.Entry) (usd float64, source string, ok bool) {
	if e.Usage == nil || e.Model == synthetic {
		return 0, "", false
	}
	en := t.find(e.Model)
	if en != nil {
		if p := en.at(e.TS); p.Source == SourceOverride {
			return p.callCost(e.Usage), SourceOverride, true
		}
	}
	if c := e.CostUSD; c != nil && *c > 0 && !math.IsInf(*c, 0) {
		return *c, SourceRecorded, true
	}
	if Local(e.Provider, e.Model) {
		return 0, SourceLocal, true
	}
	if en == nil {
		return 0, "", false
	}
	p := en.at(e.TS)
	return p.callCost(e.Usage), p.Source, true
}
