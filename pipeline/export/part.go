package export

import (
	"cmp"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/sessionpipe/sessionpipe/schema"
)

// rowOverhead is what a buffered row costs beside its strings: the row
// struct and its share of the slices that hold it.
const rowOverhead = int64(unsafe.Sizeof(row{})) + 16

// part is the open part of one partition: its rows, buffered until the
// part is committed as one file.
type part struct {
	partition Partition
	opened    time.Time // when its first entry arrived
	rows      []row
	strs      arena
	fixed     int64  // row structs, lists and structs
	first     uint64 // stream sequence of its first entry
	last      uint64 // of its last entry
	minTS     int64  // microseconds, 0 when no entry had a ts
	maxTS     int64
}

func newPart(p Partition, now time.Time) *part {
	return &part{partition: p, opened: now}
}

// size returns the bytes the part holds, as counted for the budget.
func (p *part) size() int64 { return p.strs.alloc + p.fixed }

// add appends e's row.
func (p *part) add(e *schema.Entry, seq uint64) {
	p.rows = append(p.rows, row{})
	r := &p.rows[len(p.rows)-1]
	r.fromEntry(e, seq, &p.strs)
	p.fixed += rowOverhead + int64(len(r.ToolCalls))*int64(unsafe.Sizeof(toolCall{})) +
		int64(len(r.ToolResults))*int64(unsafe.Sizeof(toolResult{})) +
		int64(len(r.Attachments))*int64(unsafe.Sizeof(attachment{}))
	if r.Usage != nil {
		p.fixed += int64(unsafe.Sizeof(usage{}))
	}
	if len(p.rows) == 1 {
		p.first = seq
	}
	p.last = seq
	if ts := r.TS; ts != 0 {
		if p.minTS == 0 || ts < p.minTS {
			p.minTS = ts
		}
		p.maxTS = max(p.maxTS, ts)
	}
}

// order returns the indexes of the rows sorted by (session_id, ts, seq):
// sessions together, in time order, rows without ts first in their
// session. Sorting indexes moves 4 bytes per swap instead of a row.
func (p *part) order() []int32 {
	idx := make([]int32, len(p.rows))
	for i := range idx {
		idx[i] = int32(i)
	}
	rows := p.rows
	slices.SortFunc(idx, func(i, j int32) int {
		a, b := &rows[i], &rows[j]
		if c := strings.Compare(a.SessionID, b.SessionID); c != 0 {
			return c
		}
		if c := cmp.Compare(a.TS, b.TS); c != 0 {
			return c
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
	return idx
}

// slicesSortByFirst sorts parts by their first sequence.
func slicesSortByFirst(parts []*part) {
	slices.SortFunc(parts, func(a, b *part) int { return cmp.Compare(a.first, b.first) })
}
