package price

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/schema"
)

// The reference for parse: the json.Decoder walk it had before it walked
// valid documents itself, with one fix: an error in a context tier after
// the first was located at the wrong offset. TestParse_MatchesReference and FuzzParse_MatchesReference
// hold parse to it.

func refParse(data []byte) (map[string]row, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	fail := func(off int64, err error) error {
		return &schema.DecodeError{Line: lineAt(data, off), Offset: off, Err: err}
	}
	syntax := func(err error) error {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fail(int64(len(data)), fmt.Errorf("%w: unexpected end of input", ErrSyntax))
		}
		// The Decoder's offsets are relative to the value it was reading;
		// Unmarshal stops at the same byte and counts from the start.
		var se *json.SyntaxError
		if errors.As(json.Unmarshal(data, new(json.RawMessage)), &se) {
			return fail(max(se.Offset-1, 0), fmt.Errorf("%w: %w", ErrSyntax, se))
		}
		return fail(dec.InputOffset(), fmt.Errorf("%w: %w", ErrSyntax, err))
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, syntax(err)
	}
	if tok != json.Delim('{') {
		return nil, fail(dec.InputOffset(), fmt.Errorf("%w: top level is %s, want an object", ErrShape, kindOf(tok)))
	}
	rows := make(map[string]row)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntax(err)
		}
		model, _ := tok.(string) // object keys are always strings
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, syntax(err)
		}
		start := dec.InputOffset() - int64(len(raw))
		r, err := refParseRow(raw)
		if err != nil {
			var le *locatedError
			if errors.As(err, &le) {
				return nil, fail(start+le.off, fmt.Errorf("model %q: %w", model, le.err))
			}
			return nil, fail(start, fmt.Errorf("model %q: %w", model, err))
		}
		if r.set != 0 || len(r.periods) > 0 {
			rows[model] = r
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, syntax(err)
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, syntax(err)
		}
		rest := bytes.TrimLeft(data[end:], " \t\r\n")
		return nil, fail(int64(len(data)-len(rest)), fmt.Errorf("%w: data after the top-level object", ErrSyntax))
	}
	return rows, nil
}

func refParseRow(raw json.RawMessage) (row, error) { return refParseRates(raw, true) }

// parseRates reads the rates of a row or of a period (withPeriods false:
// a period holds no periods of its own).
func refParseRates(raw json.RawMessage, withPeriods bool) (row, error) {
	var r row
	err := refEachField(raw, func(key string, v json.RawMessage, off int64) error {
		switch key {
		case "provider_specific_entry":
			return refEachField(v, func(key string, v json.RawMessage, o int64) error {
				if key != "fast" || isNull(v) {
					return nil
				}
				x, err := rate(v, o)
				if err == nil && x == 0 {
					err = &locatedError{o, fmt.Errorf("%w: fast multiplier 0", ErrBadRate)}
				}
				if err == nil {
					r.put(fFast, x)
				}
				return err
			}, off)
		case "cost":
			return refParseCost(&r, v, off)
		case "periods":
			if !withPeriods {
				return &locatedError{off, fmt.Errorf("%w: a period holds no periods", ErrPeriod)}
			}
			ps, err := refParsePeriods(v, off)
			r.periods = ps
			return err
		}
		f, ok := fieldOf(key)
		if !ok || isNull(v) {
			return nil
		}
		x, err := rate(v, off)
		if err == nil {
			r.put(f, x)
		}
		return err
	}, 0)
	return r, err
}

func refParseCost(r *row, v json.RawMessage, base int64) error {
	return refEachField(v, func(key string, v json.RawMessage, off int64) error {
		if isNull(v) {
			return nil
		}
		switch key {
		case "input", "output", "cache_read", "cache_write":
			x, err := rate(v, off)
			if err == nil {
				r.put(costField(key, false), perMillion(x))
			}
			return err
		case "context_over_200k":
			return refParseTier(r, v, off, 200_000)
		case "tiers":
			return refParseTiers(r, v, off)
		}
		return nil
	}, base)
}

