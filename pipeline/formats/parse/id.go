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
	if object > 0 {
		b = append(b, '.')
		b = strconv.AppendInt(b, int64(object), 10)
	}
	return string(b)
}

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
	if k > 0 {
		b = append(b, '.')
		b = strconv.AppendUint(b, uint64(k), 10)
	}
	return string(b)
}
