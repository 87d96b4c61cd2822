package index

import (
	"cmp"
	"container/heap"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"time"
)

// SessionSort is an order of [Aggregator.Query].
type SessionSort string

// The orders sessions can be listed in, each descending (latest, costliest
// first); ties go by session number.
const (
	SortLastTS  SessionSort = "last_ts" // the default: most recently active first
	SortFirstTS SessionSort = "first_ts"
	SortCost    SessionSort = "cost_usd"
	SortTokens  SessionSort = "total_tokens"
)

// ParseSessionSort checks a sort value; "" is [SortLastTS].
func ParseSessionSort(s string) (SessionSort, error) {
	switch o := SessionSort(s); o {
	case "":
		return SortLastTS, nil
	case SortLastTS, SortFirstTS, SortCost, SortTokens:
		return o, nil
	}
	return "", fmt.Errorf("sort %q: want last_ts, first_ts, cost_usd or total_tokens", s)
}

// SessionQuery selects a page of sessions.
type SessionQuery struct {
	// Filters ("" is any): exact host, format, project (working
	// directory) or model (one of the session's models).
	Host, Format, Project, Model string
	// Labels lists the labels a session must have (Session.Labels), each
	// with the value given.
	Labels map[string]string
	// Search, when set, keeps the sessions where it is a substring, in
	// any case (both lowered by strings.ToLower), of the id, the working
	// directory, the title, the slug or one of the models.
	Search string
	// Parent, when set, keeps the sessions whose parent session id
	// (Session.ParentSessionID: a subagent's, a resumed or forked copy's)
	// is Parent.
	Parent string
	// Since and Until bound the sessions' activity: a session is listed
	// when it was active in [Since, Until] (last_ts >= Since and first_ts
	// <= Until).
	Since, Until time.Time
	Sort         SessionSort
	// Limit is the page size; 0 means DefaultLimit, and it is capped at
	// MaxLimit.
	Limit int
	// Cursor continues after the page that returned it.
	Cursor string
}

// Page sizes of [Aggregator.Query].
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// Query returns the page of sessions q selects, in its order, and the
// cursor of the next page ("" after the last). Sessions made only of
// bookkeeping lines are not listed, as in [Aggregator.Sessions].
//
// With a store, the default order walks an index of last activity, so a
// page costs about its size; the other orders read every session once.
func (a *Aggregator) Query(q SessionQuery) ([]Session, string, error) {
	sort, err := ParseSessionSort(string(q.Sort))
	if err != nil {
		return nil, "", err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	after, err := parseCursor(q.Cursor)
	if err != nil {
		return nil, "", err
	}
	q.Search = strings.ToLower(q.Search) // found compares lower case
	a.settle()
	// The last-activity index serves the default order best when every
	// session is listed; with filters, the listing spares walking it
	// past the sessions that do not match.
	if sort == SortLastTS && a.store != nil && (a.list == nil || q.unfiltered()) {
		return a.queryRecent(q, limit, after)
	}
	if a.list != nil {
		return a.queryListing(q, sort, limit, after)
	}
	// Sort keys, descending, then by number for a total order.
	keyOf := func(s *session) int64 {
		switch sort {
		case SortFirstTS:
			return sortNano(s.firstTS)
		case SortCost:
			return s.sum.cost
		case SortTokens:
			return totalSat(&s.sum.usage)
		}
		return sortNano(s.lastTS)
	}
	// before orders two listed positions: x comes first.
	before := func(xk int64, xn uint64, yk int64, yn uint64) bool {
		return xk > yk || xk == yk && xn > yn
	}
	// Keep the best limit+1 sessions after the cursor in a bounded heap:
	// memory follows the page, not the number of sessions read.
	top := &sessionHeap{less: func(x, y *session) bool { return before(keyOf(y), y.num, keyOf(x), x.num) }}
	collect := func(s *session) {
		if !s.conversation || !q.matches(s) {
			return
		}
		k := keyOf(s)
		if after != nil && !before(after.key, after.num, k, s.num) {
			return // at or before the cursor
		}
		if len(top.items) <= limit {
			heap.Push(top, s)
			return
		}
		if worst := top.items[0]; before(k, s.num, keyOf(worst), worst.num) {
			top.items[0] = s
			heap.Fix(top, 0)
		}
	}
	if err := a.allSessions(collect); err != nil {
		return nil, "", err
	}
	all := top.items
	slices.SortFunc(all, func(x, y *session) int {
		if before(keyOf(x), x.num, keyOf(y), y.num) {
			return -1
		}
		return 1
	})
	end := min(limit, len(all))
	page := make([]Session, 0, end)
	for _, s := range all[:end] {
		page = append(page, s.snapshot())
	}
	a.classifyPage(page)
	next := ""
	if end < len(all) {
		last := all[end-1]
		next = cursor{key: keyOf(last), num: last.num}.String()
	}
	return page, next, nil
}

// sessionHeap is a heap of sessions whose root is the one listed last.
type sessionHeap struct {
	items []*session
	less  func(x, y *session) bool
}

func (h *sessionHeap) Len() int           { return len(h.items) }
func (h *sessionHeap) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *sessionHeap) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *sessionHeap) Push(x any)         { h.items = append(h.items, x.(*session)) }
func (h *sessionHeap) Pop() any {
	n := len(h.items) - 1
	x := h.items[n]
	h.items = h.items[:n]
	return x
}

