package index

import (
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/index/store"
	"github.com/sessionpipe/sessionpipe/schema"
)

// The binary encoding of the stored state. Records start with a version
// byte; integers are varints, strings are length-prefixed. A record that
// does not decode is an error wrapping ErrCorruptState: the state must be
// rebuilt from the stream, never guessed.

// recordVersion is the version byte of every record written. Version 2
// added labels (a call's, after its other fields, and a session's, at
// the end of its record); records of version 1, written before, are read
// as records without labels, which is what they are: a state written
// before labels existed is used as it is, never rebuilt. Version 3 writes
// times as stamps (seconds since year 1, nanoseconds), which name every
// time; versions 1 and 2 wrote Unix nanoseconds, 0 for none, and are read
// as such (a time of theirs outside 1677–2262 was wrapped when written,
// and 1970-01-01T00:00:00Z read as none). Version 4 writes a session's
// host, part of its identity, after its format, where versions 1 to 3 wrote
// the host of its earliest entry as a choice; it also adds where a call's
// price came from (after its labels) and a session's calls and cost by
// price source (at the end of its record); older records have none. (States
// of layout 1 are rebuilt, not read: see StoreLayout.)
const recordVersion = 4

// minRecordVersion is the oldest record version read.
const minRecordVersion = 1

// ErrCorruptState reports a stored record that does not decode. The
// indexer rebuilds its state from the stream when it meets one at start.
// It is the store's [store.ErrCorrupt], which its corrupt files wrap too.
var ErrCorruptState = store.ErrCorrupt

type encoder struct{ b []byte }

func (e *encoder) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) fixed64(v uint64) { e.b = binary.BigEndian.AppendUint64(e.b, v) }
func (e *encoder) string(s string) {
	e.uvarint(uint64(len(s)))
	e.b = append(e.b, s...)
}
func (e *encoder) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}
func (e *encoder) time(t time.Time) { e.stamp(stampOf(t)) }
func (e *encoder) stamp(s stamp) {
	e.varint(s.sec)
	e.uvarint(uint64(s.nsec))
}

type decoder struct {
	b   []byte
	v   byte // the record's version, set by version
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrCorruptState, what)
	}
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad unsigned varint")
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) fixed64() uint64 {
	if len(d.b) < 8 {
		d.fail("short fixed64")
		d.b = nil
		return 0
	}
	v := binary.BigEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *decoder) string() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("string past the record")
		d.b = nil
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *decoder) bool() bool {
	if len(d.b) < 1 {
		d.fail("short bool")
		return false
	}
	v := d.b[0]
	d.b = d.b[1:]
	if v > 1 {
		d.fail("bad bool")
	}
	return v == 1
}

func (d *decoder) time() time.Time { return d.stamp().time() }

func (d *decoder) stamp() stamp {
	if d.v < 3 {
		n := d.varint()
		if n == 0 {
			return stamp{}
		}
		return stampOf(time.Unix(0, n))
	}
	sec, nsec := d.varint(), d.uvarint()
	if nsec >= 1e9 {
		d.fail("bad nanoseconds")
		return stamp{}
	}
	return stamp{sec: sec, nsec: int32(nsec)}
}

// count reads a length and checks it against what is left (each element
// takes at least one byte), so that a corrupt length cannot make a huge
// allocation.
func (d *decoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("count past the record")
		d.b = nil
		return 0
	}
	return int(n)
}

func (d *decoder) version() {
	if len(d.b) == 0 || d.b[0] < minRecordVersion || d.b[0] > recordVersion {
		d.fail("unknown record version")
		d.b = nil
		return
	}
	d.v, d.b = d.b[0], d.b[1:]
}

func (d *decoder) end() error {
	if d.err == nil && len(d.b) != 0 {
		d.fail("trailing bytes")
	}
	return d.err
}

func (e *encoder) origin(o *origin) {
	e.stamp(o.ts)
	e.varint(o.line)
	e.fixed64(o.file)
	e.string(o.agent)
	e.varint(int64(o.object))
	// One byte of flags: records written before background existed hold
	// the sidechain bool, 0 or 1, and read the same.
	var flags byte
	if o.sidechain {
		flags |= originSidechain
	}
	if o.background {
		flags |= originBackground
	}
	e.b = append(e.b, flags)
}

// Flags of an encoded origin.
const (
	originSidechain byte = 1 << iota
	originBackground
)

func (d *decoder) origin() origin {
	o := origin{ts: d.stamp(), line: d.varint(), file: d.fixed64(), agent: d.string(), object: int32(d.varint())}
	if len(d.b) < 1 {
		d.fail("short origin flags")
		return o
	}
	flags := d.b[0]
	d.b = d.b[1:]
	if flags&^(originSidechain|originBackground) != 0 {
		d.fail("bad origin flags")
	}
	o.sidechain, o.background = flags&originSidechain != 0, flags&originBackground != 0
	return o
}

