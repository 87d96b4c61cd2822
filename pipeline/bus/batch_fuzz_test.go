package bus_test

import (
	"strconv"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/schema"
)

// FuzzBatchDecoder feeds the batch decoder bodies and header values a
// forged or broken message could carry: it returns an error or entries,
// never panics, and never allocates beyond its bound for what a body
// claims.
func FuzzBatchDecoder(f *testing.F) {
	m, _, _ := batchOf(f, 0, 3, true)
	f.Add(m.Data, m.Header.Get(bus.HeaderEntries), m.Header.Get(bus.HeaderRawAt), m.Header.Get(bus.HeaderRaw),
		m.Header.Get(bus.HeaderEntriesSum), m.Header.Get(bus.HeaderRawSum))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f}, "1", "0", `{"host":"h","file":"1:2","line":1}`, "0", "0")
	f.Fuzz(func(t *testing.T, body []byte, entries, rawAt, raw, entriesSum, rawSum string) {
		h := nats.Header{
			bus.HeaderSchema:     []string{strconv.Itoa(bus.BatchVersion)},
			bus.HeaderEncoding:   []string{"s2"},
			bus.HeaderEntries:    []string{entries},
			bus.HeaderRawAt:      []string{rawAt},
			bus.HeaderRaw:        []string{raw},
			bus.HeaderEntriesSum: []string{entriesSum},
			bus.HeaderRawSum:     []string{rawSum},
		}
		var d bus.BatchDecoder
		var ed bus.EntryDecoder
		var e schema.Entry
		_ = d.Entries(h, body, func(line []byte) error { return ed.Decode(line, &e) })
		_, _, _ = d.Raw(h, body)
	})
}
