package price

import (
	"time"

	"github.com/sessionpipe/sessionpipe/schema"
)

// Price is what one model costs, in US dollars per token.
type Price struct {
	// Model is the table key the looked-up name resolved to.
	Model string
	// Input is the rate of uncached input tokens.
	Input float64
	// Output is the rate of output tokens, reasoning included.
	Output float64
	// CacheRead is the rate of tokens read from the prompt cache.
	CacheRead float64
	// CacheWrite5m is the rate of tokens written to the 5-minute cache,
	// and of cache writes whose lifetime the log does not tell.
	CacheWrite5m float64
	// CacheWrite1h is the rate of tokens written to the 1-hour cache.
	CacheWrite1h float64
	// Long holds the long-context tier; its zero value means none.
	Long LongContext
	// Fast multiplies the whole cost of a call made in fast mode
	// (usage.speed "fast", see [Table.Cost]); it is 1 for models without a fast tier.
	Fast float64

	// Source is where the price comes from: [SourceLiteLLM],
	// [SourceModelsDev] or [SourceOverride].
	Source string
	// Layer is the lookup layer of the row (0: the LiteLLM rows, with
	// overrides of them and models only an override file has; 1: the
	// models.dev rows): [Table.Lookup] tries every step on layer 0 before
	// layer 1.
	Layer int
	// ValidFrom and ValidUntil bound the period the price holds for
	// (from inclusive, until exclusive); both zero for a row's base
	// price, which holds whenever none of its periods does.
	ValidFrom, ValidUntil time.Time
}

// LongContext is a model's long-context tier, as the package comment
// describes. Rates the source does not raise equal the base rates.
type LongContext struct {
	// Threshold is the token count above which the tier applies; 0 means
	// the model has no tier.
	Threshold int64
	// WholeRequest selects how Threshold is compared. False: per counter,
	// and only the tokens of a counter beyond Threshold get the higher
	// rate. True: the call's context (Input + CacheRead + CacheWrite) is
	// compared, and every token of the call gets the higher rate.
	WholeRequest bool
	// The rates above Threshold, per token.
	Input, Output, CacheRead, CacheWrite5m, CacheWrite1h float64
}

// Cost returns what the call u to model cost in US dollars, with ok false
// when the model is unknown (see [Table.Lookup]). The caller must then
// count the call as unpriced, not as free. A call made in fast mode
// (u.Speed "fast": Claude Code writes usage.speed; Codex runs with
// service_tier "fast" or "priority") costs the model's [Price].Fast times
// as much, which is 1 for models without a fast tier. Like [Table.Lookup],
// Cost does not allocate once it has seen the name.
//
// Cost prices at the model's base price; [Table.CostAt] prices at a time
// and [Table.PriceEntry] applies every rule of the package comment.
func (t *Table) Cost(model string, u schema.Usage) (usd float64, ok bool) {
	e := t.find(model)
	if e == nil {
		return 0, false
	}
	return e.base.callCost(&u), true
}

// CostAt is [Table.Cost] at the price that holds at ts ([Table.LookupAt]),
// and says where the price came from.
func (t *Table) CostAt(model string, ts time.Time, u schema.Usage) (usd float64, source string, ok bool) {
	e := t.find(model)
	if e == nil {
		return 0, "", false
	}
	p := e.at(ts)
	return p.callCost(&u), p.Source, true
}

// callCost prices one call, applying the fast multiplier.
func (p *Price) callCost(u *schema.Usage) float64 {
	mult := 1.0
	if u.Speed == "fast" {
		mult = p.Fast
	}
	return p.cost(u, mult)
}

// Cost returns what the call u costs at price p, in US dollars. It applies
// the tiers and cache-write rules of the package comment; negative
// counters, which no parser emits, count as zero.
func (p *Price) Cost(u schema.Usage) float64 { return p.cost(&u, 1) }

// cost sums the counters in ccusage's order (input, output, 5-minute
// write, 1-hour write, cache read) so that results agree to the last bit.
func (p *Price) cost(u *schema.Usage, mult float64) float64 {
	in, out, cr := count(u.Input), count(u.Output), count(u.CacheRead)
	w5, w1 := count(u.CacheWrite5m), count(u.CacheWrite1h)
	if w5+w1 == 0 {
		w5 = count(u.CacheWrite)
	} else if rest := count(u.CacheWrite) - w5 - w1; rest > 0 {
		w5 += rest
	}
	l := &p.Long
	var usd float64
	switch {
	case l.Threshold == 0:
		usd = flat(in, p.Input) + flat(out, p.Output) + flat(w5, p.CacheWrite5m) +
			flat(w1, p.CacheWrite1h) + flat(cr, p.CacheRead)
	case l.WholeRequest && in+cr+w5+w1 > l.Threshold:
		usd = flat(in, l.Input) + flat(out, l.Output) + flat(w5, l.CacheWrite5m) +
			flat(w1, l.CacheWrite1h) + flat(cr, l.CacheRead)
	case l.WholeRequest:
		usd = flat(in, p.Input) + flat(out, p.Output) + flat(w5, p.CacheWrite5m) +
			flat(w1, p.CacheWrite1h) + flat(cr, p.CacheRead)
	default:
		usd = tiered(in, p.Input, l.Input, l.Threshold) +
			tiered(out, p.Output, l.Output, l.Threshold) +
			tiered(w5, p.CacheWrite5m, l.CacheWrite5m, l.Threshold) +
			tiered(w1, p.CacheWrite1h, l.CacheWrite1h, l.Threshold) +
			tiered(cr, p.CacheRead, l.CacheRead, l.Threshold)
	}
	return usd * mult
}

func count(n int64) int64 { return max(n, 0) }

func flat(n int64, rate float64) float64 {
	if n == 0 {
		return 0
	}
	return float64(n) * rate
}

// tiered charges the tokens of one counter beyond threshold at above.
func tiered(n int64, base, above float64, threshold int64) float64 {
	if n > threshold && above != base {
		return float64(threshold)*base + float64(n-threshold)*above
	}
	return flat(n, base)
}
