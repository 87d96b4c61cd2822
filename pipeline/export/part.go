package export

import (
	"cmp"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/sessionpipe/sessionpipe/schema"
)

// rowOverhead is what a buffered row costs beside its strings and its
// chunk's slot (see part.nextRowCost): its pointer in the sort.
const rowOverhead = 8

// entryBytes returns what e's row adds to a part beside its chunk's slot:
// its list elements and structs, and every string it copies.
func entryBytes(e *schema.Entry) int64 {
	n := rowOverhead + int64(len(e.Format)+len(e.Host)+len(e.SessionID)+len(e.EntryID))*2 + // key too
		int64(len(e.Path)+len(e.ParentID)+len(e.ParentSessionID)+len(e.Kind)+len(e.Role)+len(e.Subtype)+
			len(e.Text)+len(e.Model)+len(e.Provider)+len(e.MessageID)+len(e.RequestID)+len(e.UsageKey)+
			len(e.StopReason)+len(e.Sender)+len(e.CWD)+len(e.GitBranch)+len(e.AgentVersion)+len(e.AgentID)+
			len(e.AgentType)+len(e.Slug)+len(e.Command)+len(e.CommandArgs)+len(e.Title)+len(e.Raw)) + 3
	if u := e.Usage; u != nil {
		n += int64(unsafe.Sizeof(usage{}) + uintptr(len(u.Speed)))
	}
	if e.CostUSD != nil {
		n += 8
	}
	for i := range e.ToolCalls {
		tc := &e.ToolCalls[i]
		n += int64(unsafe.Sizeof(toolCall{}) + uintptr(len(tc.ID)+len(tc.Name)+len(tc.Input)))
	}
	for i := range e.ToolResults {
		tr := &e.ToolResults[i]
		n += int64(unsafe.Sizeof(toolResult{}) + uintptr(len(tr.ToolCallID)+len(tr.Content)))
	}
	for i := range e.Attachments {
		a := &e.Attachments[i]
		n += int64(unsafe.Sizeof(attachment{}) + uintptr(len(a.Filename)+len(a.MimeType)+len(a.Size)))
	}
	if rc := e.Reaction; rc != nil {
		n += int64(unsafe.Sizeof(reaction{}) + uintptr(len(rc.MessageID)))
		for _, s := range rc.Emojis {
			n += int64(len(s)) + 16
		}
	}
	if o := e.Origin; o != nil {
		n += int64(unsafe.Sizeof(origin{}) + uintptr(len(o.Provider)+len(o.Surface)+len(o.ChatType)+len(o.From)+len(o.Label)))
	}
	return n
}

// part is the open part of one partition: its rows, buffered until the
// part is committed as one file.
type part struct {
	partition Partition
	opened    time.Time // when its first entry arrived
	chunks    [][]row   // rows, in chunks of growing size: no regrowth copies
	n         int       // rows
	strs      arena
	bytes     int64  // what its rows hold, see entryBytes
	first     uint64 // stream sequence of its first entry
	last      uint64 // of its last entry
	minTS     int64  // microseconds, 0 when no entry had a ts
	maxTS     int64
}

func newPart(p Partition, now time.Time) *part {
	return &part{partition: p, opened: now}
}

// size returns the bytes the part holds, as counted for the budget.
func (p *part) size() int64 { return p.bytes }

// Row chunks: a part's first chunk holds 8 rows, each next one twice as
// many up to 256, so that a part of a few rows costs little and a large
// one is never copied to grow.
const (
	minRowChunk = 8
	maxRowChunk = 256
)

// rowSize is the size of a row struct.
const rowSize = int64(unsafe.Sizeof(row{}))

// nextRowCost returns the bytes the next row's chunk costs: 0 when the
// last chunk has room, else the new chunk's size.
func (p *part) nextRowCost() int64 {
	if len(p.chunks) == 0 {
		return minRowChunk * rowSize
	}
	last := p.chunks[len(p.chunks)-1]
	if len(last) < cap(last) {
		return 0
	}
	return int64(min(2*cap(last), maxRowChunk)) * rowSize
}

// add appends e's row; n is entryBytes(e) + p.nextRowCost().
func (p *part) add(e *schema.Entry, seq uint64, n int64) {
	if len(p.chunks) == 0 {
		p.chunks = append(p.chunks, make([]row, 0, minRowChunk))
	} else if last := p.chunks[len(p.chunks)-1]; len(last) == cap(last) {
		p.chunks = append(p.chunks, make([]row, 0, min(2*cap(last), maxRowChunk)))
	}
	c := &p.chunks[len(p.chunks)-1]
	*c = append(*c, row{})
	r := &(*c)[len(*c)-1]
	r.fromEntry(e, seq, &p.strs)
	p.n++
	p.bytes += n
	if p.n == 1 {
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

// order returns the rows sorted by (session_id, ts, seq): sessions
// together, in time order, rows without ts first in their session.
// Sorting pointers moves 8 bytes per swap instead of a row.
func (p *part) order() []*row {
	rows := make([]*row, 0, p.n)
	for _, c := range p.chunks {
		for i := range c {
			rows = append(rows, &c[i])
		}
	}
	slices.SortFunc(rows, func(a, b *row) int {
		if c := strings.Compare(a.SessionID, b.SessionID); c != 0 {
			return c
		}
		if c := cmp.Compare(a.TS, b.TS); c != 0 {
			return c
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
	return rows
}

// slicesSortByFirst sorts parts by their first sequence.
func slicesSortByFirst(parts []*part) {
	slices.SortFunc(parts, func(a, b *part) int { return cmp.Compare(a.first, b.first) })
}
