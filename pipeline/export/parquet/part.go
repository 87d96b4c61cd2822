package parquet

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/sessionpipe/sessionpipe/schema"
)

// rowOverhead is what a buffered row costs beside its strings, list
// elements and its chunk's slot (see part.nextRowCost): its pointer in
// the sort.
const rowOverhead = 8

// entryBytes returns what e's row adds to a part beside its chunk's slot:
// its list elements in the side tables and every string it copies.
func entryBytes(e *schema.Entry) int64 {
	n := rowOverhead + int64(len(e.Format)+len(e.Host)+len(e.SessionID)+len(e.EntryID))*2 + // key too
		int64(len(e.Path)+len(e.ParentID)+len(e.ParentSessionID)+len(e.Kind)+len(e.Role)+len(e.Subtype)+
			len(e.Text)+len(e.Model)+len(e.Provider)+len(e.MessageID)+len(e.RequestID)+len(e.UsageKey)+
			len(e.StopReason)+len(e.Sender)+len(e.CWD)+len(e.GitBranch)+len(e.AgentVersion)+len(e.AgentID)+
			len(e.AgentType)+len(e.Slug)+len(e.Command)+len(e.CommandArgs)+len(e.Title)+len(e.Raw)) + 3
	if u := e.Usage; u != nil {
		n += int64(len(u.Speed))
	}
	for i := range e.ToolCalls {
		tc := &e.ToolCalls[i]
		n += pcallSize + int64(len(tc.ID)+len(tc.Name)+len(tc.Input))
	}
	for i := range e.ToolResults {
		tr := &e.ToolResults[i]
		n += presultSize + int64(len(tr.ToolCallID)+len(tr.Content))
	}
	for i := range e.Attachments {
		a := &e.Attachments[i]
		n += pattSize + int64(len(a.Filename)+len(a.MimeType)+len(a.Size))
	}
	if rc := e.Reaction; rc != nil {
		n += int64(len(rc.MessageID))
		for _, s := range rc.Emojis {
			n += spanSize + int64(len(s))
		}
	}
	if o := e.Origin; o != nil {
		n += int64(len(o.Provider) + len(o.Surface) + len(o.ChatType) + len(o.From) + len(o.Label))
	}
	for k, v := range e.Labels {
		n += plabelSize + int64(len(k)+len(v))
	}
	return n
}

// part is the open part of one partition: its rows, buffered until the
// part is committed as one file.
type part struct {
	partition Partition
	opened    time.Time // when its first entry arrived
	chunks    [][]prow  // rows, in chunks of growing size: no regrowth copies
	n         int       // rows
	strs      arena     // their strings
	tables    tables    // their list elements
	bytes     int64     // what its rows hold, see entryBytes
	first     uint64    // stream sequence of its first entry
	last      uint64    // of its last entry
	minTS     int64     // microseconds, 0 when no entry had a ts
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

// rowSize is the size of a buffered row.
const rowSize = prowSize

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
		p.chunks = append(p.chunks, make([]prow, 0, minRowChunk))
	} else if last := p.chunks[len(p.chunks)-1]; len(last) == cap(last) {
		p.chunks = append(p.chunks, make([]prow, 0, min(2*cap(last), maxRowChunk)))
	}
	c := &p.chunks[len(p.chunks)-1]
	*c = append(*c, prow{})
	r := &(*c)[len(*c)-1]
	r.pack(e, seq, &p.strs, &p.tables)
	p.n++
	p.bytes += n
	if p.n == 1 {
		p.first = seq
	}
	p.last = seq
	if ts := r.ts; ts != 0 {
		if p.minTS == 0 || ts < p.minTS {
			p.minTS = ts
		}
		p.maxTS = max(p.maxTS, ts)
	}
}

// order returns the rows sorted by (session_id, ts, seq): sessions
// together, in time order, rows without ts first in their session.
// Sorting pointers moves 8 bytes per swap instead of a row.
func (p *part) order() []*prow {
	rows := make([]*prow, 0, p.n)
	for _, c := range p.chunks {
		for i := range c {
			rows = append(rows, &c[i])
		}
	}
	slices.SortFunc(rows, func(a, b *prow) int {
		if c := strings.Compare(p.strs.get(a.s[sSession]), p.strs.get(b.s[sSession])); c != 0 {
			return c
		}
		if c := cmp.Compare(a.ts, b.ts); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	return rows
}

// slicesSortByFirst sorts parts by their first sequence.
func slicesSortByFirst(parts []*part) {
	slices.SortFunc(parts, func(a, b *part) int { return cmp.Compare(a.first, b.first) })
}
