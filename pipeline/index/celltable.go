package index

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// The cell table: with the listing (listing.go), the indexer keeps every
// stored rollup cell in memory as well, hour by hour, its names as small
// numbers, so that usage over any range ([Aggregator.UsageWithTotal], the
// dashboard's chart and totals) sums cells in memory instead of reading
// them from the store: the "all" range of a state of 100,000 sessions
// reads about 100,000 cells, 0.4–0.7 s from pebble, about 12 ms of CPU
// here (benchmarks/RESULTS.md). It is read from the store once, when the
// listing is built, and follows every commit (the cells written, after
// the store took them); cells changed since the last commit, the dirty
// cells of the cache, are read from the cache in place of theirs, as the
// store scan does. It costs about 155 bytes a cell (measured on the
// benchmarks' 100,000 cells: 16 MB).

// cellID is a cell's names, as numbers of the table's names.
type cellID struct{ host, format, model, project, labels uint32 }

// tcell is a stored cell in the table.
type tcell struct {
	id                                   cellID
	calls, unpriced                      int64
	input, output, cacheRead, cacheWrite int64
	cost                                 int64 // nano-dollars
}

// hourCells are the cells of one hour.
type hourCells struct {
	idx   map[cellID]int32
	cells []tcell
}

// cellTable holds the stored cells by hour code.
type cellTable struct {
	names map[string]uint32
	strs  []string
	hours map[int64]*hourCells
	order []int64 // the hour codes held, ascending (time order)
}

func newCellTable() *cellTable {
	return &cellTable{names: map[string]uint32{"": 0}, strs: []string{""}, hours: make(map[int64]*hourCells)}
}

// id is the number of name, given one when new.
func (t *cellTable) id(name string) uint32 {
	if n, ok := t.names[name]; ok {
		return n
	}
	n := uint32(len(t.strs))
	t.names[name] = n
	t.strs = append(t.strs, name)
	return n
}

// lookup is the number of name, false when the table has none.
func (t *cellTable) lookup(name string) (uint32, bool) {
	n, ok := t.names[name]
	return n, ok
}

func (t *cellTable) idOf(k *rollKey) cellID {
	return cellID{t.id(k.host), t.id(k.format), t.id(k.model), t.id(k.project), t.id(string(k.labels))}
}

// set records the stored sums of cell c (its key included); a cell of
// all zeros is removed, as the store deletes it.
func (t *cellTable) set(c *rollCell) {
	id := t.idOf(&c.key)
	h := t.hours[c.key.hour]
	empty := c.calls == 0 && c.input == 0 && c.output == 0 && c.cacheRead == 0 && c.cacheWrite == 0 && c.cost == 0
	if h == nil {
		if empty {
			return
		}
		h = &hourCells{idx: make(map[cellID]int32)}
		t.hours[c.key.hour] = h
		i, _ := slices.BinarySearch(t.order, c.key.hour)
		t.order = slices.Insert(t.order, i, c.key.hour)
	}
	i, ok := h.idx[id]
	if empty {
		if ok {
			last := int32(len(h.cells) - 1)
			if i != last {
				h.cells[i] = h.cells[last]
				h.idx[h.cells[i].id] = i
			}
			h.cells = h.cells[:last]
			delete(h.idx, id)
		}
		return
	}
	v := tcell{id: id, calls: c.calls, unpriced: c.unpriced, input: c.input, output: c.output,
		cacheRead: c.cacheRead, cacheWrite: c.cacheWrite, cost: c.cost}
	if ok {
		h.cells[i] = v
		return
	}
	h.idx[id] = int32(len(h.cells))
	h.cells = append(h.cells, v)
}

// buildCells reads every stored cell into a new table.
func (a *Aggregator) buildCells() error {
	t := newCellTable()
	for _, p := range []byte{'r', 'l'} {
		err := a.scanCellRange([]byte{p}, prefixEnd([]byte{p}), func(c *rollCell) { t.set(c) })
		if err != nil {
			return err
		}
	}
	// The scan passed over the cached cells: the clean ones are as
	// stored; the dirty ones are read from the cache until their commit.
	for _, c := range a.rollups {
		if !c.dirty {
			t.set(c)
		}
	}
	a.cells = t
	return nil
}

// usageGroup is a row being summed, its cost in nano-dollars.
type usageGroup struct {
	row  UsageRow
	cost int64
}

func (g *usageGroup) add(c *tcell) {
	r := &g.row
	r.Calls += c.calls
	r.UnpricedCalls += c.unpriced
	r.InputTokens = addSat(r.InputTokens, c.input)
	r.OutputTokens = addSat(r.OutputTokens, c.output)
	r.CacheReadTokens = addSat(r.CacheReadTokens, c.cacheRead)
	r.CacheWriteTokens = addSat(r.CacheWriteTokens, c.cacheWrite)
	g.cost = addSat(g.cost, c.cost)
}

func (g *usageGroup) finish() UsageRow {
	r := g.row
	r.TotalTokens = addSat(addSat(r.InputTokens, r.OutputTokens), addSat(r.CacheReadTokens, r.CacheWriteTokens))
	r.CostUSD = usd(g.cost)
	return r
}

