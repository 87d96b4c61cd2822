package price

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sessionpipe/sessionpipe/schema"
)

//go:embed prices.json
var embedded string

//go:embed modelsdev.json
var embeddedModelsDev string

//go:embed history.json
var embeddedHistory string

// Layers of a table, in lookup order (see [Table.Lookup]).
const (
	layerLiteLLM   = iota // LiteLLM-shaped rows, overrides of them, models only an override file has
	layerModelsDev        // the models.dev snapshot's rows
	numLayers
)

// layerSource is the source of the rows of each layer that no override
// changed.
var layerSource = [numLayers]string{SourceLiteLLM, SourceModelsDev}

// Table maps model names to prices. Its prices never change once built,
// so one *Table can be shared by any number of goroutines; the zero Table
// prices nothing. A Table must not be copied: keep the *Table.
type Table struct {
	layers [numLayers]layer
	fp     string // Fingerprint

	cache  sync.Map     // name → *entry (nil: unpriced), for non-key names
	cached atomic.Int32 // names stored in cache, up to maxCached
}

// layer is one lookup layer: its rows by key and their prices.
type layer struct {
	rows   map[string]row    // every row as given, partial ones included
	prices map[string]*entry // the rows that price on their own, by key
	norm   map[string]*entry // by normalised key; nil marks a clash
}

// entry is the price of one key: its base price and its dated periods,
// sorted by start.
type entry struct {
	base    Price
	periods []Price
}

// at returns the price of e at ts: the period holding ts, else the base
// price (also for the zero time, a call of unknown time).
func (e *entry) at(ts time.Time) *Price {
	if !ts.IsZero() {
		for i := range e.periods {
			p := &e.periods[i]
			if (p.ValidFrom.IsZero() || !ts.Before(p.ValidFrom)) && (p.ValidUntil.IsZero() || ts.Before(p.ValidUntil)) {
				return p
			}
		}
	}
	return &e.base
}

// Default returns a new table holding the embedded prices (see README.md):
// the LiteLLM rows ccusage 20.0.24 uses offline, then the rows of the
// models.dev snapshot ccusage embeds, with the dated periods of
// history.json laid over them. It parses the embedded files on every
// call, so callers should keep the *Table rather than call Default per
// lookup.
func Default() *Table {
	lit, err := parse([]byte(embedded))
	if err != nil {
		// Unreachable: TestDefault loads the same bytes. An empty table
		// reports every model unpriced rather than at $0.
		return build(nil, nil)
	}
	md, err := parse([]byte(embeddedModelsDev))
	if err != nil {
		return build(nil, nil)
	}
	hist, err := parse([]byte(embeddedHistory))
	if err != nil {
		return build(nil, nil)
	}
	return merge([numLayers]map[string]row{lit, md}, hist)
}

// Load reads a price table from a JSON object whose keys are model names.
// A row is either in the shape of LiteLLM's
// model_prices_and_context_window.json (rates per token; see the package
// comment for the fields read) or, when it has a "cost" object, in the
// shape of a models.dev model (rates per million tokens). Either may
// carry "periods", dated rates (see the package comment). All other
// fields, and LiteLLM's "sample_spec" row, are accepted and ignored. A
// row may be partial, for use with [Table.Merge]; on its own it prices a
// model only if it has both the input and the output rate. Every row of a
// loaded table is an override: its prices have the source
// [SourceOverride].
//
// Invalid JSON, a value of the wrong shape, a rate that is not a finite,
// non-negative number or a period that is empty or overlaps another stops
// loading with a *[schema.DecodeError] giving the line and byte offset of
// the problem and wrapping [ErrSyntax], [ErrShape], [ErrBadRate] or
// [ErrPeriod]. Read errors of r are returned as they are.
func Load(r io.Reader) (*Table, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read price table: %w", err)
	}
	rows, err := parse(data)
	if err != nil {
		return nil, err
	}
	for k, r := range rows {
		r.over = true
		rows[k] = r
	}
	return build(rows, nil), nil
}

// Merge returns a new table in which o overrides and extends t: for a
// model both have, every field o's row sets replaces t's, while the
// fields it leaves out keep t's values, and o's periods, if it has any,
// replace t's; a model only in o is added. A row of o is laid over the
// row of the same key in the first layer of t that has one (the LiteLLM
// rows, then the models.dev rows), and keeps its layer. Rates derived
// from the input rate (cache defaults) are derived again from the merged
// input rate, so overriding only input_cost_per_token moves them along,
// as ccusage's price overrides do. Prices of rows o changed or added have
// the source of o's rows ([SourceOverride] for a loaded table). Neither t
// nor o is modified; a nil o returns t.
func (t *Table) Merge(o *Table) *Table {
	if o == nil {
		return t
	}
	var over map[string]row
	for i := range o.layers {
		for k, r := range o.layers[i].rows {
			if over == nil {
				over = make(map[string]row)
			}
			over[k] = r
		}
	}
	return merge([numLayers]map[string]row{t.layers[layerLiteLLM].rows, t.layers[layerModelsDev].rows}, over)
}

// merge lays the rows of over on the layers' rows and builds the table.
func merge(layers [numLayers]map[string]row, over map[string]row) *Table {
	var out [numLayers]map[string]row
	for i := range layers {
		out[i] = make(map[string]row, len(layers[i]))
		for k, r := range layers[i] {
			out[i][k] = r
		}
	}
	for k, r := range over {
		placed := false
		for i := range out {
			if base, ok := out[i][k]; ok {
				out[i][k] = base.merged(r)
				placed = true
				break
			}
		}
		if !placed {
			out[layerLiteLLM][k] = r
		}
	}
	return build(out[layerLiteLLM], out[layerModelsDev])
}

