package parse

import (
	"hash/fnv"
	"strconv"
)

// LineID returns the derived entry id of the object-th object of line
// number n, for formats whose records carry no id and whose files are
// append-only: "L<n>", or "L<n>.<object>" for a second or later object.
// It is stable as long as the file is only appended to.
func LineID(n int64, object int) string {
	b := make([]byte, 0, 24)
	b = append(b, 'L')
	b = strconv.AppendInt(b, n, 10)
	return ordinal(b, uint64(object))
}

// ordinal returns id with ".<k>" appended when k > 0.
func ordinal(id []byte, k uint64) string {
	if k > 0 {
		id = append(id, '.')
		id = strconv.AppendUint(id, k, 10)
	}
	return string(id)
}

// UniqueIDs gives out the entry ids of a file whose records carry their
// own ids, which need not be unique in the file: a record's own id, the
// [LineID] of its line for a record without one, and "<id>.L<n>" for an id
// already given out earlier in the file, so that two records of a file
// never share a key. Ids depend only on the lines before, so they are
// stable as long as the file is read from its start. The zero value is
// ready to use; it keeps every id given out.
type UniqueIDs struct {
	seen map[string]struct{}
}

// ID returns the entry id of the object-th record of line number n, whose
// own id is id ("" when it has none).
func (u *UniqueIDs) ID(id string, n int64, object int) string {
	if id == "" {
		id = LineID(n, object)
	}
	if u.seen == nil {
		u.seen = make(map[string]struct{})
	}
	if _, dup := u.seen[id]; dup {
		id = id + "." + LineID(n, object)
	}
	u.seen[id] = struct{}{}
	return id
}

// Empty reports whether no id has been given out yet.
func (u *UniqueIDs) Empty() bool { return u.seen == nil }

// ContentIDs derives entry ids from record content for formats whose files
// may be rewritten (a line moves, ids by position would shift): "h<hash>"
// for the first record with those bytes in the file, "h<hash>.<k>" for the
// k-th repeat. Ids are stable across rewrites that keep the records, and
// across re-reads from the start of the file. The zero value is ready to
// use; it keeps one counter per distinct record.
type ContentIDs struct {
	seen map[uint64]uint32
}

// ID returns the id of the next record with content raw.
func (c *ContentIDs) ID(raw []byte) string {
	h := fnv.New64a()
	h.Write(raw)
	sum := h.Sum64()
	if c.seen == nil {
		c.seen = make(map[uint64]uint32)
	}
	k := c.seen[sum]
	c.seen[sum] = k + 1
	b := make([]byte, 0, 24)
	b = append(b, 'h')
	b = strconv.AppendUint(b, sum, 16)
	return ordinal(b, uint64(k))
}