// contribCodec encodes what one kind of fact contributes.
type contribCodec[C any] interface {
	encode(e *encoder, c *C)
	decode(d *decoder) C
}

type entryCodec struct{}

func (entryCodec) encode(e *encoder, c *entryContrib) {
	e.varint(int64(c.toolCalls))
	e.varint(int64(c.toolErrors))
	var flags uint64
	if c.user {
		flags |= 1
	}
	if c.turn {
		flags |= 2
	}
	if c.compaction {
		flags |= 4
	}
	e.uvarint(flags)
	e.string(c.prompt)
}

func (entryCodec) decode(d *decoder) entryContrib {
	c := entryContrib{toolCalls: int32(d.varint()), toolErrors: int32(d.varint())}
	flags := d.uvarint()
	c.user, c.turn, c.compaction = flags&1 != 0, flags&2 != 0, flags&4 != 0
	c.prompt = d.string()
	return c
}

type noCodec struct{}

func (noCodec) encode(*encoder, *struct{}) {}
func (noCodec) decode(*decoder) struct{}   { return struct{}{} }

type usageCodec struct{}

func (usageCodec) encode(e *encoder, c *usageContrib) {
	e.varint(c.input)
	e.varint(c.output)
	e.varint(c.cacheRead)
	e.varint(c.cacheWrite)
	e.varint(c.cost)
	e.string(c.model)
	e.string(c.project)
	e.bool(c.unpriced)
	e.string(string(c.labels))
	e.string(c.source)
}

func (usageCodec) decode(d *decoder) usageContrib {
	c := usageContrib{input: d.varint(), output: d.varint(), cacheRead: d.varint(), cacheWrite: d.varint(),
		cost: d.varint(), model: d.string(), project: d.string(), unpriced: d.bool()}
	if d.v >= 2 {
		c.labels = labelSet(d.string())
	}
	if d.v >= 4 {
		c.source = d.string()
	}
	return c
}

// encodeFact appends the record of f.
func encodeFact[C any](b []byte, f *fact[C], codec contribCodec[C]) []byte {
	e := encoder{b: append(b, recordVersion)}
	e.uvarint(uint64(f.winner))
	e.uvarint(uint64(len(f.cands)))
	for i := range f.cands {
		c := &f.cands[i]
		e.uvarint(c.s.num)
		e.origin(&c.at)
		e.varint(c.total)
		codec.encode(&e, &c.c)
	}
	return e.b
}

// storedCand is a candidate as stored: its session by number.
type storedCand[C any] struct {
	num   uint64
	at    origin
	total int64
	c     C
}

func decodeFact[C any](b []byte, codec contribCodec[C]) (winner int, cands []storedCand[C], err error) {
	d := decoder{b: b}
	d.version()
	winner = int(d.uvarint())
	n := d.count()
	cands = make([]storedCand[C], 0, n)
	for range n {
		c := storedCand[C]{num: d.uvarint(), at: d.origin(), total: d.varint()}
		c.c = codec.decode(&d)
		cands = append(cands, c)
	}
	if err := d.end(); err != nil {
		return 0, nil, err
	}
	if len(cands) == 0 || winner >= len(cands) {
		return 0, nil, fmt.Errorf("%w: fact winner %d of %d occurrences", ErrCorruptState, winner, len(cands))
	}
	return winner, cands, nil
}

func (e *encoder) stringChoice(c *choice[string]) {
	e.bool(c.ok)
	if c.ok {
		e.string(c.v)
		e.varint(int64(c.class))
		e.origin(&c.at)
	}
}

func (d *decoder) stringChoice() choice[string] {
	var c choice[string]
	if c.ok = d.bool(); c.ok {
		c.v, c.class, c.at = d.string(), int8(d.varint()), d.origin()
	}
	return c
}

func (e *encoder) counts(m map[string]int) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the same state, the same bytes
	e.uvarint(uint64(len(keys)))
	for _, k := range keys {
		e.string(k)
		e.varint(int64(m[k]))
	}
}

func (d *decoder) counts() map[string]int {
	n := d.count()
	if n == 0 {
		return nil
	}
	m := make(map[string]int, n)
	for range n {
		k := d.string()
		m[k] = int(d.varint())
	}
	return m
}

