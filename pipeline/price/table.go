package price

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sessionpipe/sessionpipe/schema"
)

//go:embed prices.json
var embedded string

// Table maps model names to prices. Its prices never change once built,
// so one *Table can be shared by any number of goroutines; the zero Table
// prices nothing. A Table must not be copied: keep the *Table.
type Table struct {
	rows   map[string]row    // every row as given, partial ones included
	prices map[string]*Price // the rows that price on their own, by key
	norm   map[string]*Price // by normalised key; nil marks a clash

	cache  sync.Map     // name → *Price (nil: unpriced), for non-key names
	cached atomic.Int32 // names stored in cache, up to maxCached
}

// Default returns a new table holding the embedded prices (see README.md):
// the ones ccusage 20.0.24 uses offline. It parses the embedded file on
// every call, so callers should keep the *Table rather than call Default
// per lookup.
func Default() *Table {
	t, err := Load(strings.NewReader(embedded))
	if err != nil {
		// Unreachable: TestDefault loads the same bytes. An empty table
		// reports every model unpriced rather than at $0.
		return build(nil)
	}
	return t
}

// Load reads a price table in the shape of LiteLLM's
// model_prices_and_context_window.json: one object whose keys are model
// names and whose values are objects of rates (see the package comment for
// the fields read; all others, and LiteLLM's "sample_spec" row, are
// accepted and ignored). A row may be partial, for use with [Table.Merge];
// on its own it prices a model only if it has both the input and the
// output rate.
//
// Invalid JSON, a value of the wrong shape or a rate that is not a
// finite, non-negative number stops loading with a *[schema.DecodeError]
// giving the line and byte offset of the problem and wrapping
// [ErrSyntax], [ErrShape] or [ErrBadRate]. Read errors of r are returned
// as they are.
func Load(r io.Reader) (*Table, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read price table: %w", err)
	}
	rows, err := parse(data)
	if err != nil {
		return nil, err
	}
	return build(rows), nil
}

// Merge returns a new table in which o overrides and extends t: a model
// only in o is added, and for a model in both, every field o's row sets
// replaces t's, while the fields it leaves out keep t's values. Rates
// derived from the input rate (cache defaults) are derived again from the
// merged input rate, so overriding only input_cost_per_token moves them
// along, as ccusage's price overrides do. Neither t nor o is modified; a
// nil o returns t.
func (t *Table) Merge(o *Table) *Table {
	if o == nil {
		return t
	}
	rows := make(map[string]row, len(t.rows)+len(o.rows))
	for k, r := range t.rows {
		rows[k] = r
	}
	for k, r := range o.rows {
		if base, ok := rows[k]; ok {
			r = base.over(r)
		}
		rows[k] = r
	}
	return build(rows)
}

// Len returns the number of models the table prices under their own name.
func (t *Table) Len() int { return len(t.prices) }

// Models returns the sorted names of the models the table prices.
func (t *Table) Models() []string {
	names := make([]string, 0, len(t.prices))
	for k := range t.prices {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// build indexes rows by exact and by normalised name.
func build(rows map[string]row) *Table {
	t := &Table{
		rows:   rows,
		prices: make(map[string]*Price, len(rows)),
		norm:   make(map[string]*Price, len(rows)),
	}
	var buf [maxName]byte
	for k, r := range rows {
		p, ok := r.resolve(k)
		if !ok {
			continue
		}
		t.prices[k] = &p
		n, ok := normalize(buf[:0], k)
		if !ok {
			continue
		}
		if _, clash := t.norm[string(n)]; clash {
			t.norm[string(n)] = nil // two keys, one spelling: name neither
			continue
		}
		t.norm[string(n)] = &p
	}
	return t
}

// parse decodes a LiteLLM document into rows, locating the first error.
func parse(data []byte) (map[string]row, error) {
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
		if r.set != 0 {
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

// locatedError is an error at an offset inside a row.
type locatedError struct {
	off int64
	err error
}

func (e *locatedError) Error() string { return e.err.Error() }

// parseRow reads the fields a row keeps from one already-valid JSON value.
func parseRow(raw json.RawMessage) (row, error) {
	var r row
	err := eachField(raw, func(key string, v json.RawMessage, off int64) error {
		if key == "provider_specific_entry" {
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

// eachField calls fn for every member of the object raw with the member's
// value and its offset (relative to raw, plus base). raw must be valid
// JSON; anything but an object or null is an ErrShape error.
func eachField(raw json.RawMessage, fn func(key string, v json.RawMessage, off int64) error, base int64) error {
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