// Len returns the number of models the table prices under their own name.
func (t *Table) Len() int {
	n := 0
	for i := range t.layers {
		n += len(t.layers[i].prices)
	}
	return n
}

// Models returns the sorted names of the models the table prices.
func (t *Table) Models() []string {
	names := make([]string, 0, t.Len())
	for i := range t.layers {
		for k := range t.layers[i].prices {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	return names
}

// Prices returns every price the table holds: for each model it prices,
// its base price (ValidFrom and ValidUntil zero) followed by the prices of
// its dated periods in time order; models in name order.
func (t *Table) Prices() []Price {
	out := make([]Price, 0, t.Len())
	for _, m := range t.Models() {
		e := t.key(m)
		out = append(out, e.base)
		out = append(out, e.periods...)
	}
	return out
}

// Fingerprint returns a digest of everything the table prices with: two
// tables with the same fingerprint price every call alike. The indexer
// keeps it with its state to tell when the table changed.
func (t *Table) Fingerprint() string {
	if t.fp == "" {
		return fingerprint(nil)
	}
	return t.fp
}

// key returns the entry of a key of the table, or nil.
func (t *Table) key(k string) *entry {
	for i := range t.layers {
		if e := t.layers[i].prices[k]; e != nil {
			return e
		}
	}
	return nil
}

// build indexes the rows of each layer by exact and by normalised name.
// A models.dev row whose key the LiteLLM rows resolve ([Table.Lookup]) is
// left out: the LiteLLM row is always found first.
func build(lit, md map[string]row) *Table {
	t := &Table{}
	for i, rows := range [numLayers]map[string]row{lit, md} {
		l := &t.layers[i]
		l.rows = make(map[string]row, len(rows))
		l.prices = make(map[string]*entry, len(rows))
		l.norm = make(map[string]*entry, len(rows))
		var buf [maxName]byte
		for k, r := range rows {
			if i > layerLiteLLM && t.layers[layerLiteLLM].resolve(k) != nil {
				continue // the LiteLLM rows price this name: never reached
			}
			l.rows[k] = r
			e, ok := resolveEntry(k, r, i)
			if !ok {
				continue
			}
			l.prices[k] = e
			n, ok := normalize(buf[:0], k)
			if !ok {
				continue
			}
			if _, clash := l.norm[string(n)]; clash {
				l.norm[string(n)] = nil // two keys, one spelling: name neither
				continue
			}
			l.norm[string(n)] = e
		}
	}
	t.fp = fingerprint(&t.layers)
	return t
}

// resolveEntry resolves a row and its periods into the prices of key k.
func resolveEntry(k string, r row, layer int) (*entry, bool) {
	base, ok := r.resolve(k)
	if !ok {
		return nil, false
	}
	src := layerSource[layer]
	if r.over {
		src = SourceOverride
	}
	base.Source, base.Layer = src, layer
	e := &entry{base: base}
	for _, p := range r.periods {
		pr := r.fields().merged(p.r)
		pp, ok := pr.resolve(k)
		if !ok {
			continue // unreachable: the base row resolves, a period only adds fields
		}
		pp.Source, pp.Layer = src, layer
		if p.from != 0 {
			pp.ValidFrom = time.Unix(0, p.from).UTC()
		}
		if p.until != 0 {
			pp.ValidUntil = time.Unix(0, p.until).UTC()
		}
		e.periods = append(e.periods, pp)
	}
	return e, true
}

// fingerprint digests the rows of every layer in key order.
func fingerprint(layers *[numLayers]layer) string {
	h := sha256.New()
	var b []byte
	if layers != nil {
		for i := range layers {
			keys := make([]string, 0, len(layers[i].rows))
			for k := range layers[i].rows {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				r := layers[i].rows[k]
				b = appendRow(append(binary.AppendUvarint(b[:0], uint64(i)), k...), &r)
				for _, p := range r.periods {
					b = binary.AppendVarint(b, p.from)
					b = binary.AppendVarint(b, p.until)
					b = appendRow(b, &p.r)
				}
				h.Write(binary.AppendUvarint(nil, uint64(len(b))))
				h.Write(b)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func appendRow(b []byte, r *row) []byte {
	b = binary.AppendUvarint(b, uint64(r.set))
	if r.over {
		b = append(b, 1)
	}
	for f := range numFields {
		if r.has(f) {
			b = binary.AppendUvarint(b, math.Float64bits(r.v[f]))
		}
	}
	return binary.AppendUvarint(b, uint64(len(r.periods)))
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
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		return &locatedError{base, fmt.Errorf("%w: %w", ErrSyntax, err)}
	}
	off := base
	for _, it := range items {
		off = base + int64(bytes.Index(v[off-base:], it)) // where this item starts
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
			if err := parseTier(r, it, off, size); err != nil {
				return err
			}
		}
		off += int64(len(it))
	}
	return nil
}

// parsePeriods reads a row's "periods": an array of objects, each with
// valid_from and/or valid_until (RFC 3339, or a date YYYY-MM-DD meaning
// its midnight UTC) and the rates that hold between them.
func parsePeriods(v json.RawMessage, base int64) ([]period, error) {
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
			return nil, err
		}
		if p.r, err = parseRates(it, false); err != nil {
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
