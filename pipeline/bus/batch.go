package bus

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/nats-io/nats.go"
	"github.com/zeebo/xxh3"

	"github.com/sessionpipe/sessionpipe/schema"
)

// Versions of the Sessionpipe-Schema header. The entry's JSON form is
// [schema.Version] in both; what differs is how entries travel.
const (
	// SingleVersion is a message holding one entry's JSON (or one dead
	// letter, or one raw chunk): what sessionpipe published before batch
	// messages, and still publishes for a line too large to share a
	// message. Consumers read it.
	SingleVersion = 1

	// BatchVersion is a batch message: the entries of a run of
	// consecutive lines of one file, and their original bytes, in one
	// message ([BatchMsg]).
	BatchVersion = 2
)

// Batch message headers (see [BatchMsg]).
const (
	// HeaderEntries is the number of entries a batch message holds.
	HeaderEntries = "Sessionpipe-Entries"

	// HeaderSpan locates a batch message's lines in their file:
	// "<file> <offset>-<end> <line>+<lines>": the file's identity on its
	// host, the byte range [offset, end) and the first line number and
	// count of lines (blank ones included).
	HeaderSpan = "Sessionpipe-Span"

	// HeaderRaw is the JSON of the [RawChunk] (without its data) whose
	// bytes follow the entries, when the message carries the original
	// lines.
	HeaderRaw = "Sessionpipe-Raw"

	// HeaderEntriesSum is the 64-bit XXH3 of the entries' JSON lines
	// (decompressed), in hex: an S2 block has no checksum of its own.
	HeaderEntriesSum = "Sessionpipe-Entries-Sum"

	// HeaderRawSum is the 64-bit XXH3 of the original lines, in hex.
	HeaderRawSum = "Sessionpipe-Raw-Sum"

	// HeaderRawAt is the byte offset in the body where the original
	// lines' S2 block starts (the entries' block ends there).
	HeaderRawAt = "Sessionpipe-Raw-At"

	// batchEncoding is the Sessionpipe-Encoding of a batch message: its
	// entries, and its original lines, are each one S2 block.
	batchEncoding = "s2"
)

// ErrBatch reports a batch message that does not decode.
var ErrBatch = errors.New("bus: invalid batch message")

// Both parts of a batch message are S2 blocks. Measured on generated
// Claude Code transcripts (benchmarks/RESULTS.md): S2 compresses the
// entries' JSON to 0.155 of their size at about 1 GB/s and the original
// lines to 0.31, where zstd's fastest level gives 0.12 and 0.28 at 250 to
// 385 MB/s: on an agent's host the tailer's cost per byte matters more
// than the last few percent of the stream's size, and the exporter
// compresses the archive with zstd, as it always did.

// BatchSpan locates the lines of a batch message in their file.
type BatchSpan struct {
	Host   string
	Format string
	// File identifies the file on its host across renames ("<dev>:<ino>").
	File        string
	Offset, End int64 // the byte range of the lines
	Line, Lines int64 // first line number (1-based) and count of lines
}

