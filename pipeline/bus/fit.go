package bus

import (
	"slices"

	"github.com/nats-io/nats.go"

	"github.com/sessionpipe/sessionpipe/schema"
)

// MaxPayload returns the largest message, headers included, that the
// server the publisher is connected to accepts (its max_payload), or 0
// before the connection learned it. It may change after a reconnect to
// another server: read it again for each batch of messages built.
func (p *Publisher) MaxPayload() int { return int(p.nc.MaxPayload()) }

// HeaderSize returns how many bytes the headers h take in a message, as
// the client encodes them (they count against the server's max_payload).
func HeaderSize(h nats.Header) int {
	if len(h) == 0 {
		return 0
	}
	n := len("NATS/1.0\r\n") + len("\r\n")
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(": ") + len(v) + len("\r\n")
		}
	}
	return n
}

// FitEntryMsg returns the message that publishes e, as [EntryMsg] does,
// no larger than maxSize bytes with its headers. An entry whose message
// would be larger is shortened in place, in this order, until it fits:
// Raw is dropped; then the text, the tool results' contents and the tool
// calls' inputs are cut to a common length (an input is valid JSON, so
// one longer than that length is left out whole), the longest first;
// then, if even the entry without them is too large, tool results that
// are not errors, tool calls, and last error results are left out from
// the end, counted in ToolResultsOmitted and ToolCallsOmitted. Usage,
// ids, model, timestamps, labels and everything else the counts read are
// never changed. A shortened entry is marked Truncated and shortened reports
// true.
//
// When the entry cannot fit even so (maxSize below what its ids and
// fixed fields take), it returns a nil message and [ErrEntryTooLarge]:
// the caller should dead-letter the source line. buf is used as by
// [EntryMsg].
func FitEntryMsg(prefix string, e *schema.Entry, maxSize int, buf []byte) (m *nats.Msg, shortened bool, err error) {
	m = EntryMsg(prefix, e, buf)
	room := maxSize - HeaderSize(m.Header)
	if len(m.Data) <= room {
		return m, false, nil
	}
	e.Truncated, e.Raw = true, nil
	if m = EntryMsg(prefix, e, m.Data); len(m.Data) <= room {
		return m, true, nil
	}

	// The text fields, kept whole, and the entry without them.
	f := newFitter(e)
	f.cut(0)
	m = EntryMsg(prefix, e, m.Data)
	for len(m.Data) > room {
		items := len(e.ToolCalls) + len(e.ToolResults)
		f.drop(len(m.Data) - room)
		if len(e.ToolCalls)+len(e.ToolResults) == items {
			return nil, true, ErrEntryTooLarge
		}
		m = EntryMsg(prefix, e, m.Data)
	}

	// Give the room left to the text fields, shortest first: each gets
	// all it needs up to a common length. Escapes make the JSON longer
	// than the text: aim lower until it fits.
	base := len(m.Data)
	budget := room - base
	for range 8 {
		if budget <= 0 {
			break
		}
		f.cut(f.capFor(budget))
		m = EntryMsg(prefix, e, m.Data)
		if len(m.Data) <= room {
			return m, true, nil
		}
		budget = budget * (room - base) / (len(m.Data) - base) * 15 / 16
	}
	f.cut(0)
	return EntryMsg(prefix, e, m.Data), true, nil
}

// fitter shortens the text fields of one entry from their original
// values.
type fitter struct {
	e       *schema.Entry
	text    string
	inputs  [][]byte
	results []string
}

func newFitter(e *schema.Entry) *fitter {
	f := &fitter{e: e, text: e.Text, results: make([]string, len(e.ToolResults)), inputs: make([][]byte, len(e.ToolCalls))}
	for i := range e.ToolResults {
		f.results[i] = e.ToolResults[i].Content
	}
	for i := range e.ToolCalls {
		f.inputs[i] = e.ToolCalls[i].Input
	}
	return f
}

// cut sets every text field to its original cut to limit bytes, and
// leaves out the inputs longer than limit.
func (f *fitter) cut(limit int) {
	f.e.Text = cutUTF8(f.text, limit)
	for i := range f.e.ToolResults {
		f.e.ToolResults[i].Content = cutUTF8(f.results[i], limit)
	}
	for i := range f.e.ToolCalls {
		f.e.ToolCalls[i].Input = nil
		if len(f.inputs[i]) <= limit {
			f.e.ToolCalls[i].Input = f.inputs[i]
		}
	}
}

// capFor returns the largest common length at which the fields still
// present take at most budget bytes in all.
func (f *fitter) capFor(budget int) int {
	lens := make([]int, 0, 1+len(f.e.ToolResults)+len(f.e.ToolCalls))
	lens = append(lens, len(f.text))
	for i := range f.e.ToolResults {
		lens = append(lens, len(f.results[i]))
	}
	for i := range f.e.ToolCalls {
		lens = append(lens, len(f.inputs[i]))
	}
	slices.Sort(lens)
	for i, n := range lens {
		// Fields i.. all get the same length c.
		if left := len(lens) - i; n*left > budget {
			return budget / left
		}
		budget -= n
	}
	return lens[len(lens)-1]
}

// drop leaves out tool results and calls, from the end, whose estimated
// JSON size (with the text fields cut to nothing) adds up to over bytes:
// results that are not errors first, then calls, then error results.
func (f *fitter) drop(over int) {
	over = f.dropResults(over, false)
	e := f.e
	for over > 0 && len(e.ToolCalls) > 0 {
		n := len(e.ToolCalls) - 1
		tc := &e.ToolCalls[n]
		over -= len(tc.ID) + len(tc.Name) + len(`{"id":"","name":""},`)
		e.ToolCalls, f.inputs = e.ToolCalls[:n], f.inputs[:n]
		e.ToolCallsOmitted++
	}
	f.dropResults(over, true)
}

// dropResults leaves out, from the end, results whose IsError is isErr
// until their estimated size covers over; it returns what is left of
// over.
func (f *fitter) dropResults(over int, isErr bool) int {
	e := f.e
	keep := make([]bool, len(e.ToolResults))
	for i := len(e.ToolResults) - 1; i >= 0; i-- {
		tr := &e.ToolResults[i]
		if over <= 0 || tr.IsError != isErr {
			keep[i] = true
			continue
		}
		over -= len(tr.ToolCallID) + len(`{"tool_call_id":"","is_error":true},`)
		e.ToolResultsOmitted++
	}
	j := 0
	for i := range e.ToolResults {
		if keep[i] {
			e.ToolResults[j], f.results[j] = e.ToolResults[i], f.results[i]
			j++
		}
	}
	clear(e.ToolResults[j:])
	e.ToolResults, f.results = e.ToolResults[:j], f.results[:j]
	return over
}

// cutUTF8 returns s cut to at most n bytes on a UTF-8 boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
