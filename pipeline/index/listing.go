package index

import (
	"cmp"
	"container/heap"
	"encoding/binary"
	"slices"
)

// The listing: with a store, the indexer keeps in memory a small row of
// every stored session (what the filters, the search and the orders of
// [Aggregator.Query] read: ids, host, format, project, title, slug,
// parent, models, labels, times, cost, tokens), so that a page, a search
// or a total over 100,000 sessions reads the rows, not the store, and
// decodes only the sessions of the page. It is built once when the
// indexer opens its state (every session decoded once) and kept up to
// date at each commit from the sessions written; the cached sessions,
// fresher, are read in place of their rows. It costs about 550 bytes a
// session (measured on the benchmarks' 100,000). An Aggregator without a listing (offline, tests) reads the
// sessions as before.

// listRow is what the listing keeps of a session.
type listRow struct {
	num                                    uint64
	conversation                           bool
	id, host, format, cwd, title, slug, up string // up: the parent session id
	first, last, cost, tokens              int64  // first, last: sortNano
	models                                 map[string]int
	labels                                 labelSet
	hay                                    string // what a search looks in, lower case; "" until needed
}

// listing holds the rows of the stored sessions, in a slice read in
// order (a scan of 100,000 rows is then a few milliseconds), with their
// positions by session number, and how many are conversations (the
// unfiltered total).
type listing struct {
	rows   []listRow
	pos    map[uint64]int32
	conv   int
	intern map[string]string // host, format, project and model names, shared
}

func (l *listing) str(s string) string {
	if v, ok := l.intern[s]; ok {
		return v
	}
	l.intern[s] = s
	return s
}

// rowOf is the row of s; it shares s's model map (the listing's rows are
// of stored sessions, whose maps no one changes: a cached session is read
// in place of its row).
func rowOf(s *session) listRow {
	return listRow{num: s.num, conversation: s.conversation, id: s.id, host: s.host, format: string(s.format), cwd: s.cwd.v,
		title: s.title.v, slug: s.slug.v, up: s.parentID.v, first: sortNano(s.firstTS), last: sortNano(s.lastTS),
		cost: s.sum.cost, tokens: totalSat(&s.sum.usage), models: s.models, labels: s.labels.v}
}

// put records the row of a session written to the store.
func (l *listing) put(s *session) {
	r := rowOf(s)
	r.host, r.format, r.cwd = l.str(r.host), l.str(r.format), l.str(r.cwd)
	models := make(map[string]int, len(s.models))
	for m, n := range s.models {
		models[l.str(m)] = n
	}
	r.models = models
	r.hay = r.haystack()
	if r.conversation {
		l.conv++
	}
	if i, ok := l.pos[r.num]; ok {
		if l.rows[i].conversation {
			l.conv--
		}
		l.rows[i] = r
		return
	}
	l.pos[r.num] = int32(len(l.rows))
	l.rows = append(l.rows, r)
}

// buildListing reads every stored session once into the listing.
func (a *Aggregator) buildListing() error {
	if a.store == nil {
		return nil
	}
	l := &listing{pos: make(map[uint64]int32), intern: make(map[string]string)}
	err := a.store.Scan([]byte{'s'}, func(k, v []byte) bool {
		if len(k) != 9 {
			return true
		}
		s, err := decodeSession(v)
		if err != nil {
			a.fail(err)
			return false
		}
		s.num = binary.BigEndian.Uint64(k[1:])
		l.put(s)
		return true
	})
	if err != nil {
		a.fail(err)
	}
	if a.err != nil {
		return a.err
	}
	if err := a.buildCells(); err != nil {
		a.fail(err)
		return a.err
	}
	l.rows = slices.Clone(l.rows) // without the room append left
	a.list = l
	return nil
}

// eachRow calls fn with the row of every stored session, the cached
// ones too: the listing's rows, read in order without asking the cache
// (a clean cached session is as its row; see cachedRows for the others).
func (a *Aggregator) eachRow(fn func(r *listRow)) {
	for i := range a.list.rows {
		fn(&a.list.rows[i])
	}
}