// BatchMsg returns the batch message of the entries jsonl (each
// [schema.Entry.AppendJSON] followed by "\n", count of them) read from
// the lines of span:
//
//   - subject [EntrySubject](prefix, span.Host, span.Format);
//   - body: one S2 block of the entries' JSONL;
//   - headers Sessionpipe-Schema: [BatchVersion], Sessionpipe-Encoding:
//     s2, Sessionpipe-Entries: count, Sessionpipe-Span (see
//     [HeaderSpan]), and Nats-Msg-Id
//     "batch:<host>:<file>:<offset>-<end>:<hash>", the hash (64-bit XXH3,
//     hex) taken over the body: the same lines sent again with the same
//     content have the same id, and the stream's duplicate window drops
//     the copy; a file rewritten with other content never collides with
//     what it held before.
//
// The original bytes of the lines travel as a raw chunk message of their
// own ([RawMsgs]). Batches written before that carried them as a second
// S2 block of the body, at byte Sessionpipe-Raw-At, described by
// Sessionpipe-Raw (and hashed into the id with it): they are still read
// ([DecodeBatchRaw]).
func BatchMsg(prefix string, span BatchSpan, jsonl []byte, count int) (*nats.Msg, error) {
	bound := s2.MaxEncodedLen(len(jsonl))
	if bound < 0 {
		return nil, fmt.Errorf("bus: batch of %d bytes of entries is too large", len(jsonl))
	}
	// The blocks are encoded into a pooled scratch buffer of the worst
	// case's size, then copied into a body of their actual size: the
	// message is held until the server acknowledges it, and compressed
	// transcripts are a fifth of the worst case.
	scratch := getScratch(bound)
	defer batchScratch.Put(scratch)
	body := (*scratch)[:bound]
	body = body[:len(s2.Encode(body, jsonl))]
	h := nats.Header{
		HeaderSchema:     []string{strconv.Itoa(BatchVersion)},
		HeaderEncoding:   []string{batchEncoding},
		HeaderEntries:    []string{strconv.Itoa(count)},
		HeaderEntriesSum: []string{strconv.FormatUint(xxh3.Hash(jsonl), 16)},
		HeaderSpan: []string{span.File + " " + strconv.FormatInt(span.Offset, 10) + "-" + strconv.FormatInt(span.End, 10) +
			" " + strconv.FormatInt(span.Line, 10) + "+" + strconv.FormatInt(span.Lines, 10)},
	}
	body = append(batchBody(len(body)), body...)
	h[HeaderMsgID] = []string{batchID(span, xxh3.Hash(body))}
	return &nats.Msg{Subject: EntrySubject(prefix, span.Host, span.Format), Data: body, Header: h}, nil
}

// batchID is the Nats-Msg-Id of a batch message of span whose content
// hashes to sum (see BatchMsg).
func batchID(span BatchSpan, sum uint64) string {
	return "batch:" + span.Host + ":" + span.File + ":" + strconv.FormatInt(span.Offset, 10) + "-" +
		strconv.FormatInt(span.End, 10) + ":" + hex.EncodeToString(binary.BigEndian.AppendUint64(nil, sum))
}

// The bodies of batch messages come from pools by size class, so that a
// publisher that hands them back ([ReleaseBatchMsg]) once the server has
// stored them does not allocate a body per message: a backfill's bodies
// were the largest allocation site of `sessionpipe run` (400 MB for
// 200 MB of transcripts). The classes are 2^k and 3×2^(k-1) bytes from
// 16 KiB to 16 MiB: a body holds at most a third more than its size.
// Smaller and larger bodies are allocated at their size and never
// pooled. Pools, not free lists that keep what they hold: under the
// processes' soft memory limit every megabyte kept is a megabyte less
// between collections (free lists of 16 MiB raised run's live heap by
// about as much and it collected as often as before, benchmarks/RESULTS.md).
var (
	bodyClasses = func() []int {
		var c []int
		for k := 14; k <= 24; k++ {
			c = append(c, 1<<k)
			if k < 24 {
				c = append(c, 3<<(k-1))
			}
		}
		return c
	}()
	bodyPools = make([]sync.Pool, len(bodyClasses))
)

// batchBody returns an empty slice with room for n bytes, from the pool
// of its size class when it has one.
func batchBody(n int) []byte {
	i, _ := slices.BinarySearch(bodyClasses, n)
	if n <= bodyClasses[0]/2 || i == len(bodyClasses) {
		return make([]byte, 0, n)
	}
	if b, ok := bodyPools[i].Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return make([]byte, 0, bodyClasses[i])
}

// freeBody puts b back in its class's pool when it is of a class's size.
func freeBody(b []byte) {
	if i, found := slices.BinarySearch(bodyClasses, cap(b)); found {
		b = b[:0]
		bodyPools[i].Put(&b)
	}
}

