package bus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/nats-io/nats.go"
	"github.com/zeebo/xxh3"
)

// HeaderEncoding names the encoding of a raw chunk's bytes on the wire.
const HeaderEncoding = "Sessionpipe-Encoding"

// rawEncoding is the only encoding of raw chunk bytes: one S2 block.
const rawEncoding = "s2"

// RawSubject returns the subject of the original lines read on host:
// <prefix>.raw.<host>, with host made safe by [Token].
func RawSubject(prefix, host string) string {
	return prefix + ".raw." + Token(host)
}

// RawFilter returns the subject filter matching every raw subject:
// <prefix>.raw.>.
func RawFilter(prefix string) string { return prefix + ".raw.>" }

// RawChunk carries the original bytes of a run of complete lines of one
// transcript file, so that the exporter can archive the file byte for
// byte (see pipeline/export, "Archive"). A chunk travels in the batch
// message of the same lines' entries ([BatchMsg]), or, for a line too
// large for a batch, as messages of its own on [RawSubject] before the
// line's entries ([RawMsgs]): either way a line is acknowledged in its
// checkpoint only once its bytes are stored too.
//
// Offset, End, Line and Lines locate the chunk in the file as the tailer
// read it. Data holds the bytes of [Offset, End) with every line's
// terminator, blank lines and a byte order mark included, except that a
// redacted secret is replaced by its marker (Redacted counts them, and
// Data is then not End-Offset bytes long) and that a line too long to
// keep is left out (listed in Holes). The lines of Data are the lines
// Line to Line+Lines-1 of the file, holes included.
//
// A chunk too large for one message is sent in Parts messages, each
// with a slice of Data (Part counts from 1); they share every other field.
type RawChunk struct {
	Host   string `json:"host"`
	Path   string `json:"path"`             // the file's path when read
	Format string `json:"format,omitempty"` // detected format
	// File identifies the file on its host across renames: the tailer's
	// device and inode, "<dev>:<ino>".
	File     string    `json:"file"`
	Offset   int64     `json:"offset"`
	End      int64     `json:"end"`
	Line     int64     `json:"line"`  // 1-based number of the first line
	Lines    int64     `json:"lines"` // lines in [Offset, End), blank ones and holes included
	Holes    []Hole    `json:"holes,omitempty"`
	Sessions []string  `json:"sessions,omitempty"` // sessions of the entries of these lines
	TS       time.Time `json:"ts,omitzero"`        // earliest entry ts of these lines, or when read
	Redacted int64     `json:"redacted,omitempty"` // secrets replaced in Data
	Part     int       `json:"part,omitempty"`     // 1-based, when Parts > 1
	Parts    int       `json:"parts,omitempty"`

	Data []byte `json:"-"`
}

// Hole is a line whose bytes a [RawChunk] leaves out: longer than the
// tailer keeps a line.
type Hole struct {
	Line   int64 `json:"line"`
	Offset int64 `json:"offset"`
	End    int64 `json:"end"`
}

// ID returns the deduplication id of c,
// "raw:<host>:<file>:<offset>-<end>:<hash>[/<part>]", the hash the XXH3-64
// of Data in hex: the same span of the same file with the same bytes has
// the same id whenever it is sent, and a file rewritten with other bytes
// at the same offsets never collides with what it held before.
func (c *RawChunk) ID() string { return c.id(strconv.FormatUint(xxh3.Hash(c.Data), 16)) }

// id is ID with the hash of Data given, in hex.
func (c *RawChunk) id(sum string) string {
	id := "raw:" + c.Host + ":" + c.File + ":" + strconv.FormatInt(c.Offset, 10) + "-" + strconv.FormatInt(c.End, 10) + ":" + sum
	if c.Parts > 1 {
		id += "/" + strconv.Itoa(c.Part)
	}
	return id
}

// rawHeadRoom is what a raw message needs beside its data: the JSON
// header (sessions, holes, path) and the NATS headers.
const rawHeadRoom = 8 << 10