func (q *SessionQuery) matches(s *session) bool {
	r := rowOf(s)
	return q.matchRow(&r)
}

// unfiltered reports whether q selects every session.
func (q *SessionQuery) unfiltered() bool {
	return q.Host == "" && q.Format == "" && q.Project == "" && q.Model == "" && q.Parent == "" && q.Search == "" &&
		q.Since.IsZero() && q.Until.IsZero() && len(q.Labels) == 0
}

// matchRow is matches on a session's row (listing.go).
func (q *SessionQuery) matchRow(r *listRow) bool {
	switch {
	case q.Host != "" && r.host != q.Host,
		q.Format != "" && r.format != q.Format,
		q.Project != "" && r.cwd != q.Project,
		q.Parent != "" && r.up != q.Parent,
		!q.Since.IsZero() && r.last < sortNano(q.Since),
		!q.Until.IsZero() && r.first > sortNano(q.Until),
		len(q.Labels) > 0 && !r.labels.matches(q.Labels):
		return false
	}
	if q.Model != "" {
		if _, ok := r.models[q.Model]; !ok {
			return false
		}
	}
	return q.Search == "" || r.found(q.Search)
}

// found reports whether search, in lower case, is a substring of the
// session's id, working directory, title, slug or a model, in lower case.
func (r *listRow) found(search string) bool {
	if r.hay == "" {
		r.hay = r.haystack()
	}
	return strings.Contains(r.hay, search)
}

// haystack is what a search looks in: the searched fields in lower case,
// apart.
func (r *listRow) haystack() string {
	var b strings.Builder
	for _, f := range []string{r.id, r.cwd, r.title, r.slug} {
		b.WriteString(strings.ToLower(f))
		b.WriteByte(0)
	}
	for m := range r.models {
		b.WriteString(strings.ToLower(m))
		b.WriteByte(0)
	}
	return b.String()
}

// Count returns the number of sessions q selects (its Sort, Limit and
// Cursor aside): the total of the pages [Aggregator.Query] returns. It
// reads every session once.
func (a *Aggregator) Count(q SessionQuery) (int, error) {
	q.Search = strings.ToLower(q.Search) // found compares lower case
	a.settle()
	n := 0
	if a.list != nil {
		// Every row, then the cached sessions in place of theirs.
		if q.unfiltered() {
			n = a.list.conv
		} else {
			a.eachRow(func(r *listRow) {
				if r.conversation && q.matchRow(r) {
					n++
				}
			})
		}
		a.cachedRows(func(old, cur *listRow) {
			if old != nil && old.conversation && q.matchRow(old) {
				n--
			}
			if cur.conversation && q.matchRow(cur) {
				n++
			}
		})
		return n, nil
	}
	err := a.allSessions(func(s *session) {
		if s.conversation && q.matches(s) {
			n++
		}
	})
	return n, err
}

// cursor is a position in a listing: the sort key and session number of
// the last session of a page. It travels as base64url of the key (a
// varint), the number (a uvarint) and a CRC-32 of them, so that a string
// this server did not make is refused, not read as some position.
type cursor struct {
	key int64
	num uint64
}

func (c cursor) String() string {
	b := binary.AppendVarint(nil, c.key)
	b = binary.AppendUvarint(b, c.num)
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	return base64.RawURLEncoding.EncodeToString(b)
}

// CheckCursor returns the error [Aggregator.Query] would return for
// cursor s, one it did not make; nil for a valid cursor or "".
func CheckCursor(s string) error {
	_, err := parseCursor(s)
	return err
}

func parseCursor(s string) (*cursor, error) {
	if s == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err == nil && len(b) > 4 {
		body, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
		key, n := binary.Varint(body)
		if n > 0 && crc32.ChecksumIEEE(body) == sum {
			num, m := binary.Uvarint(body[n:])
			if m > 0 && n+m == len(body) {
				return &cursor{key: key, num: num}, nil
			}
		}
	}
	return nil, fmt.Errorf("cursor %q: not a cursor this server returned", s)
}