// cachedRows calls fn with each cached session's row in the listing
// (nil when it has none yet: a new session) and its row made from the
// session, fresher: a query over the listing takes the first back and
// counts the second.
func (a *Aggregator) cachedRows(fn func(old, cur *listRow)) {
	for num, s := range a.byNum {
		cur := rowOf(s)
		fn(a.rowOf(num), &cur)
	}
}

// rowOf returns the listing's row of session num, nil without a listing
// or a row.
func (a *Aggregator) rowOf(num uint64) *listRow {
	if a.list == nil {
		return nil
	}
	i, ok := a.list.pos[num]
	if !ok {
		return nil
	}
	return &a.list.rows[i]
}

// sortKey is a row's key in order sort (descending).
func (r *listRow) sortKey(sort SessionSort) int64 {
	switch sort {
	case SortFirstTS:
		return r.first
	case SortCost:
		return r.cost
	case SortTokens:
		return r.tokens
	}
	return max(r.last, 0) // as the last-activity index orders (recentNano)
}

// queryListing is Query over the listing, in any order: the best limit+1
// rows after the cursor in a bounded heap, then the page's sessions read.
func (a *Aggregator) queryListing(q SessionQuery, sort SessionSort, limit int, after *cursor) ([]Session, string, error) {
	before := func(xk int64, xn uint64, yk int64, yn uint64) bool { return xk > yk || xk == yk && xn > yn }
	top := &rowHeap{}
	offer := func(r *listRow, cached bool) {
		if !r.conversation || !q.matchRow(r) {
			return
		}
		k := r.sortKey(sort)
		if after != nil && !before(after.key, after.num, k, r.num) {
			return
		}
		full := len(top.items) > limit
		if full && !before(k, r.num, top.items[0].key, top.items[0].r.num) {
			return
		}
		if !cached && a.byNum[r.num] != nil {
			return // the cached session is the fresher: offered below
		}
		if !full {
			heap.Push(top, keyedRow{k, r})
			return
		}
		top.items[0] = keyedRow{k, r}
		heap.Fix(top, 0)
	}
	a.eachRow(func(r *listRow) { offer(r, false) })
	var cached []listRow // kept apart: the heap holds pointers to them
	for _, s := range a.byNum {
		cached = append(cached, rowOf(s))
	}
	for i := range cached {
		offer(&cached[i], true)
	}
	all := top.items
	slices.SortFunc(all, func(x, y keyedRow) int {
		return cmp.Or(cmp.Compare(y.key, x.key), cmp.Compare(y.r.num, x.r.num))
	})
	end := min(limit, len(all))
	page := make([]Session, 0, end)
	for _, kr := range all[:end] {
		r := kr.r
		s := a.byNum[r.num]
		if s == nil {
			v, err := a.store.Get(sessionNumKey(r.num))
			if err == nil && v == nil {
				err = ErrCorruptState
			}
			if err == nil {
				s, err = decodeSession(v)
			}
			if err != nil {
				return nil, "", err
			}
		}
		page = append(page, s.snapshot())
	}
	a.classifyPage(page)
	next := ""
	if end < len(all) {
		last := all[end-1]
		next = cursor{key: last.key, num: last.r.num}.String()
	}
	return page, next, nil
}

// keyedRow is a row with its sort key.
type keyedRow struct {
	key int64
	r   *listRow
}

// rowHeap is a heap of rows whose root is the one listed last.
type rowHeap struct{ items []keyedRow }

func (h *rowHeap) Len() int { return len(h.items) }
func (h *rowHeap) Less(i, j int) bool {
	x, y := h.items[i], h.items[j]
	return x.key < y.key || x.key == y.key && x.r.num < y.r.num
}
func (h *rowHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *rowHeap) Push(x any)    { h.items = append(h.items, x.(keyedRow)) }
func (h *rowHeap) Pop() any {
	n := len(h.items) - 1
	x := h.items[n]
	h.items = h.items[:n]
	return x
}