// batchScratch holds the buffers BatchMsg encodes into (the worst case's
// size, about the batch's: a megabyte and a bit by default).
var batchScratch = sync.Pool{New: func() any { return new([]byte) }}

// getScratch returns a buffer of length 0 with room for n bytes.
func getScratch(n int) *[]byte {
	b := batchScratch.Get().(*[]byte)
	if cap(*b) < n {
		// A little more than asked, so that the next batch, a little
		// larger, fits too.
		*b = make([]byte, 0, n+n/8)
	}
	return b
}

// ReleaseBatchMsg hands the body of m, a message [BatchMsg] or [RawMsgs]
// returned, back for reuse by a later one, and sets m.Data to nil. Call
// it only once the server has acknowledged m and nothing reads m.Data any
// more (the message was not kept for a dead letter or a re-send), and
// at most once; a message that is never released is simply collected.
// Other messages are left alone.
func ReleaseBatchMsg(m *nats.Msg) {
	if m == nil || !IsBatch(m.Header) && m.Header.Get(HeaderEncoding) != rawEncoding {
		return
	}
	b := m.Data
	m.Data = nil
	freeBody(b)
}

// IsBatch reports whether a message's headers are those of a batch
// message.
func IsBatch(h nats.Header) bool {
	return h.Get(HeaderSchema) == strconv.Itoa(BatchVersion) && h.Get(HeaderEncoding) == batchEncoding
}

// BatchDecoder decodes batch messages, reusing its buffer from message
// to message. Not safe for concurrent use; the zero value is ready.
type BatchDecoder struct {
	buf []byte
}

// maxBatchEntriesBytes bounds what one part of a batch message may
// decompress to: a message claiming more is refused before anything is
// allocated for it.
const maxBatchEntriesBytes = 1 << 30

// decodedBound is the most an S2 block of n bytes may claim to decompress
// to: 16 MiB, or 1,024 times its size (transcripts compress about 3 to 10
// times; a line of one repeated character far more), and never more than
// maxBatchEntriesBytes. A forged message of a few bytes cannot make a
// consumer allocate gigabytes.
func decodedBound(n int) int {
	return min(max(16<<20, 1024*n), maxBatchEntriesBytes)
}

// Entries decompresses the entries of the batch message (header, data)
// and calls fn with each entry's JSON, in order. The slices passed to fn
// are valid until the next call of a BatchDecoder method. It fails with
// [ErrBatch] (wrapped) when the message is not a well-formed batch, and
// with fn's error.
func (d *BatchDecoder) Entries(h nats.Header, data []byte, fn func(entry []byte) error) error {
	if !IsBatch(h) {
		return fmt.Errorf("%w: headers %s=%q, %s=%q", ErrBatch, HeaderSchema, h.Get(HeaderSchema), HeaderEncoding, h.Get(HeaderEncoding))
	}
	frame := data
	if v := h.Get(HeaderRawAt); v != "" {
		at, err := strconv.Atoi(v)
		if err != nil || at < 0 || at > len(data) {
			return fmt.Errorf("%w: %s=%q outside a body of %d bytes", ErrBatch, HeaderRawAt, v, len(data))
		}
		frame = data[:at]
	}
	size, err := s2.DecodedLen(frame)
	if err != nil || size > decodedBound(len(frame)) {
		return fmt.Errorf("%w: entries: %d bytes, %v", ErrBatch, size, err)
	}
	if cap(d.buf) < size {
		d.buf = make([]byte, size)
	}
	out, err := s2.Decode(d.buf[:size], frame)
	if err != nil {
		return fmt.Errorf("%w: entries: %v", ErrBatch, err)
	}
	if sum := strconv.FormatUint(xxh3.Hash(out), 16); sum != h.Get(HeaderEntriesSum) {
		return fmt.Errorf("%w: entries' checksum %s, header says %q", ErrBatch, sum, h.Get(HeaderEntriesSum))
	}
	want, err := strconv.Atoi(h.Get(HeaderEntries))
	if err != nil || want < 0 {
		return fmt.Errorf("%w: %s=%q", ErrBatch, HeaderEntries, h.Get(HeaderEntries))
	}
	n := 0
	for len(out) > 0 {
		line := out
		if i := bytes.IndexByte(out, '\n'); i >= 0 {
			line, out = out[:i], out[i+1:]
		} else {
			out = nil
		}
		if len(line) == 0 {
			continue
		}
		n++
		if err := fn(line); err != nil {
			return err
		}
	}
	if n != want {
		return fmt.Errorf("%w: %d entries, header says %d", ErrBatch, n, want)
	}
	return nil
}

