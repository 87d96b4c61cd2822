package index

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/index/store"

	"github.com/sessionpipe/sessionpipe/schema"
)

// Rollups: every counted API call adds its tokens, cost and one call to a
// cell of a cube keyed by (UTC hour, host, format, model, project,
// labels); a call whose counting moves to another occurrence is taken
// from its cell and added to the new one's. Usage by any dimension, by
// hour or by day is a sum over the cells of a time range
// ([Aggregator.Usage]). A call's hour is its timestamp's; its project is
// its entry's working directory, else its session's when the call was
// first seen; its labels are its entry's whole label set, so that a
// host's labels add one cell per host, not one per label.
//
// Cells are stored under 'r' + hour + host, format, model and project
// when they have no labels (the key they had before labels existed), and
// under 'l' + hour + the length-prefixed label set + the same strings
// when they have some.

// rollKey is a cell of the cube.
type rollKey struct {
	hour                         int64 // the call's UTC hour as hourCode keeps it; 0 when it has no timestamp
	host, format, model, project string
	labels                       labelSet
}

// rollCell holds a cell's sums.
type rollCell struct {
	key                                  rollKey
	calls, unpriced                      int64
	input, output, cacheRead, cacheWrite int64
	cost                                 int64 // nano-dollars
	cached
}

// UsageChange is a change of what one API call counts for: the call
// counted in a session (Sign 1) or taken back from it (Sign -1).
type UsageChange struct {
	Sign      int64
	TS        time.Time
	SessionID string
	Format    schema.Format
	Host      string
	Project   string
	Model     string
	Labels    map[string]string // the labels of the call's entry; nil when none
	Tokens    schema.Usage      // the call's tokens (not multiplied by Sign)
	CostUSD   float64           // the call's cost, 0 when unpriced
	Unpriced  bool
}

func usageChange(s *session, c *usageContrib, at *origin, sign int64) UsageChange {
	u := UsageChange{
		Sign: sign, SessionID: s.id, Format: s.format, Host: s.host, Project: c.project, Model: c.model,
		Tokens:  schema.Usage{Input: c.input, Output: c.output, CacheRead: c.cacheRead, CacheWrite: c.cacheWrite},
		CostUSD: usd(c.cost), Unpriced: c.unpriced, Labels: c.labels.toMap(),
	}
	u.TS = at.ts.time()
	return u
}

// rollup adds (sign 1) or removes a call from its cell.
func (a *Aggregator) rollup(s *session, c *usageContrib, at *origin, sign int64) {
	k := rollKey{hour: hourOf(at.ts), host: s.host, format: string(s.format), model: c.model, project: c.project, labels: c.labels}
	cell := a.rollups[k]
	if cell == nil && a.store != nil {
		cell = a.loadCell(k)
	}
	if cell == nil {
		cell = &rollCell{key: k}
		a.rollups[k] = cell
	}
	cell.used = a.gen
	cell.calls += sign
	if c.unpriced {
		cell.unpriced += sign
	}
	cell.input = addSat(cell.input, sign*c.input)
	cell.output = addSat(cell.output, sign*c.output)
	cell.cacheRead = addSat(cell.cacheRead, sign*c.cacheRead)
	cell.cacheWrite = addSat(cell.cacheWrite, sign*c.cacheWrite)
	cell.cost = addSat(cell.cost, sign*c.cost)
	if a.store != nil && !cell.dirty {
		cell.dirty = true
		a.dirtyR = append(a.dirtyR, cell)
	}
}

// hourOf returns the rollup hour of a call at ts: 0 when ts is not known,
// else its Unix hour (the hours since 1970-01-01T00:00Z, rounded down)
// as hourCode keeps it.
func hourOf(ts stamp) int64 {
	if !ts.known() {
		return 0
	}
	return hourCode(floorDiv(ts.unix(), 3600))
}

// hourCode is how a rollup keeps Unix hour h: h itself from
// 1970-01-01T01:00Z on (the hours cells have always been stored under),
// h-1 at and before the epoch's hour, so that 0 stays "no timestamp".
// Codes are in time order; stored as the big-endian bytes of a uint64,
// the hours before the epoch sort after the others (see scanCells).
func hourCode(h int64) int64 {
	if h <= 0 {
		return h - 1
	}
	return h
}

// hourStart returns the start of the hour of code (not 0).
func hourStart(code int64) time.Time {
	h := code
	if code < 0 {
		h++
	}
	return time.Unix(h*3600, 0).UTC()
}

// floorDiv is a/b rounded down (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// GroupBy is a dimension of [Aggregator.Usage]: one of the constants, or
// a label: "label:<name>", usage grouped by the value of that label of
// each call's entry, "" for calls without it.
type GroupBy string