// RawMsgs returns the messages that publish c on [RawSubject]: one, or
// several parts when c's compressed data would not fit limit bytes. The
// body is the chunk's fields as one JSON line, "\n", then an S2 block of
// (the part's slice of) Data; the header Sessionpipe-Raw-Sum is the
// XXH3-64 of that data in hex (an S2 block has no checksum). limit is the
// largest message body the server takes; zero means no limit.
func RawMsgs(prefix string, c *RawChunk, limit int) ([]*nats.Msg, error) {
	parts := 1
	if limit > 0 {
		room := limit - rawHeadRoom - len(c.Path) - 64*len(c.Sessions) - 64*len(c.Holes)
		if room < 4<<10 {
			return nil, fmt.Errorf("bus: raw chunk of %s: message limit %d leaves no room for data", c.Path, limit)
		}
		// S2 never grows data by more than a few bytes per 64 KiB.
		per := room - room/64
		parts = max(1, (len(c.Data)+per-1)/per)
	}
	msgs := make([]*nats.Msg, 0, parts)
	per := (len(c.Data) + parts - 1) / max(parts, 1)
	for i := range parts {
		p := *c
		if parts > 1 {
			p.Part, p.Parts = i+1, parts
			p.Data = c.Data[i*per : min(len(c.Data), (i+1)*per)]
		}
		head, err := json.Marshal(&p)
		if err != nil {
			return nil, fmt.Errorf("bus: encode raw chunk: %w", err)
		}
		// As BatchMsg: encoded into a scratch buffer of the worst case's
		// size, then copied into a pooled body of its actual size.
		scratch := getScratch(len(head) + 1 + s2.MaxEncodedLen(len(p.Data)))
		enc := append((*scratch)[:0], head...)
		enc = append(enc, '\n')
		enc = enc[:len(enc)+len(s2.Encode(enc[len(enc):cap(enc)], p.Data))]
		body := append(batchBody(len(enc)), enc...)
		batchScratch.Put(scratch)
		sum := strconv.FormatUint(xxh3.Hash(p.Data), 16)
		msgs = append(msgs, &nats.Msg{
			Subject: RawSubject(prefix, c.Host),
			Data:    body,
			Header: nats.Header{
				HeaderMsgID:    []string{p.id(sum)},
				HeaderSchema:   []string{strconv.Itoa(SingleVersion)},
				HeaderEncoding: []string{rawEncoding},
				HeaderRawSum:   []string{sum},
			},
		})
	}
	return msgs, nil
}

// ErrRawChunk reports a raw chunk message that does not decode.
var ErrRawChunk = errors.New("bus: invalid raw chunk")

// DecodeRaw decodes a raw chunk message. Data is appended to buf[:0]
// (nil: a new slice). A message with the header Sessionpipe-Raw-Sum
// (every one since sessionpipe sent the original lines of batches as raw
// chunk messages) must match it.
func DecodeRaw(header nats.Header, data, buf []byte) (RawChunk, error) {
	return decodeRaw(header, data, func(n int) []byte {
		if cap(buf) < n {
			return make([]byte, n)
		}
		return buf[:n]
	})
}

// decodeRaw is DecodeRaw with the original lines decompressed into
// alloc(n).
func decodeRaw(header nats.Header, data []byte, alloc func(n int) []byte) (RawChunk, error) {
	if err := checkSchema(header); err != nil {
		return RawChunk{}, err
	}
	if enc := header.Get(HeaderEncoding); enc != rawEncoding {
		return RawChunk{}, fmt.Errorf("%w: encoding %q", ErrRawChunk, enc)
	}
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return RawChunk{}, fmt.Errorf("%w: no header line", ErrRawChunk)
	}
	var c RawChunk
	if err := json.Unmarshal(data[:nl], &c); err != nil {
		return RawChunk{}, fmt.Errorf("%w: %w", ErrRawChunk, err)
	}
	n, err := s2.DecodedLen(data[nl+1:])
	if err != nil {
		return RawChunk{}, fmt.Errorf("%w: %w", ErrRawChunk, err)
	}
	if n > decodedBound(len(data)-nl-1) {
		return RawChunk{}, fmt.Errorf("%w: %d bytes from a block of %d", ErrRawChunk, n, len(data)-nl-1)
	}
	if c.Data, err = s2.Decode(alloc(n), data[nl+1:]); err != nil {
		return RawChunk{}, fmt.Errorf("%w: %w", ErrRawChunk, err)
	}
	if want := header.Get(HeaderRawSum); want != "" {
		if sum := strconv.FormatUint(xxh3.Hash(c.Data), 16); sum != want {
			return RawChunk{}, fmt.Errorf("%w: checksum %s, header says %q", ErrRawChunk, sum, want)
		}
	}
	if err := c.validate(); err != nil {
		return RawChunk{}, err
	}
	return c, nil
}

// validate checks what a chunk claims about itself.
func (c *RawChunk) validate() error {
	switch {
	case c.End < c.Offset || c.Offset < 0 || c.Line < 1 || c.Lines < 0:
		return fmt.Errorf("%w: span %d-%d, lines %d+%d", ErrRawChunk, c.Offset, c.End, c.Line, c.Lines)
	case c.Parts > 1 && (c.Part < 1 || c.Part > c.Parts):
		return fmt.Errorf("%w: part %d of %d", ErrRawChunk, c.Part, c.Parts)
	case c.Host == "" || c.File == "":
		return fmt.Errorf("%w: no host or file", ErrRawChunk)
	}
	return nil
}