func refParseTier(r *row, v json.RawMessage, base int64, size float64) error {
	if r.has(fCtxSize) && r.v[fCtxSize] <= size {
		return nil
	}
	var t row
	err := refEachField(v, func(key string, v json.RawMessage, off int64) error {
		switch key {
		case "input", "output", "cache_read", "cache_write":
			if isNull(v) {
				return nil
			}
			x, err := rate(v, off)
			if err == nil {
				t.put(costField(key, true), perMillion(x))
			}
			return err
		}
		return nil
	}, base)
	if err != nil {
		return err
	}
	for f := fInputCtx; f <= fCacheWriteCtx; f++ {
		if t.has(f) {
			r.put(f, t.v[f])
		} else {
			r.set &^= 1 << f
		}
	}
	r.put(fCtxSize, size)
	return nil
}

func refParseTiers(r *row, v json.RawMessage, base int64) error {
	if len(v) == 0 || v[0] != '[' {
		return &locatedError{base, fmt.Errorf("%w: tiers is %s, want an array", ErrShape, kindOfRaw(v))}
	}
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		return &locatedError{base, fmt.Errorf("%w: %w", ErrSyntax, err)}
	}
	off := base
	for _, it := range items {
		off += int64(bytes.Index(v[off-base:], it)) // where this item starts (it was base + that: wrong from the second tier on)
		var kind string
		var size float64
		err := refEachField(it, func(key string, v json.RawMessage, o int64) error {
			if key != "tier" {
				return nil
			}
			return refEachField(v, func(key string, v json.RawMessage, o int64) error {
				switch key {
				case "type":
					_ = json.Unmarshal(v, &kind)
				case "size":
					x, err := rate(v, o)
					size = x
					return err
				}
				return nil
			}, o)
		}, off)
		if err != nil {
			return err
		}
		if kind == "context" && size > 0 {
			if err := refParseTier(r, it, off, size); err != nil {
				return err
			}
		}
		off += int64(len(it))
	}
	return nil
}

func refParsePeriods(v json.RawMessage, base int64) ([]period, error) {
	if len(v) == 0 || v[0] != '[' {
		return nil, &locatedError{base, fmt.Errorf("%w: periods is %s, want an array", ErrShape, kindOfRaw(v))}
	}
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		return nil, &locatedError{base, fmt.Errorf("%w: %w", ErrSyntax, err)}
	}
	var out []period
	offs := make([]int64, 0, len(items))
	pos := int64(0)
	for _, it := range items {
		pos += int64(bytes.Index(v[pos:], it))
		off := base + pos
		offs = append(offs, off)
		var p period
		err := refEachField(it, func(key string, v json.RawMessage, o int64) error {
			switch key {
			case "valid_from", "valid_until":
				ns, err := periodTime(v, o)
				if key == "valid_from" {
					p.from = ns
				} else {
					p.until = ns
				}
				return err
			}
			return nil
		}, off)
		if err != nil {
			return nil, err
		}
		if p.r, err = refParseRates(it, false); err != nil {
			var le *locatedError
			if errors.As(err, &le) {
				return nil, &locatedError{off + le.off, le.err}
			}
			return nil, err
		}
		switch {
		case p.from == 0 && p.until == 0:
			return nil, &locatedError{off, fmt.Errorf("%w: neither valid_from nor valid_until", ErrPeriod)}
		case p.from != 0 && p.until != 0 && p.from >= p.until:
			return nil, &locatedError{off, fmt.Errorf("%w: valid_from is not before valid_until", ErrPeriod)}
		}
		out = append(out, p)
		pos += int64(len(it))
	}
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmpStart(out[a].from, out[b].from) })
	sorted := make([]period, len(out))
	for i, j := range idx {
		sorted[i] = out[j]
		if i > 0 {
			prev := sorted[i-1]
			if prev.until == 0 || (sorted[i].from != 0 && sorted[i].from < prev.until) || sorted[i].from == 0 {
				return nil, &locatedError{offs[j], fmt.Errorf("%w: overlaps another period", ErrPeriod)}
			}
		}
	}
	return sorted, nil
}

func refEachField(raw json.RawMessage, fn func(key string, v json.RawMessage, off int64) error, base int64) error {
	if isNull(raw) {
		return nil
	}
	if len(raw) == 0 || raw[0] != '{' {
		return &locatedError{base, fmt.Errorf("%w: %s, want an object", ErrShape, kindOfRaw(raw))}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return &locatedError{base, fmt.Errorf("%w: %w", ErrSyntax, err)}
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return &locatedError{base + dec.InputOffset(), fmt.Errorf("%w: %w", ErrSyntax, err)}
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return &locatedError{base + dec.InputOffset(), fmt.Errorf("%w: %w", ErrSyntax, err)}
		}
		if err := fn(key, v, base+dec.InputOffset()-int64(len(v))); err != nil {
			var le *locatedError
			if errors.As(err, &le) {
				return &locatedError{le.off, fmt.Errorf("field %q: %w", key, le.err)}
			}
			return err
		}
	}
	return nil
}