// Raw returns the raw chunk a batch message carries, its Data the
// original lines decompressed into a new slice (a consumer's batch holds
// the chunks of several messages at once), and false when the message
// carries none.
func (d *BatchDecoder) Raw(h nats.Header, data []byte) (RawChunk, bool, error) {
	return d.rawInto(h, data, func(n int) []byte { return make([]byte, n) })
}

// rawInto is Raw with the original lines decompressed into alloc(n).
func (d *BatchDecoder) rawInto(h nats.Header, data []byte, alloc func(n int) []byte) (RawChunk, bool, error) {
	meta := h.Get(HeaderRaw)
	if meta == "" {
		return RawChunk{}, false, nil
	}
	at, err := strconv.Atoi(h.Get(HeaderRawAt))
	if err != nil || at < 0 || at > len(data) {
		return RawChunk{}, false, fmt.Errorf("%w: %s=%q outside a body of %d bytes", ErrBatch, HeaderRawAt, h.Get(HeaderRawAt), len(data))
	}
	var c RawChunk
	if err := json.Unmarshal([]byte(meta), &c); err != nil {
		return RawChunk{}, false, fmt.Errorf("%w: %s: %v", ErrBatch, HeaderRaw, err)
	}
	if err := c.validate(); err != nil {
		return RawChunk{}, false, err
	}
	block := data[at:]
	n, err := s2.DecodedLen(block)
	if err != nil || n > decodedBound(len(block)) {
		return RawChunk{}, false, fmt.Errorf("%w: original lines: %d bytes, %v", ErrBatch, n, err)
	}
	if c.Data, err = s2.Decode(alloc(n), block); err != nil {
		return RawChunk{}, false, fmt.Errorf("%w: original lines: %v", ErrBatch, err)
	}
	if sum := strconv.FormatUint(xxh3.Hash(c.Data), 16); sum != h.Get(HeaderRawSum) {
		return RawChunk{}, false, fmt.Errorf("%w: original lines' checksum %s, header says %q", ErrBatch, sum, h.Get(HeaderRawSum))
	}
	return c, true, nil
}

// DecodeEntries decodes a message of the entry subjects, a batch message
// or a message of one entry, and calls fn with each entry in order (the
// same *schema.Entry, refilled: copy what you keep). It is the simple way
// to read the stream from a program that takes whole messages; the
// consumers decode with a reused [BatchDecoder] and [EntryDecoder].
func DecodeEntries(h nats.Header, data []byte, fn func(e *schema.Entry) error) error {
	var e schema.Entry
	if !IsBatch(h) {
		if err := DecodeEntry(h, data, &e); err != nil {
			return err
		}
		return fn(&e)
	}
	var bd BatchDecoder
	d := decoders.Get().(*EntryDecoder)
	defer decoders.Put(d)
	return bd.Entries(h, data, func(b []byte) error {
		if err := d.Decode(b, &e); err != nil {
			return err
		}
		return fn(&e)
	})
}

// DecodeBatchRaw returns the raw chunk of a batch message with its
// original bytes in Data (a new slice), and false when the message
// carries none.
func DecodeBatchRaw(h nats.Header, data []byte) (RawChunk, bool, error) {
	var bd BatchDecoder
	return bd.Raw(h, data)
}
