package price

// field numbers the LiteLLM fields a row keeps.
type field uint8

const (
	fInput field = iota
	fOutput
	fCacheRead
	fCacheWrite
	fCacheWrite1h
	fInput200k
	fOutput200k
	fCacheRead200k
	fCacheWrite200k
	fCacheWrite1h200k
	fInput272k
	fOutput272k
	fCacheRead272k
	fCacheWrite272k
	fCacheWrite1h272k
	fFast // provider_specific_entry.fast
	// A models.dev context tier (cost.tiers, cost.context_over_200k):
	// its size and its rates, per token.
	fCtxSize
	fInputCtx
	fOutputCtx
	fCacheReadCtx
	fCacheWriteCtx
	numFields
)

// fieldOf maps a LiteLLM row key to the field it sets.
func fieldOf(key string) (field, bool) {
	switch key {
	case "input_cost_per_token":
		return fInput, true
	case "output_cost_per_token":
		return fOutput, true
	case "cache_read_input_token_cost":
		return fCacheRead, true
	case "cache_creation_input_token_cost":
		return fCacheWrite, true
	case "cache_creation_input_token_cost_above_1hr":
		return fCacheWrite1h, true
	case "input_cost_per_token_above_200k_tokens":
		return fInput200k, true
	case "output_cost_per_token_above_200k_tokens":
		return fOutput200k, true
	case "cache_read_input_token_cost_above_200k_tokens":
		return fCacheRead200k, true
	case "cache_creation_input_token_cost_above_200k_tokens":
		return fCacheWrite200k, true
	case "cache_creation_input_token_cost_above_1hr_above_200k_tokens":
		return fCacheWrite1h200k, true
	case "input_cost_per_token_above_272k_tokens":
		return fInput272k, true
	case "output_cost_per_token_above_272k_tokens":
		return fOutput272k, true
	case "cache_read_input_token_cost_above_272k_tokens":
		return fCacheRead272k, true
	case "cache_creation_input_token_cost_above_272k_tokens":
		return fCacheWrite272k, true
	case "cache_creation_input_token_cost_above_1hr_above_272k_tokens":
		return fCacheWrite1h272k, true
	}
	return 0, false
}

// Tier thresholds, in tokens.
const (
	threshold200k = 200_000
	threshold272k = 272_000
)

// Defaults ccusage applies to rates a row leaves out, as multiples of the
// input rate.
const (
	defaultCacheRead  = 0.1
	defaultCacheWrite = 1.25
	write1hPerInput   = 2.0
)

// row is one model's row as given: the values of the fields it sets.
// Rates it leaves out are derived when the row is resolved, so that a
// partial override laid over it by [Table.Merge] recomputes them.
type row struct {
	v   [numFields]float64
	set uint32 // bit f: v[f] was given
	// periods are the row's dated deviations, sorted, not overlapping.
	periods []period
	// over marks a row an override file set or changed ([Table.Merge]).
	over bool
}

// period is a dated part of a row: the fields it sets replace the row's
// from from (inclusive) until until (exclusive), Unix nanoseconds, 0 for
// an open end.
type period struct {
	from, until int64
	r           row
}

// contains reports whether the time ns falls in p.
func (p *period) contains(ns int64) bool {
	return (p.from == 0 || ns >= p.from) && (p.until == 0 || ns < p.until)
}

func (r *row) has(f field) bool { return r.set&(1<<f) != 0 }

func (r *row) put(f field, v float64) {
	r.v[f] = v
	r.set |= 1 << f
}

// get returns the value of f, or def when the row leaves f out.
func (r *row) get(f field, def float64) float64 {
	if r.has(f) {
		return r.v[f]
	}
	return def
}

// anyOf reports whether the row sets any field in [from, to].
func (r *row) anyOf(from, to field) bool {
	for f := from; f <= to; f++ {
		if r.has(f) {
			return true
		}
	}
	return false
}

// merged returns r with every field o sets replaced by o's value, and
// o's periods instead of r's when o has any.
func (r row) merged(o row) row {
	for f := range numFields {
		if o.has(f) {
			r.put(f, o.v[f])
		}
	}
	if len(o.periods) > 0 {
		r.periods = o.periods
	}
	r.over = r.over || o.over
	return r
}

// fields returns r's rates without its periods, for laying a period over.
func (r row) fields() row {
	r.periods = nil
	return r
}

// resolve turns a row into the price it stands for, filling the rates it
// leaves out as documented in the package comment. ok is false when the
// row lacks the input or output rate and so prices nothing on its own.
func (r *row) resolve(model string) (p Price, ok bool) {
	if !r.has(fInput) || !r.has(fOutput) {
		return Price{}, false
	}
	in := r.v[fInput]
	p = Price{
		Model:        model,
		Input:        in,
		Output:       r.v[fOutput],
		CacheRead:    r.get(fCacheRead, in*defaultCacheRead),
		CacheWrite5m: r.get(fCacheWrite, in*defaultCacheWrite),
		CacheWrite1h: r.get(fCacheWrite1h, in*write1hPerInput),
		Fast:         r.get(fFast, 1),
	}
	switch {
	case r.anyOf(fInput200k, fCacheWrite1h200k):
		p.Long = r.tier(&p, threshold200k, false, fInput200k)
	case r.anyOf(fInput272k, fCacheWrite1h272k):
		p.Long = r.tier(&p, threshold272k, true, fInput272k)
	case r.has(fCtxSize) && r.v[fCtxSize] > 0:
		p.Long = r.ctxTier(&p)
	}
	return p, true
}

// ctxTier builds a models.dev context tier: a whole-request tier at the
// tier's size, rates left out staying at the base rate, the 1-hour write
// following the tier's input rate times two, as for the 272k tier.
func (r *row) ctxTier(p *Price) LongContext {
	w1h := p.CacheWrite1h
	if r.has(fInputCtx) {
		w1h = r.v[fInputCtx] * write1hPerInput
	}
	return LongContext{
		Threshold:    int64(r.v[fCtxSize]),
		WholeRequest: true,
		Input:        r.get(fInputCtx, p.Input),
		Output:       r.get(fOutputCtx, p.Output),
		CacheRead:    r.get(fCacheReadCtx, p.CacheRead),
		CacheWrite5m: r.get(fCacheWriteCtx, p.CacheWrite5m),
		CacheWrite1h: w1h,
	}
}

// tier builds the long-context rates from the five fields starting at
// first (input, output, cache read, 5-minute write, 1-hour write, in the
// order of the field constants). A rate the row leaves out stays at the
// base rate, except the 1-hour write, which follows the input's higher
// rate times two when the row has one, as ccusage.
func (r *row) tier(p *Price, threshold int64, whole bool, first field) LongContext {
	w1h := p.CacheWrite1h
	if r.has(first) {
		w1h = r.v[first] * write1hPerInput
	}
	return LongContext{
		Threshold:    threshold,
		WholeRequest: whole,
		Input:        r.get(first, p.Input),
		Output:       r.get(first+1, p.Output),
		CacheRead:    r.get(first+2, p.CacheRead),
		CacheWrite5m: r.get(first+3, p.CacheWrite5m),
		CacheWrite1h: r.get(first+4, w1h),
	}
}