// The dimensions usage can be grouped by.
const (
	ByHost    GroupBy = "host"
	ByFormat  GroupBy = "format"
	ByModel   GroupBy = "model"
	ByProject GroupBy = "project"
	ByDay     GroupBy = "day"
	ByHour    GroupBy = "hour"
)

// ParseGroupBy checks a group_by value: a dimension, or label:<name>
// with a label name as schema.ValidateLabel accepts.
func ParseGroupBy(s string) (GroupBy, error) {
	switch g := GroupBy(s); g {
	case ByHost, ByFormat, ByModel, ByProject, ByDay, ByHour:
		return g, nil
	}
	if name, ok := GroupBy(s).Label(); ok {
		if err := schema.ValidateLabel(name, "x"); err != nil {
			return "", fmt.Errorf("group_by %q: %w", s, err)
		}
		return GroupBy(s), nil
	}
	return "", fmt.Errorf("group_by %q: want host, format, model, project, day, hour or label:<name>", s)
}

// UsageQuery selects and groups usage.
type UsageQuery struct {
	GroupBy GroupBy
	// Since and Until bound the calls' timestamps, hour by hour: a call
	// counts when its hour starts in [Since truncated to the hour, Until).
	// Zero means unbounded; calls without a timestamp count only when
	// Since is zero.
	Since, Until time.Time
	// Filters: only calls whose cell has these values ("" is any).
	Host, Format, Model, Project string
	// Labels filters calls by their entry's labels: a call counts when
	// it has every label given, with the value given.
	Labels map[string]string
	// Bucket, ByDay or ByHour, splits each group by time as well (a
	// time series for a chart): rows are then one per (bucket, group),
	// ordered by bucket then key. "" does not split.
	Bucket GroupBy
	// Location is the time zone of the day and hour keys (of GroupBy and
	// Bucket); nil is UTC. A call's hour is its UTC hour, placed in the
	// local day or hour in which that UTC hour starts: in a zone whose
	// offset is not whole hours (Asia/Kolkata, +05:30) a day's first
	// local half hour is counted in the day before.
	Location *time.Location
}

