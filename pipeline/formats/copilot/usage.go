package copilot

import (
	"fmt"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// metric is one model's counters in a shutdown's modelMetrics.
type metric struct {
	model string
	c     counters
}

// shutdown appends the entries of a session.shutdown whose data was
// scanned: one leg_total entry per model whose counters grew since the
// file's previous shutdown (see the package doc), or the event e alone.
// err is the error found before, kept first.
func (p *Parser) shutdown(dst []schema.Entry, e schema.Entry, line jsonl.Line, dataOff int, err error) ([]schema.Entry, error) {
	d := &p.dat
	var ms []metric
	switch d.metrics.Kind() {
	case jsonl.Object:
		var ferr error
		ms, ferr = p.metrics(d.metrics.Raw(), line, dataOff+d.metricsOff)
		if ferr != nil {
			// A leg with a bad counter counts nothing and keeps the
			// baseline: the next shutdown counts from the last good one.
			if err == nil {
				err = ferr
			}
			return append(dst, e), err
		}
	case jsonl.Invalid, jsonl.Null:
	default:
		if err == nil {
			err = parse.Fail(&p.cfg, line, dataOff+d.metricsOff, fmt.Errorf("%w: data.modelMetrics", parse.ErrBadField))
		}
		return append(dst, e), err
	}
	n := len(dst)
	for _, m := range p.legs(ms) {
		u := m.c.usage()
		if u.Total() == 0 {
			continue
		}
		le := e
		le.EntryID = e.EntryID + ":" + m.model
		le.Kind, le.Role, le.Subtype, le.Meta = schema.KindMessage, schema.RoleAssistant, SubtypeLegTotal, true
		le.Model = m.model
		le.Usage = &u
		le.UsageKey = "copilot:" + e.SessionID + ":" + e.EntryID + ":" + m.model
		dst = append(dst, le)
	}
	if len(dst) == n {
		dst = append(dst, e)
	}
	return dst, err
}

// legs returns what each model used since the previous shutdown and makes
// ms the new baseline. Copilot's counters are cumulative over the
// session's legs; a shutdown where a model's counter is lower than at the
// previous one, or a model of the previous one is missing, follows a
// reset (a compaction, a version that does not restore the counters on
// resume): its counters are the leg's own and count whole.
func (p *Parser) legs(ms []metric) []metric {
	if len(ms) == 0 {
		// No metrics at all (none written, or {}): nothing to count and
		// nothing said about the counters; the baseline stays.
		return nil
	}
	reset := false
	seen := 0
	for _, m := range ms {
		b, ok := p.base[m.model]
		if !ok {
			continue
		}
		seen++
		if m.c.below(b) {
			reset = true
		}
	}
	if seen < len(p.base) {
		reset = true
	}
	out := make([]metric, 0, len(ms))
	for _, m := range ms {
		leg := m.c
		if b, ok := p.base[m.model]; ok && !reset {
			leg = m.c.minus(b)
		}
		out = append(out, metric{model: m.model, c: leg})
	}
	p.base = make(map[string]counters, len(ms))
	for _, m := range ms {
		p.base[m.model] = m.c
	}
	return out
}

// metrics decodes a modelMetrics object found at off in the line:
// {"<model>": {"requests": {...}, "usage": {"inputTokens", "outputTokens",
// "cacheReadTokens", "cacheWriteTokens", "reasoningTokens"}}}.
func (p *Parser) metrics(raw []byte, line jsonl.Line, off int) ([]metric, error) {
	s := &p.mm
	s.Reset(raw)
	if !s.EnterObject() {
		return nil, parse.Fail(&p.cfg, line, off, fmt.Errorf("%w: data.modelMetrics", parse.ErrBadField))
	}
	var out []metric
	for s.NextField() {
		model := string(s.Key())
		modelOff := off + s.Offset()
		v := s.Value()
		if v.Kind() != jsonl.Object {
			return nil, parse.Fail(&p.cfg, line, modelOff, fmt.Errorf("%w: data.modelMetrics.%s", parse.ErrBadField, model))
		}
		c, err := p.modelUsage(v.Raw(), line, modelOff, model)
		if err != nil {
			return nil, err
		}
		out = append(out, metric{model: model, c: c})
	}
	if s.Err() != nil {
		return nil, parse.Fail(&p.cfg, line, off, fmt.Errorf("%w: data.modelMetrics", parse.ErrBadField))
	}
	return out, nil
}

// modelUsage decodes one model's {"usage": {...}} found at off.
func (p *Parser) modelUsage(raw []byte, line jsonl.Line, off int, model string) (counters, error) {
	s := &p.mu
	s.Reset(raw)
	var c counters
	if !s.EnterObject() {
		return c, nil
	}
	for s.NextField() {
		if string(s.Key()) != "usage" {
			continue
		}
		usageOff := off + s.Offset()
		if s.Peek() != jsonl.Object {
			v := s.Value()
			if v.Kind() == jsonl.Null {
				continue
			}
			return c, parse.Fail(&p.cfg, line, usageOff, fmt.Errorf("%w: data.modelMetrics.%s.usage", parse.ErrBadField, model))
		}
		s.EnterObject()
		for s.NextField() {
			var dst *int64
			switch name := string(s.Key()); name {
			case "inputTokens":
				dst = &c.input
			case "outputTokens":
				dst = &c.output
			case "cacheReadTokens":
				dst = &c.cacheRead
			case "cacheWriteTokens":
				dst = &c.cacheWrite
			case "reasoningTokens":
				dst = &c.reasoning
			default:
				continue
			}
			name := string(s.Key())
			at := off + s.Offset()
			v := s.Value()
			n, ok := parse.Count(v)
			if !ok {
				return counters{}, parse.Fail(&p.cfg, line, at, parse.CountError(v, "data.modelMetrics."+model+".usage."+name))
			}
			*dst = n
		}
	}
	return c, nil
}

// below reports whether any counter of c is lower than b's.
func (c counters) below(b counters) bool {
	return c.input < b.input || c.output < b.output || c.cacheRead < b.cacheRead ||
		c.cacheWrite < b.cacheWrite || c.reasoning < b.reasoning
}

// minus returns c − b, counter by counter; the caller made sure none is
// negative.
func (c counters) minus(b counters) counters {
	return counters{c.input - b.input, c.output - b.output, c.cacheRead - b.cacheRead, c.cacheWrite - b.cacheWrite, c.reasoning - b.reasoning}
}

// usage converts Copilot's counters to the disjoint convention: input
// without the cache reads and writes it includes; output with the
// reasoning it includes.
func (c counters) usage() schema.Usage {
	return schema.Usage{
		Input:      max(c.input-c.cacheRead-c.cacheWrite, 0),
		Output:     c.output,
		CacheRead:  c.cacheRead,
		CacheWrite: c.cacheWrite,
		Reasoning:  c.reasoning,
	}
}