// refDocs are the documents the differential tests start from: the
// embedded tables and the error cases of the package's tests.
func refDocs(tb testing.TB) [][]byte {
	var docs [][]byte
	for _, name := range []string{"prices.json", "modelsdev.json", "history.json"} {
		b, err := os.ReadFile(name)
		require.NoError(tb, err)
		docs = append(docs, b)
	}
	for _, s := range []string{
		`{}`, ` { } `, `[]`, `null`, `"x"`, `{"m": null}`, `{"m": 1}`, `{"m": {"input_cost_per_token": "1"}}`,
		`{"m": {"input_cost_per_token": -1}}`, `{"a\u0062": {"input_cost_per_token": 1, "output_cost_per_token": 2}}`,
		`{"m": {"provider_specific_entry": {"fast": 0}}}`, `{"m": {"provider_specific_entry": [1]}}`,
		`{"m": {"cost": {"input": 1, "output": 2, "tiers": [{"input": 3, "tier": {"type": "context", "size": 10}}]}}}`,
		`{"m": {"cost": {"tiers": [{"input": 3, "tier": {"type": "context", "size": 10}}, {"input": 2, "tier": {"type": "context", "size": 5}}]}}}`,
		`{"m": {"cost": {"tiers": {"a": 1}}}}`, `{"m": {"cost": {"tiers": [{"input": 3, "tier": {"type": "context", "size": 10}}, {"input": -2, "tier": {"type": "context", "size": 5}}]}}}`, `{"m": {"cost": {"context_over_200k": {"input": "x"}}}}`,
		`{"m": {"periods": [{"valid_until": "2025-01-01", "cost": {"input": 5}}, {"valid_from": "2025-02-01T00:00:00.5Z", "input_cost_per_token": 0}]}}`,
		`{"m": {"periods": [{"input_cost_per_token": 1}]}}`,
		`{"m": {"periods": [{"valid_from": "2025-02-01", "valid_until": "2025-01-01"}]}}`,
		`{"m": {"periods": [{"valid_until": "2025-03-01"}, {"valid_from": "2025-02-01", "input_cost_per_token": 1}]}}`,
		`{"m": {"periods": [{"valid_from": "2025-03-01", "periods": []}]}}`, `{"m": {"periods": {}}}`,
		`{"m": {"input_cost_per_token": 1,}}`, `{"m": {"input_cost_per_token": 1}} x`, `{"m": {"input_cost_per_token": 1}`,
		"{\"m\":\n {\"cost\": {\"input\": 1, \"output\": \"two\"}}}",
	} {
		docs = append(docs, []byte(s))
	}
	return docs
}

// sameParse fails tb unless parse and the reference agree on doc: the
// same rows, or the same error.
func sameParse(tb testing.TB, doc []byte) {
	tb.Helper()
	want, wantErr := refParse(doc)
	got, err := parse(doc)
	if wantErr != nil {
		require.Error(tb, err, "%s", doc)
		require.Equal(tb, wantErr.Error(), err.Error(), "%s", doc)
		var w, g *schema.DecodeError
		require.ErrorAs(tb, wantErr, &w)
		require.ErrorAs(tb, err, &g)
		require.Equal(tb, w.Offset, g.Offset, "%s", doc)
		require.Equal(tb, w.Line, g.Line, "%s", doc)
		return
	}
	require.NoError(tb, err, "%s", doc)
	require.Equal(tb, want, got, "%s", doc)
}

func TestParse_MatchesReference(t *testing.T) {
	for _, doc := range refDocs(t) {
		sameParse(t, doc)
	}
}

// FuzzParse_MatchesReference: parse agrees with the reference on any
// input, valid or not. Its seeds are the small documents (the embedded
// tables, 70-270 kB, would make each run slow).
func FuzzParse_MatchesReference(f *testing.F) {
	for _, doc := range refDocs(f) {
		if len(doc) < 4096 {
			f.Add(doc)
		}
	}
	f.Fuzz(func(t *testing.T, doc []byte) { sameParse(t, doc) })
}