// UsageRow is the usage of one group.
type UsageRow struct {
	// Bucket is the row's day or hour when the query has a Bucket, else
	// "" (left out of the JSON form).
	Bucket           string  `json:"bucket,omitempty"`
	Key              string  `json:"key"`
	Calls            int64   `json:"api_calls"`
	InputTokens      int64   `json:"input_tokens"`
	OutputTokens     int64   `json:"output_tokens"`
	CacheReadTokens  int64   `json:"cache_read_tokens"`
	CacheWriteTokens int64   `json:"cache_write_tokens"`
	TotalTokens      int64   `json:"total_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	UnpricedCalls    int64   `json:"unpriced_calls"`
}

// Usage returns the usage of the calls q selects, grouped as it says,
// ordered by key (time order for day and hour), or by bucket then key.
func (a *Aggregator) Usage(q UsageQuery) ([]UsageRow, error) {
	rows, _, err := a.UsageWithTotal(q)
	return rows, err
}

// UsageWithTotal is [Aggregator.Usage] with the sum of its rows, each
// cost summed in nano-dollars before it is rounded (so the total is the
// cost of the calls, not a sum of rounded figures).
func (a *Aggregator) UsageWithTotal(q UsageQuery) ([]UsageRow, UsageRow, error) {
	if _, err := ParseGroupBy(string(q.GroupBy)); err != nil {
		return nil, UsageRow{}, err
	}
	switch q.Bucket {
	case "", ByDay, ByHour:
	default:
		return nil, UsageRow{}, fmt.Errorf("bucket %q: want day or hour", q.Bucket)
	}
	loc := q.Location
	if loc == nil {
		loc = time.UTC
	}
	a.settle()
	// The codes of the hours [lo, hi) selected; calls without a
	// timestamp (code 0) count only when Since is zero.
	lo, hi := usageBounds(q)
	if a.cells != nil {
		rows, total := a.usageFromTable(q, loc, lo, hi, q.Since.IsZero())
		return rows, total, nil
	}
	type group struct {
		row  UsageRow
		cost int64 // nano-dollars
	}
	type gid struct{ bucket, key string }
	groups := make(map[gid]*group)
	var total group
	times := make(map[int64][2]string) // hour code → day and hour keys, computed once
	timeKeys := func(hour int64) [2]string {
		tk, ok := times[hour]
		if !ok {
			tk = [2]string{timeKey(ByDay, hour, loc), timeKey(ByHour, hour, loc)}
			times[hour] = tk
		}
		return tk
	}
	sum := func(g *group, c *rollCell) {
		r := &g.row
		r.Calls += c.calls
		r.UnpricedCalls += c.unpriced
		r.InputTokens = addSat(r.InputTokens, c.input)
		r.OutputTokens = addSat(r.OutputTokens, c.output)
		r.CacheReadTokens = addSat(r.CacheReadTokens, c.cacheRead)
		r.CacheWriteTokens = addSat(r.CacheWriteTokens, c.cacheWrite)
		g.cost = addSat(g.cost, c.cost)
	}
	add := func(c *rollCell) {
		k := &c.key
		if k.hour == 0 && !q.Since.IsZero() || k.hour != 0 && (k.hour < lo || k.hour >= hi) || q.Host != "" && k.host != q.Host || q.Format != "" && k.format != q.Format ||
			q.Model != "" && k.model != q.Model || q.Project != "" && k.project != q.Project || c.calls == 0 ||
			len(q.Labels) > 0 && !k.labels.matches(q.Labels) {
			return
		}
		var id gid
		switch q.GroupBy {
		case ByDay:
			id.key = timeKeys(k.hour)[0]
		case ByHour:
			id.key = timeKeys(k.hour)[1]
		default:
			id.key = groupKey(q.GroupBy, k)
		}
		switch q.Bucket {
		case ByDay:
			id.bucket = timeKeys(k.hour)[0]
		case ByHour:
			id.bucket = timeKeys(k.hour)[1]
		}
		g := groups[id]
		if g == nil {
			g = &group{row: UsageRow{Bucket: id.bucket, Key: id.key}}
			groups[id] = g
		}
		sum(g, c)
		sum(&total, c)
	}
	if a.store != nil {
		for _, p := range []byte{'r', 'l'} {
			if err := a.scanCells(p, lo, hi, add); err != nil {
				return nil, UsageRow{}, err
			}
		}
	}
	for _, c := range a.rollups {
		add(c)
	}
	finish := func(g *group) UsageRow {
		r := g.row
		r.TotalTokens = addSat(addSat(r.InputTokens, r.OutputTokens), addSat(r.CacheReadTokens, r.CacheWriteTokens))
		r.CostUSD = usd(g.cost)
		return r
	}
	out := make([]UsageRow, 0, len(groups))
	for _, g := range groups {
		out = append(out, finish(g))
	}
	slices.SortFunc(out, func(x, y UsageRow) int { return cmp.Or(cmp.Compare(x.Bucket, y.Bucket), cmp.Compare(x.Key, y.Key)) })
	return out, finish(&total), nil
}

// timeKey is the key of hour code hour in a day or hour grouping, in
// loc: "unknown" for calls without a timestamp; a day as YYYY-MM-DD; an
// hour as 2006-01-02T15Z in UTC, else as the local time of the hour's
// start with its offset (2006-01-02T15:04+01:00).
func timeKey(g GroupBy, hour int64, loc *time.Location) string {
	if hour == 0 {
		return "unknown"
	}
	t := hourStart(hour)
	if g == ByDay {
		return t.In(loc).Format(time.DateOnly)
	}
	if loc == time.UTC {
		return t.Format("2006-01-02T15Z")
	}
	return t.In(loc).Format("2006-01-02T15:04Z07:00")
}

// scanCells calls add with each stored cell of prefix p (unlabelled or
// labelled) whose hour code is in [lo, hi) (code 0, no timestamp,
// included when the range holds it), but those in the cache. The codes
// before the epoch are stored after the others: a range across the
// epoch is two scans.
func (a *Aggregator) scanCells(p byte, lo, hi int64, add func(*rollCell)) error {
	key := func(code int64) []byte { return binary.BigEndian.AppendUint64([]byte{p}, uint64(code)) }
	if lo < 0 {
		end := prefixEnd([]byte{p})
		if hi <= 0 {
			end = key(hi)
		}
		if err := a.scanCellRange(key(lo), end, add); err != nil {
			return err
		}
	}
	if hi > 0 {
		return a.scanCellRange(key(max(lo, 0)), key(hi), add)
	}
	return nil
}

// scanCellRange calls add with each stored cell in [start, end), but
// those in the cache.
func (a *Aggregator) scanCellRange(start, end []byte, add func(*rollCell)) error {
	it, err := a.store.NewIter(start, end)
	if err != nil {
		return err
	}
	// The names of a scan repeat from cell to cell: each is made a
	// string once (a large scan, the dashboard's "all", reads a cell per
	// session or more).
	names := make(map[string]string)
	intern := func(b []byte) string {
		if s, ok := names[string(b)]; ok {
			return s
		}
		s := string(b)
		names[s] = s
		return s
	}
	for ok := it.First(); ok; ok = it.Next() {
		k, err := parseCellKeyWith(it.Key(), intern)
		if err != nil {
			it.Close()
			return err
		}
		if _, ok := a.rollups[k]; ok {
			continue // the cached cell is the fresher
		}
		v, err := it.Value()
		if err != nil {
			it.Close()
			return err
		}
		c, err := decodeCell(v, k)
		if err != nil {
			it.Close()
			return err
		}
		add(c)
	}
	return it.Close()
}

func groupKey(g GroupBy, k *rollKey) string {
	if name, ok := g.Label(); ok {
		return k.labels.get(name)
	}
	switch g {
	case ByHost:
		return k.host
	case ByFormat:
		return k.format
	case ByModel:
		return k.model
	case ByProject:
		return k.project
	default:
		return timeKey(g, k.hour, time.UTC)
	}
}

func cellStoreKey(k rollKey) []byte {
	var b []byte
	if k.labels == "" {
		b = binary.BigEndian.AppendUint64([]byte{'r'}, uint64(k.hour))
	} else {
		b = binary.BigEndian.AppendUint64([]byte{'l'}, uint64(k.hour))
		b = binary.AppendUvarint(b, uint64(len(k.labels)))
		b = append(b, k.labels...)
	}
	for i, s := range []string{k.host, k.format, k.model, k.project} {
		if i > 0 {
			b = append(b, 0)
		}
		b = append(b, s...)
	}
	return b
}

func parseCellKey(b []byte) (rollKey, error) {
	return parseCellKeyWith(b, func(b []byte) string { return string(b) })
}

// parseCellKeyWith is parseCellKey making its strings with str.
func parseCellKeyWith(b []byte, str func([]byte) string) (rollKey, error) {
	if len(b) < 9 || b[0] != 'r' && b[0] != 'l' {
		return rollKey{}, fmt.Errorf("%w: rollup key %q", ErrCorruptState, b)
	}
	k := rollKey{hour: int64(binary.BigEndian.Uint64(b[1:9]))}
	rest := b[9:]
	if b[0] == 'l' {
		n, w := binary.Uvarint(rest)
		if w <= 0 || n == 0 || n > uint64(len(rest)-w) {
			return rollKey{}, fmt.Errorf("%w: rollup key %q", ErrCorruptState, b)
		}
		k.labels = labelSet(str(rest[w : w+int(n)]))
		rest = rest[w+int(n):]
	}
	var parts [4][]byte
	for i := range 3 {
		j := bytes.IndexByte(rest, 0)
		if j < 0 {
			return rollKey{}, fmt.Errorf("%w: rollup key %q", ErrCorruptState, b)
		}
		parts[i], rest = rest[:j], rest[j+1:]
	}
	parts[3] = rest
	k.host, k.format, k.model, k.project = str(parts[0]), str(parts[1]), str(parts[2]), str(parts[3])
	return k, nil
}

func encodeCell(b []byte, c *rollCell) []byte {
	e := encoder{b: append(b, recordVersion)}
	for _, v := range []int64{c.calls, c.unpriced, c.input, c.output, c.cacheRead, c.cacheWrite, c.cost} {
		e.varint(v)
	}
	return e.b
}

func decodeCell(b []byte, k rollKey) (*rollCell, error) {
	d := decoder{b: b}
	d.version()
	c := &rollCell{key: k}
	for _, v := range []*int64{&c.calls, &c.unpriced, &c.input, &c.output, &c.cacheRead, &c.cacheWrite, &c.cost} {
		*v = d.varint()
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	return c, nil
}

// loadCell reads a stored cell, nil if none.
func (a *Aggregator) loadCell(k rollKey) *rollCell {
	v, err := a.store.Get(cellStoreKey(k))
	if err != nil || v == nil {
		if err != nil {
			a.fail(err)
		}
		return nil
	}
	c, err := decodeCell(v, k)
	if err != nil {
		a.fail(err)
		return nil
	}
	a.rollups[k] = c
	return c
}

// writeCells adds the dirty cells to b; empty cells are deleted.
func (a *Aggregator) writeCells(b *store.Batch, buf []byte) []byte {
	for _, c := range a.dirtyR {
		if c.calls == 0 && c.input == 0 && c.output == 0 && c.cacheRead == 0 && c.cacheWrite == 0 && c.cost == 0 {
			b.Delete(cellStoreKey(c.key))
		} else {
			buf = encodeCell(buf[:0], c)
			b.Set(cellStoreKey(c.key), buf)
		}
		if a.cells != nil {
			a.cellsPending = append(a.cellsPending, *c)
		}
		c.dirty = false
	}
	clear(a.dirtyR)
	a.dirtyR = a.dirtyR[:0]
	return buf
}

// evictCells drops clean cells unused since the last commit.
func (a *Aggregator) evictCells() {
	for k, c := range a.rollups {
		if !c.dirty && c.used+1 < a.gen {
			delete(a.rollups, k)
		}
	}
}