// encodeSession appends the record of s.
func encodeSession(b []byte, s *session) []byte {
	e := encoder{b: append(b, recordVersion)}
	e.uvarint(s.num)
	e.string(string(s.format))
	e.string(s.host)
	e.string(s.id)
	e.time(s.headerTS)
	e.time(s.firstTS)
	e.time(s.lastTS)
	for _, c := range []*choice[string]{&s.cwd, &s.parentID, &s.title, &s.slug, &s.firstPrompt} {
		e.stringChoice(c)
	}
	e.bool(s.origin.ok)
	if s.origin.ok {
		o := s.origin.v
		if o == nil {
			o = &schema.Origin{}
		}
		for _, v := range []string{o.Provider, o.Surface, o.ChatType, o.From, o.Label} {
			e.string(v)
		}
		e.varint(int64(s.origin.class))
		e.origin(&s.origin.at)
	}
	e.bool(s.conversation)
	e.bool(s.contested)
	t := &s.sum
	for _, v := range []int64{t.userMessages, t.turns, t.assistantMessages, t.apiCalls, t.toolCalls, t.toolErrors,
		t.compactions, t.unpriced, t.usage.Input, t.usage.Output, t.usage.CacheRead, t.usage.CacheWrite, t.cost} {
		e.varint(v)
	}
	e.counts(s.models)
	agents := make([]string, 0, len(s.agents))
	for k := range s.agents {
		agents = append(agents, k)
	}
	slices.Sort(agents)
	e.uvarint(uint64(len(agents)))
	for _, a := range agents {
		e.string(a)
	}
	e.counts(s.unpr)
	l := &s.labels
	e.stringChoice(&choice[string]{v: string(l.v), at: l.at, class: l.class, ok: l.ok})
	e.counts(s.srcCalls)
	srcs := make([]string, 0, len(s.srcCost))
	for k := range s.srcCost {
		srcs = append(srcs, k)
	}
	slices.Sort(srcs)
	e.uvarint(uint64(len(srcs)))
	for _, k := range srcs {
		e.string(k)
		e.varint(s.srcCost[k])
	}
	return e.b
}

func decodeSession(b []byte) (*session, error) {
	d := decoder{b: b}
	d.version()
	s := &session{num: d.uvarint(), format: schema.Format(d.string())}
	if d.v >= 4 {
		s.host = d.string()
	}
	s.id = d.string()
	s.headerTS, s.firstTS, s.lastTS = d.time(), d.time(), d.time()
	if d.v < 4 {
		s.host = d.stringChoice().v
	}
	for _, c := range []*choice[string]{&s.cwd, &s.parentID, &s.title, &s.slug, &s.firstPrompt} {
		*c = d.stringChoice()
	}
	if s.origin.ok = d.bool(); s.origin.ok {
		s.origin.v = &schema.Origin{Provider: d.string(), Surface: d.string(), ChatType: d.string(), From: d.string(), Label: d.string()}
		s.origin.class, s.origin.at = int8(d.varint()), d.origin()
	}
	s.conversation = d.bool()
	s.contested = d.bool()
	t := &s.sum
	for _, v := range []*int64{&t.userMessages, &t.turns, &t.assistantMessages, &t.apiCalls, &t.toolCalls, &t.toolErrors,
		&t.compactions, &t.unpriced, &t.usage.Input, &t.usage.Output, &t.usage.CacheRead, &t.usage.CacheWrite, &t.cost} {
		*v = d.varint()
	}
	s.models = d.counts()
	if s.models == nil {
		s.models = make(map[string]int)
	}
	if n := d.count(); n > 0 {
		s.agents = make(map[string]struct{}, n)
		for range n {
			s.agents[d.string()] = struct{}{}
		}
	}
	s.unpr = d.counts()
	if d.v >= 2 {
		c := d.stringChoice()
		s.labels = choice[labelSet]{v: labelSet(c.v), at: c.at, class: c.class, ok: c.ok}
	}
	if d.v >= 4 {
		s.srcCalls = d.counts()
		if n := d.count(); n > 0 {
			s.srcCost = make(map[string]int64, n)
			for range n {
				k := d.string()
				s.srcCost[k] = d.varint()
			}
		}
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	s.stored, s.indexedTS, s.indexedSlug = true, s.lastTS, s.slug.v
	return s, nil
}

func encodeFile(b []byte, fs *fileState) []byte {
	e := encoder{b: append(b, recordVersion)}
	e.string(string(fs.lastRole))
	e.fixed64(fs.hash)
	return e.b
}

func decodeFile(b []byte, k fileKey) (*fileState, error) {
	d := decoder{b: b}
	d.version()
	fs := &fileState{key: k, lastRole: schema.Role(d.string()), hash: d.fixed64()}
	if err := d.end(); err != nil {
		return nil, err
	}
	return fs, nil
}
