package price

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/sessionpipe/sessionpipe/schema"
)

// parse decodes a LiteLLM document into rows, locating the first error.
// A valid document (all the embedded ones) is walked directly, a few
// times faster than through a json.Decoder; any other is read by the
// Decoder, which finds the syntax error.
func parse(data []byte) (map[string]row, error) {
	if i := skipSpace(data, 0); i < len(data) && data[i] == '{' && json.Valid(data) {
		return parseValid(data, i)
	}
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
		r, err := parseRow(raw)
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

// parseValid is parse for a valid document whose top-level object starts
// at data[start].
func parseValid(data []byte, start int) (map[string]row, error) {
	rows := make(map[string]row)
	err := members(data[start:], func(model string, raw json.RawMessage, off int64) error {
		off += int64(start)
		r, err := parseRow(raw)
		if err != nil {
			var le *locatedError
			if errors.As(err, &le) {
				return &schema.DecodeError{Line: lineAt(data, off+le.off), Offset: off + le.off, Err: fmt.Errorf("model %q: %w", model, le.err)}
			}
			return &schema.DecodeError{Line: lineAt(data, off), Offset: off, Err: fmt.Errorf("model %q: %w", model, err)}
		}
		if r.set != 0 || len(r.periods) > 0 {
			rows[model] = r
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// locatedError is an error at an offset inside a row.
type locatedError struct {
	off int64
	err error
}

func (e *locatedError) Error() string { return e.err.Error() }

// parseRow reads the fields a row keeps from one already-valid JSON value:
// LiteLLM's rates, a models.dev "cost" object and "periods".
func parseRow(raw json.RawMessage) (row, error) { return parseRates(raw, true) }

// parseRates reads the rates of a row or of a period (withPeriods false:
// a period holds no periods of its own).
func parseRates(raw json.RawMessage, withPeriods bool) (row, error) {
	var r row
	err := eachField(raw, func(key string, v json.RawMessage, off int64) error {
		switch key {
		case "provider_specific_entry":
			return eachField(v, func(key string, v json.RawMessage, o int64) error {
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
			return parseCost(&r, v, off)
		case "periods":
			if !withPeriods {
				return &locatedError{off, fmt.Errorf("%w: a period holds no periods", ErrPeriod)}
			}
			ps, err := parsePeriods(v, off)
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

// perMillion converts a models.dev rate, USD per million tokens, to USD
// per token, as ccusage does.
func perMillion(x float64) float64 { return x / 1_000_000.0 }

// parseCost reads a models.dev cost object: input, output, cache_read and
// cache_write per million tokens, and one context tier, from "tiers" (the
// smallest of type "context") or "context_over_200k".
func parseCost(r *row, v json.RawMessage, base int64) error {
	return eachField(v, func(key string, v json.RawMessage, off int64) error {
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
			return parseTier(r, v, off, 200_000)
		case "tiers":
			return parseTiers(r, v, off)
		}
		return nil
	}, base)
}

// costField maps a models.dev cost key to its field, base or tier.
func costField(key string, tier bool) field {
	var f field
	switch key {
	case "input":
		f = fInput
	case "output":
		f = fOutput
	case "cache_read":
		f = fCacheRead
	default:
		f = fCacheWrite
	}
	if tier {
		f += fInputCtx - fInput
	}
	return f
}

// parseTier reads the rates of one context tier of the given size. A
// row keeps its smallest tier.
func parseTier(r *row, v json.RawMessage, base int64, size float64) error {
	if r.has(fCtxSize) && r.v[fCtxSize] <= size {
		return nil
	}
	var t row
	err := eachField(v, func(key string, v json.RawMessage, off int64) error {
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

// parseTiers reads a models.dev "tiers" list: entries of rates with a
// "tier" object {"type", "size"}; only "context" tiers are kept.
func parseTiers(r *row, v json.RawMessage, base int64) error {
	if len(v) == 0 || v[0] != '[' {
		return &locatedError{base, fmt.Errorf("%w: tiers is %s, want an array", ErrShape, kindOfRaw(v))}
	}
	return eachItem(v, func(it json.RawMessage, o int64) error {
		off := base + o
		var kind string
		var size float64
		err := eachField(it, func(key string, v json.RawMessage, o int64) error {
			if key != "tier" {
				return nil
			}
			return eachField(v, func(key string, v json.RawMessage, o int64) error {
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
			return parseTier(r, it, off, size)
		}
		return nil
	})
}

// parsePeriods reads a row's "periods": an array of objects, each with
// valid_from and/or valid_until (RFC 3339, or a date YYYY-MM-DD meaning
// its midnight UTC) and the rates that hold between them.
func parsePeriods(v json.RawMessage, base int64) ([]period, error) {
	if len(v) == 0 || v[0] != '[' {
		return nil, &locatedError{base, fmt.Errorf("%w: periods is %s, want an array", ErrShape, kindOfRaw(v))}
	}
	var out []period
	var offs []int64
	err := eachItem(v, func(it json.RawMessage, o int64) error {
		off := base + o
		offs = append(offs, off)
		var p period
		err := eachField(it, func(key string, v json.RawMessage, o int64) error {
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
			return err
		}
		if p.r, err = parseRates(it, false); err != nil {
			var le *locatedError
			if errors.As(err, &le) {
				return &locatedError{off + le.off, le.err}
			}
			return err
		}
		switch {
		case p.from == 0 && p.until == 0:
			return &locatedError{off, fmt.Errorf("%w: neither valid_from nor valid_until", ErrPeriod)}
		case p.from != 0 && p.until != 0 && p.from >= p.until:
			return &locatedError{off, fmt.Errorf("%w: valid_from is not before valid_until", ErrPeriod)}
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, err
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

// cmpStart orders period starts, an open start (0) first.
func cmpStart(a, b int64) int {
	switch {
	case a == b:
		return 0
	case a == 0:
		return -1
	case b == 0:
		return 1
	case a < b:
		return -1
	}
	return 1
}

// periodTime parses a period bound: RFC 3339, or YYYY-MM-DD (midnight UTC).
func periodTime(v json.RawMessage, off int64) (int64, error) {
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return 0, &locatedError{off, fmt.Errorf("%w: %s, want a time", ErrPeriod, kindOfRaw(v))}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t, err = time.Parse(time.DateOnly, s)
	}
	// Bounds are kept to the microsecond, as Parquet keeps times, so that
	// the DuckDB views compare alike.
	t = t.Truncate(time.Microsecond)
	if err != nil || t.UnixNano() <= 0 || t.Year() > 2200 {
		return 0, &locatedError{off, fmt.Errorf("%w: %q is not an RFC 3339 time or a date in 1970-2200", ErrPeriod, s)}
	}
	return t.UnixNano(), nil
}

// eachField calls fn for every member of the object raw with the member's
// value and its offset (relative to raw, plus base). raw must be valid
// JSON (the top-level value was checked whole, see parse): it is walked
// without validating it again, and anything but an object or null is an
// ErrShape error.
func eachField(raw json.RawMessage, fn func(key string, v json.RawMessage, off int64) error, base int64) error {
	if isNull(raw) {
		return nil
	}
	if len(raw) == 0 || raw[0] != '{' {
		return &locatedError{base, fmt.Errorf("%w: %s, want an object", ErrShape, kindOfRaw(raw))}
	}
	return members(raw, func(key string, v json.RawMessage, off int64) error {
		if err := fn(key, v, base+off); err != nil {
			var le *locatedError
			if errors.As(err, &le) {
				return &locatedError{le.off, fmt.Errorf("field %q: %w", key, le.err)}
			}
			return err
		}
		return nil
	})
}

// members calls fn for every member of the valid JSON object raw with its
// name, its value and the value's offset in raw, and returns fn's first
// error.
func members(raw []byte, fn func(key string, v json.RawMessage, off int64) error) error {
	for i := skipSpace(raw, 1); i < len(raw) && raw[i] == '"'; {
		end := stringEnd(raw, i)
		key := keyText(raw[i:end])
		i = skipSpace(raw, skipSpace(raw, end)+1) // past the ':'
		vend := valueEnd(raw, i)
		if err := fn(key, raw[i:vend], int64(i)); err != nil {
			return err
		}
		i = skipSpace(raw, vend)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return nil
}

// eachItem calls fn for every element of the array raw, valid JSON, with
// the element and its offset in raw.
func eachItem(raw json.RawMessage, fn func(v json.RawMessage, off int64) error) error {
	for i := skipSpace(raw, 1); i < len(raw) && raw[i] != ']'; {
		end := valueEnd(raw, i)
		if err := fn(raw[i:end], int64(i)); err != nil {
			return err
		}
		i = skipSpace(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return nil
}

// keyText returns the text of a member name, quotes included in raw, as
// encoding/json decodes it (escapes, and invalid UTF-8 as U+FFFD).
func keyText(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	_ = json.Unmarshal(raw, &s) // valid JSON
	return s
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the offset just past the string starting at b[i].
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// valueEnd returns the offset just past the valid JSON value at b[i].
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = stringEnd(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return i
}

// rate parses a rate: a finite, non-negative JSON number.
func rate(v json.RawMessage, off int64) (float64, error) {
	if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return 0, &locatedError{off, fmt.Errorf("%w: %s, want a number", ErrBadRate, kindOfRaw(v))}
	}
	x, err := strconv.ParseFloat(string(v), 64)
	if err != nil || math.IsInf(x, 0) || math.IsNaN(x) || x < 0 {
		return 0, &locatedError{off, fmt.Errorf("%w: %s", ErrBadRate, v)}
	}
	return x, nil
}

func isNull(v json.RawMessage) bool { return string(v) == "null" }

// kindOfRaw names the JSON kind of a valid value, for error messages.
func kindOfRaw(v json.RawMessage) string {
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// kindOf names the JSON kind of a token.
func kindOf(tok json.Token) string {
	switch tok.(type) {
	case json.Delim:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "a number"
}

// lineAt returns the 1-based line of byte offset off in data.
func lineAt(data []byte, off int64) int64 {
	off = min(max(off, 0), int64(len(data)))
	return int64(bytes.Count(data[:off], []byte{'\n'})) + 1
}
