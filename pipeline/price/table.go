package price

import (
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
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