// usageFromTable is UsageWithTotal's sum over the table, the hours
// [lo, hi) of hour codes (code 0, calls without a timestamp, when
// unknown is true), the dirty cells of the cache in place of theirs. q
// is checked.
func (a *Aggregator) usageFromTable(q UsageQuery, loc *time.Location, lo, hi int64, unknown bool) ([]UsageRow, UsageRow) {
	t := a.cells
	// The cells changed since the last commit, by hour, with their
	// numbers; their stored versions are passed over.
	var dirty map[int64][]tcell
	var skip map[int64]map[cellID]bool
	if len(a.dirtyR) > 0 {
		dirty = make(map[int64][]tcell)
		skip = make(map[int64]map[cellID]bool)
		for _, c := range a.dirtyR {
			id := t.idOf(&c.key)
			dirty[c.key.hour] = append(dirty[c.key.hour], tcell{id: id, calls: c.calls, unpriced: c.unpriced, input: c.input,
				output: c.output, cacheRead: c.cacheRead, cacheWrite: c.cacheWrite, cost: c.cost})
			if skip[c.key.hour] == nil {
				skip[c.key.hour] = make(map[cellID]bool)
			}
			skip[c.key.hour][id] = true
		}
	}
	// The filters as numbers: a name the table has not is in no cell.
	none := false
	filter := func(name string) (uint32, bool) {
		if name == "" {
			return 0, false
		}
		n, ok := t.lookup(name)
		none = none || !ok
		return n, true
	}
	host, byHost := filter(q.Host)
	format, byFormat := filter(q.Format)
	model, byModel := filter(q.Model)
	project, byProject := filter(q.Project)
	labelsOK := make(map[uint32]bool)
	matches := func(c *tcell) bool {
		if c.calls == 0 || byHost && c.id.host != host || byFormat && c.id.format != format ||
			byModel && c.id.model != model || byProject && c.id.project != project {
			return false
		}
		if len(q.Labels) == 0 {
			return true
		}
		ok, seen := labelsOK[c.id.labels]
		if !seen {
			ok = labelSet(t.strs[c.id.labels]).matches(q.Labels)
			labelsOK[c.id.labels] = ok
		}
		return ok
	}
	// Group keys: a name's number, a label value's number (the table's
	// names), or a day or hour's index in times.
	label, byLabel := q.GroupBy.Label()
	labelValue := make(map[uint32]uint32)
	var times []string
	timeIdx := make(map[string]uint32)
	timeOf := func(s string) uint32 {
		n, ok := timeIdx[s]
		if !ok {
			n = uint32(len(times))
			timeIdx[s] = n
			times = append(times, s)
		}
		return n
	}
	type gid struct{ bucket, key uint32 }
	groups := make(map[gid]*usageGroup)
	var total usageGroup
	sumHour := func(hour int64, cells []tcell, skipped map[cellID]bool) {
		var day, hr uint32
		if q.GroupBy == ByDay || q.Bucket == ByDay {
			day = timeOf(timeKey(ByDay, hour, loc))
		}
		if q.GroupBy == ByHour || q.Bucket == ByHour {
			hr = timeOf(timeKey(ByHour, hour, loc))
		}
		var id gid
		switch q.Bucket {
		case ByDay:
			id.bucket = day
		case ByHour:
			id.bucket = hr
		}
		for i := range cells {
			c := &cells[i]
			if skipped[c.id] || !matches(c) {
				continue
			}
			switch q.GroupBy {
			case ByDay:
				id.key = day
			case ByHour:
				id.key = hr
			case ByHost:
				id.key = c.id.host
			case ByFormat:
				id.key = c.id.format
			case ByModel:
				id.key = c.id.model
			case ByProject:
				id.key = c.id.project
			default:
				if byLabel {
					v, ok := labelValue[c.id.labels]
					if !ok {
						v = t.id(labelSet(t.strs[c.id.labels]).get(label))
						labelValue[c.id.labels] = v
					}
					id.key = v
				}
			}
			g := groups[id]
			if g == nil {
				g = &usageGroup{}
				groups[id] = g
			}
			g.add(c)
			total.add(c)
		}
	}
	if !none {
		each := func(hour int64) {
			var cells []tcell
			if h := t.hours[hour]; h != nil {
				cells = h.cells
			}
			sumHour(hour, cells, skip[hour])
		}
		if unknown {
			each(0)
		}
		start, _ := slices.BinarySearch(t.order, lo)
		for _, hour := range t.order[start:] {
			if hour >= hi {
				break
			}
			if hour != 0 {
				each(hour)
			}
		}
		for hour, cells := range dirty {
			if hour == 0 && unknown || hour != 0 && hour >= lo && hour < hi {
				sumHour(hour, cells, nil)
			}
		}
	}
	out := make([]UsageRow, 0, len(groups))
	timeKeyed := q.GroupBy == ByDay || q.GroupBy == ByHour
	for id, g := range groups {
		r := g.finish()
		if q.Bucket != "" {
			r.Bucket = times[id.bucket]
		}
		if timeKeyed {
			r.Key = times[id.key]
		} else {
			r.Key = t.strs[id.key]
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(x, y UsageRow) int { return cmp.Or(cmp.Compare(x.Bucket, y.Bucket), cmp.Compare(x.Key, y.Key)) })
	return out, total.finish()
}

// usageBounds are the hour codes [lo, hi) of the calls q selects.
func usageBounds(q UsageQuery) (lo, hi int64) {
	lo, hi = int64(math.MinInt64), int64(math.MaxInt64)
	if !q.Since.IsZero() {
		lo = hourCode(floorDiv(q.Since.Unix(), 3600))
	}
	if !q.Until.IsZero() {
		sec := q.Until.Unix()
		h := floorDiv(sec, 3600)
		if sec-h*3600 != 0 || q.Until.Nanosecond() != 0 {
			h++ // the first hour starting at or after Until
		}
		hi = hourCode(h)
	}
	return lo, hi
}
