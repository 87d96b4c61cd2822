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
// struct, its share of the slices that hold it, and its sort index.
const rowOverhead = int64(unsafe.Sizeof(row{})) + 16

// entryBytes returns what e's row adds to a part: the fixed size of the
// row, of its list elements and structs, and every string it copies.
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
	rows      []row
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

// add appends e's row; n is entryBytes(e).
func (p *part) add(e *schema.Entry, seq uint64, n int64) {
	p.rows = append(p.rows, row{})
	r := &p.rows[len(p.rows)-1]
	r.fromEntry(e, seq, &p.strs)
	p.bytes += n
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
