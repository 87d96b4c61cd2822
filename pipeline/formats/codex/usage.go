package codex

import (
	"strconv"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// counters is one token_count counter object, in OpenAI semantics:
// cached ⊂ input, reasoning ⊂ output, total = input + output.
type counters struct {
	input, cached, output, reasoning, total int64
	cacheWrite                              int64
}

// sub returns c - o component-wise.
func (c counters) sub(o counters) counters {
	return counters{
		input:      c.input - o.input,
		cached:     c.cached - o.cached,
		output:     c.output - o.output,
		reasoning:  c.reasoning - o.reasoning,
		total:      c.total - o.total,
		cacheWrite: c.cacheWrite - o.cacheWrite,
	}
}

// atMost returns c with each component capped at o's.
func (c counters) atMost(o counters) counters {
	return counters{
		input:      min(c.input, o.input),
		cached:     min(c.cached, o.cached),
		output:     min(c.output, o.output),
		reasoning:  min(c.reasoning, o.reasoning),
		total:      min(c.total, o.total),
		cacheWrite: min(c.cacheWrite, o.cacheWrite),
	}
}

// below reports whether any component of c is lower than in o: the
// cumulative counter has been reset.
func (c counters) below(o counters) bool {
	return c.input < o.input || c.cached < o.cached || c.output < o.output ||
		c.reasoning < o.reasoning || c.total < o.total || c.cacheWrite < o.cacheWrite
}

// usage maps c onto the disjoint contract counters.
func (c counters) usage() *schema.Usage {
	cached := min(max(c.cached, 0), max(c.input, 0))
	return &schema.Usage{
		Input:      max(c.input, 0) - cached,
		CacheRead:  cached,
		Output:     max(c.output, 0),
		CacheWrite: max(c.cacheWrite, 0),
		Reasoning:  max(c.reasoning, 0),
	}
}

// info is the info object of a token_count event.
type info struct {
	total, last       counters
	hasTotal, hasLast bool
	model             string
}

// tokenCount fills the usage of a token_count entry (see the package doc)
// and advances the cumulative baseline. A replayed token_count only moves
// the baseline.
func (p *Parser) tokenCount(e *schema.Entry, line jsonl.Line, pl *payload, replayed bool) error {
	if pl.info.Kind() != jsonl.Object {
		return nil // info null: a rate-limit refresh
	}
	var in info
	if bad, err := p.readInfo(pl.info, &in); err != nil {
		// pl.info aliases line.Bytes: its start is where their capacities
		// differ. The entry stays, without usage; the baseline does not
		// move, so the next good totals count what this one held.
		start := cap(line.Bytes) - cap(pl.info.Raw())
		return parse.Fail(&p.cfg, line, start+bad, err)
	}
	model := in.model
	if model == "" {
		model = parse.Str(pl.model)
	}
	if model != "" {
		p.model = model
	}

	var delta counters
	last := false
	switch {
	case in.hasTotal:
		if !replayed && !p.hasPrev && p.inherits && in.hasLast {
			// A child, fork or later page without a replayed baseline:
			// its totals may go on from another file's, so the first
			// counts only its own call.
			delta = in.last.atMost(in.total)
		} else if replayed || !p.hasPrev {
			delta = in.total
		} else if in.total.below(p.prev) {
			p.log.Debug("codex: token counter reset, new total counted from zero",
				keyPath, p.cfg.Path, keyLine, line.Number,
				"previous", p.prev.total, "total", in.total.total)
			delta = in.total
		} else {
			delta = in.total.sub(p.prev)
		}
		p.prev, p.hasPrev = in.total, true
	case in.hasLast:
		delta, last = in.last, true
	default:
		return nil
	}
	if replayed || delta.total <= 0 {
		return nil
	}
	e.Usage = delta.usage()
	e.Model = p.model
	e.Provider = p.provider
	if e.Provider == "" {
		e.Provider = DefaultProvider
	}
	key := in.total
	if last {
		key = in.last
	}
	var raw string
	if e.TS.IsZero() {
		raw = parse.Str(p.rec.ts)
	}
	e.UsageKey = usageKey(e.TS, raw, key, last)
	return nil
}

// usageKey returns the key of the call whose token_count is stamped ts
// (raw when it could not be parsed) with counters c: cumulative totals, or
// the last call's counters when last is set.
func usageKey(ts time.Time, raw string, c counters, last bool) string {
	b := make([]byte, 0, 96)
	b = append(b, "codex:"...)
	if !ts.IsZero() {
		b = ts.UTC().AppendFormat(b, time.RFC3339Nano)
	} else {
		b = append(b, raw...)
	}
	if last {
		b = append(b, ":last"...)
	}
	for i, n := range [...]int64{c.input, c.cached, c.output, c.reasoning, c.total} {
		if i == 0 {
			b = append(b, ':')
		} else {
			b = append(b, '/')
		}
		b = strconv.AppendInt(b, n, 10)
	}
	if c.cacheWrite != 0 {
		b = append(b, "/w"...)
		b = strconv.AppendInt(b, c.cacheWrite, 10)
	}
	return string(b)
}

// readInfo decodes a token_count info object. It returns the offset in v
// of the first counter that is not a plausible token count (see
// parse.Count) and its error, or -1 and nil.
func (p *Parser) readInfo(v jsonl.Value, in *info) (int, error) {
	s := &p.sub
	s.Reset(v.Raw())
	bad, badErr := -1, error(nil)
	if !s.EnterObject() {
		return bad, nil
	}
	for s.NextField() {
		var c *counters
		field := ""
		switch string(s.Key()) {
		case "total_token_usage":
			if s.Peek() == jsonl.Object {
				c, in.hasTotal, field = &in.total, true, "info.total_token_usage."
			}
		case "last_token_usage":
			if s.Peek() == jsonl.Object {
				c, in.hasLast, field = &in.last, true, "info.last_token_usage."
			}
		case "model", "model_name":
			if m := parse.Str(s.Value()); m != "" && in.model == "" {
				in.model = m
			}
		}
		if c == nil {
			continue
		}
		if off, err := readCounters(s, c, field); err != nil && badErr == nil {
			bad, badErr = off, err
		}
	}
	return bad, badErr
}

// readCounters decodes the counter object due next on s. A counter that is
// absent or null is 0; a missing total_tokens is input + output. It
// returns the offset of the first counter that is not a plausible token
// count (see parse.Count) and its error, named with prefix, or -1 and nil.
func readCounters(s *jsonl.Scanner, c *counters, prefix string) (int, error) {
	bad, badErr := -1, error(nil)
	hasTotal := false
	s.EnterObject()
	for s.NextField() {
		var dst *int64
		key := s.Key()
		switch string(key) {
		case "input_tokens":
			dst = &c.input
		case "cached_input_tokens":
			dst = &c.cached
		case "output_tokens":
			dst = &c.output
		case "reasoning_output_tokens":
			dst = &c.reasoning
		case "total_tokens":
			dst = &c.total
		case "cache_write_input_tokens":
			dst = &c.cacheWrite
		default:
			continue
		}
		off := s.Offset()
		v := s.Value()
		if v.IsNull() {
			continue
		}
		n, ok := parse.Count(v)
		if !ok {
			if badErr == nil {
				bad, badErr = off, parse.CountError(v, prefix+string(key))
			}
			continue
		}
		*dst = n
		hasTotal = hasTotal || dst == &c.total
	}
	if !hasTotal {
		c.total = c.input + c.output
	}
	return bad, badErr
}