// classifyPage fills the plan/implementation links of the sessions of a
// page from every session sharing their slugs.
func (a *Aggregator) classifyPage(page []Session) {
	slugs := make(map[string]bool)
	for i := range page {
		if page[i].Format == "claude-code" && page[i].Slug != "" {
			slugs[page[i].Slug] = true
		}
	}
	if len(slugs) == 0 {
		return
	}
	type hostID struct{ host, id string }
	var group []Session
	index := make(map[hostID]int) // Claude Code session → position in group
	add := func(s *session) {
		if s.conversation && s.format == "claude-code" && slugs[s.slug.v] {
			if _, dup := index[hostID{s.host, s.id}]; !dup {
				index[hostID{s.host, s.id}] = len(group)
				group = append(group, s.snapshot())
			}
		}
	}
	if a.store == nil {
		_ = a.allSessions(add)
	} else {
		// The slug index names the sessions of each slug; the cache holds
		// the fresher ones, and those not yet indexed.
		for slug := range slugs {
			prefix := append(append([]byte{'g'}, slug...), 0)
			var nums []uint64
			_ = a.store.Scan(prefix, func(k, _ []byte) bool {
				if len(k) == len(prefix)+8 {
					nums = append(nums, binary.BigEndian.Uint64(k[len(prefix):]))
				}
				return true
			})
			for _, num := range nums {
				if s := a.sessionByNum(num); s != nil {
					add(s)
				}
			}
		}
		for _, s := range a.byNum {
			add(s)
		}
	}
	classify(group)
	for i := range page {
		if j, ok := index[hostID{page[i].Host, page[i].SessionID}]; ok && page[i].Format == "claude-code" {
			page[i].SessionKind = group[j].SessionKind
			page[i].PlanSessionIDs = group[j].PlanSessionIDs
			page[i].ImplementationSessionIDs = group[j].ImplementationSessionIDs
		}
	}
}

// slugKey is the key of a session in the slug index.
func slugKey(slug string, num uint64) []byte {
	b := append(append([]byte{'g'}, slug...), 0)
	return binary.BigEndian.AppendUint64(b, num)
}

// recentKey is the key of a session in the last-activity index.
func recentKey(ts time.Time, num uint64) []byte {
	b := binary.BigEndian.AppendUint64([]byte{'t'}, uint64(recentNano(ts)))
	return binary.BigEndian.AppendUint64(b, num)
}

// recentNano is the last-activity index's order of a time: Unix
// nanoseconds, times before 1970 (and none) as 0, times after 2262 as the
// largest. queryRecent orders the cached sessions by it too.
func recentNano(ts time.Time) int64 { return max(sortNano(ts), 0) }

// queryRecent is Query by last activity with a store: it walks the index
// of last activity backwards, merged with the cached sessions (whose
// activity may be newer than the index says), until the page is full.
func (a *Aggregator) queryRecent(q SessionQuery, limit int, after *cursor) ([]Session, string, error) {
	before := func(ts int64, num uint64) bool { // strictly after the cursor in listing order
		if after == nil {
			return true
		}
		return ts < after.key || ts == after.key && num < after.num
	}
	var cachedHits []*session
	for _, s := range a.byNum {
		if s.conversation && q.matches(s) && before(recentNano(s.lastTS), s.num) {
			cachedHits = append(cachedHits, s)
		}
	}
	slices.SortFunc(cachedHits, func(x, y *session) int {
		if c := cmp.Compare(recentNano(y.lastTS), recentNano(x.lastTS)); c != 0 {
			return c
		}
		return cmp.Compare(y.num, x.num)
	})
	upper := []byte{'u'} // the end of the 't' keys
	if after != nil {
		upper = recentKey(time.Unix(0, after.key), after.num)
	}
	it, err := a.store.NewIter([]byte{'t'}, upper)
	if err != nil {
		return nil, "", err
	}
	defer it.Close()
	var out []*session
	var peek *session // the next stored session, not yet listed
	ok := it.Last()
	nextStored := func() (*session, error) {
		for peek == nil && ok {
			k := it.Key()
			if len(k) == 17 {
				num := binary.BigEndian.Uint64(k[9:])
				// A cached session is listed from the cache, with its
				// fresher activity; a row of the listing that does not
				// match spares reading the session.
				if r := a.rowOf(num); a.byNum[num] == nil && (r == nil || r.conversation && q.matchRow(r)) {
					v, err := a.store.Get(sessionNumKey(num))
					if err != nil {
						return nil, err
					}
					if v != nil {
						s, err := decodeSession(v)
						if err != nil {
							return nil, err
						}
						if s.conversation && q.matches(s) {
							peek = s
						}
					}
				}
			}
			ok = it.Prev()
		}
		return peek, nil
	}
	for len(out) <= limit {
		stored, err := nextStored()
		if err != nil {
			return nil, "", err
		}
		var c *session
		if len(cachedHits) > 0 {
			c = cachedHits[0]
		}
		switch {
		case stored == nil && c == nil:
			goto done
		case stored == nil || c != nil && (recentNano(c.lastTS) > recentNano(stored.lastTS) ||
			recentNano(c.lastTS) == recentNano(stored.lastTS) && c.num > stored.num):
			out = append(out, c)
			cachedHits = cachedHits[1:]
		default:
			out = append(out, stored)
			peek = nil
		}
	}
done:
	if err := it.Err(); err != nil {
		return nil, "", err
	}
	next := ""
	if len(out) > limit {
		out = out[:limit]
		last := out[limit-1]
		next = cursor{key: recentNano(last.lastTS), num: last.num}.String()
	}
	page := make([]Session, 0, len(out))
	for _, s := range out {
		page = append(page, s.snapshot())
	}
	a.classifyPage(page)
	return page, next, nil
}
