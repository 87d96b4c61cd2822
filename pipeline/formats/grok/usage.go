package grok

import (
	"fmt"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// counters are Grok's own usage figures of a turn or of one model in it:
// input includes the cache reads and writes, output the reasoning.
type counters struct {
	input, output, cacheRead, cacheWrite, reasoning int64
	ticks                                           int64 // costUsdTicks
	hasTicks                                        bool
}

// modelCounters are one model's counters in usage.modelUsage.
type modelCounters struct {
	model string
	c     counters
}

// turn appends the entries of a turn_completed update: one turn_total
// entry per model of usage.modelUsage with usage, else one for the
// turn's own figures (the current model), else the event e alone. err is
// the error found before, kept first.
func (p *Parser) turn(dst []schema.Entry, e schema.Entry, line jsonl.Line, err error) ([]schema.Entry, error) {
	u := &p.rec.u
	e.Kind, e.Role = schema.KindMessage, schema.RoleAssistant
	switch u.usage.Kind() {
	case jsonl.Object:
	case jsonl.Invalid, jsonl.Null:
		e.Kind, e.Role = schema.KindEvent, ""
		return append(dst, e), err
	default:
		if err == nil {
			err = parse.Fail(&p.cfg, line, u.usageOff, fmt.Errorf("%w: params.update.usage", parse.ErrBadField))
		}
		return append(dst, e), err
	}
	top, models, ferr := p.usage(u.usage.Raw(), line, u.usageOff)
	if ferr != nil {
		// The turn stays a reply; its broken usage counts nothing.
		if err == nil {
			err = ferr
		}
		return append(dst, e), err
	}
	whole := len(models) == 0
	if whole {
		models = []modelCounters{{model: e.Model, c: top}}
	}
	n := len(dst)
	id := e.EntryID
	for _, m := range models {
		us := m.c.usage()
		if us.Total() == 0 {
			continue
		}
		me := e
		me.Subtype = SubtypeTurnTotal
		// The turn is one reply, whatever the number of models in it.
		me.Meta = len(dst) > n
		me.Usage = &us
		if m.c.hasTicks {
			c := float64(m.c.ticks) / ticksPerUSD
			me.CostUSD = &c
		}
		if !whole {
			me.EntryID = id + ":" + m.model
		}
		me.Model = m.model
		me.Provider = provider(m.model)
		me.UsageKey = "grok-build:" + e.SessionID + ":" + me.EntryID
		dst = append(dst, me)
	}
	if len(dst) == n {
		dst = append(dst, e)
	}
	return dst, err
}

// usage decodes a turn's usage object found at off in the line: its own
// counters and those of each model in modelUsage.
func (p *Parser) usage(raw []byte, line jsonl.Line, off int) (top counters, models []modelCounters, err error) {
	s := &p.sub
	s.Reset(raw)
	s.EnterObject()
	for s.NextField() {
		key := string(s.Key())
		at := off + s.Offset()
		if key != "modelUsage" {
			if err = p.counter(s, &top, key, "params.update.usage.", line, at); err != nil {
				return top, nil, err
			}
			continue
		}
		switch s.Peek() {
		case jsonl.Object:
		case jsonl.Null:
			s.Skip()
			continue
		default:
			s.Skip()
			return top, nil, parse.Fail(&p.cfg, line, at, fmt.Errorf("%w: params.update.usage.modelUsage", parse.ErrBadField))
		}
		s.EnterObject()
		for s.NextField() {
			model := string(s.Key())
			mat := off + s.Offset()
			if s.Peek() != jsonl.Object {
				s.Skip()
				return top, nil, parse.Fail(&p.cfg, line, mat, fmt.Errorf("%w: params.update.usage.modelUsage.%s", parse.ErrBadField, model))
			}
			s.EnterObject()
			var c counters
			for s.NextField() {
				if err = p.counter(s, &c, string(s.Key()), "params.update.usage.modelUsage."+model+".", line, off+s.Offset()); err != nil {
					return top, nil, err
				}
			}
			models = append(models, modelCounters{model: model, c: c})
		}
	}
	if s.Err() != nil {
		return top, nil, parse.Fail(&p.cfg, line, off, fmt.Errorf("%w: params.update.usage", parse.ErrBadField))
	}
	return top, models, nil
}

// counter reads the counter named key, due in s, into c; other keys are
// skipped. prefix names the object in errors.
func (p *Parser) counter(s *jsonl.Scanner, c *counters, key, prefix string, line jsonl.Line, at int) error {
	var dst *int64
	switch key {
	case "inputTokens":
		dst = &c.input
	case "outputTokens":
		dst = &c.output
	case "cachedReadTokens":
		dst = &c.cacheRead
	case "cacheCreationTokens":
		dst = &c.cacheWrite
	case "reasoningTokens":
		dst = &c.reasoning
	case "costUsdTicks":
		v := s.Value()
		if v.Kind() == jsonl.Null {
			return nil
		}
		n, ok := parse.Int(v)
		if !ok || n < 0 {
			return parse.Fail(&p.cfg, line, at, fmt.Errorf("%w: %s%s", parse.ErrBadField, prefix, key))
		}
		c.ticks, c.hasTicks = n, true
		return nil
	default:
		s.Skip()
		return nil
	}
	v := s.Value()
	n, ok := parse.Count(v)
	if !ok {
		return parse.Fail(&p.cfg, line, at, parse.CountError(v, prefix+key))
	}
	*dst = n
	return nil
}

// usage converts Grok's counters to the disjoint convention: input
// without the cache reads and writes it includes (each at most what is
// left of it, as ccusage clamps them); output with the reasoning it
// includes.
func (c counters) usage() schema.Usage {
	read := min(c.cacheRead, c.input)
	write := min(c.cacheWrite, c.input-read)
	return schema.Usage{
		Input:      c.input - read - write,
		Output:     c.output,
		CacheRead:  read,
		CacheWrite: write,
		Reasoning:  min(c.reasoning, c.output),
	}
}
