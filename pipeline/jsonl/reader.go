package jsonl

import (
	"bytes"
	"errors"
	"io"
)

// Defaults of [ReaderConfig].
const (
	// DefaultMaxLineBytes is the longest line a [Reader] returns. It is well
	// above the largest line seen in real transcripts (tool results that
	// embed several base64 images of a few MB each).
	DefaultMaxLineBytes = 128 << 20

	// DefaultBufferSize is the initial read buffer size. The buffer grows
	// on demand up to the longest line and shrinks back afterwards.
	DefaultBufferSize = 64 << 10

	// headBytes is how much of an over-long line is kept for the error.
	headBytes = 256
)

// ReaderConfig configures a [Reader]. The zero value uses the defaults.
type ReaderConfig struct {
	// MaxLineBytes is the longest line returned, without its terminator.
	// A longer line is skipped whole and reported as a *LineTooLongError.
	// Zero means DefaultMaxLineBytes.
	MaxLineBytes int

	// BufferSize is the initial buffer size. Zero means DefaultBufferSize.
	BufferSize int

	// KeepBytes, when set, is the size of a buffer made once and kept:
	// reads go in chunks of BufferSize at its front, so it costs memory
	// only as far as the longest line has used it (the kernel gives
	// pages as they are first touched), and a long line needs no growing.
	// Neither [Reader.Reset] nor a run of short lines gives it back; a
	// line longer than it grows the buffer, which then shrinks back to
	// KeepBytes as it would to BufferSize without it. For a reader that goes from file to file, many
	// of them with a long line somewhere (the offline reader). Zero keeps
	// at most 4×BufferSize across Reset and grows the buffer on demand.
	KeepBytes int
}

// Line is one complete line of a stream.
type Line struct {
	// Bytes is the content of the line without its "\n" or "\r\n"
	// terminator and, on the first line, without a UTF-8 byte order mark.
	// It aliases the Reader's buffer and is valid only until the next
	// call to [Reader.Next].
	Bytes []byte

	// Offset is the stream offset of the first byte of the line (of its
	// byte order mark on the first line).
	Offset int64

	// End is the stream offset just past the line's "\n": the position
	// from which reading resumes.
	End int64

	// Number is the 1-based line number, counting blank lines.
	Number int64
}

// Reader splits a byte stream into complete lines. A line is complete when
// its "\n" has been read: a partial last line is held, never returned, and
// completed by later reads, which makes a Reader over an *os.File a
// follower of a growing file: call [Reader.Next] again after io.EOF once
// the file has grown.
//
// Blank lines (empty or only whitespace) are counted but not returned.
// Lines longer than the configured maximum are skipped and reported.
//
// A Reader does not allocate per line: its buffer grows to the longest
// line and is reused. It is not safe for concurrent use.
type Reader struct {
	r    io.Reader
	max  int
	min  int // initial buffer size, to shrink back to
	keep int // ReaderConfig.KeepBytes

	buf        []byte
	start, end int   // unconsumed bytes are buf[start:end]
	scanned    int   // buf[start:scanned] holds no '\n'
	off        int64 // stream offset of buf[start]
	line       int64 // lines consumed
	sinceLong  int   // bytes read since a partial line last outgrew the initial size

	// An over-long line being skipped.
	skipping  bool
	skipStart int64
	skipLine  int64
	skipHead  []byte
}

// NewReader returns a Reader of r starting at stream offset 0, line 1.
func NewReader(r io.Reader, cfg ReaderConfig) *Reader {
	if cfg.MaxLineBytes <= 0 {
		cfg.MaxLineBytes = DefaultMaxLineBytes
	}
	if cfg.BufferSize <= 0 {
		cfg.BufferSize = DefaultBufferSize
	}
	if cfg.BufferSize > cfg.MaxLineBytes+1 {
		cfg.BufferSize = cfg.MaxLineBytes + 1
	}
	return &Reader{r: r, max: cfg.MaxLineBytes, min: cfg.BufferSize, keep: max(cfg.KeepBytes, 0)}
}

// Reset makes rd read from r as if r were positioned at stream offset
// offset after line lines (resuming from a checkpoint). Buffered data is
// discarded; the buffer is kept, unless long lines made it grow: an idle
// reader holds no more than its initial size.
func (rd *Reader) Reset(r io.Reader, offset, lines int64) {
	rd.r = r
	if len(rd.buf) > max(4*rd.min, rd.keep) {
		rd.buf = nil
	}
	rd.sinceLong = 0
	rd.start, rd.end, rd.scanned = 0, 0, 0
	rd.off = offset
	rd.line = lines
	rd.skipping = false
	rd.skipHead = rd.skipHead[:0]
}

// Offset returns the stream offset just past the last consumed line: the
// position to checkpoint. Bytes of a partial line are not included.
// While an over-long line is being skipped it is the offset of that line.
func (rd *Reader) Offset() int64 {
	if rd.skipping {
		return rd.skipStart
	}
	return rd.off
}

// Lines returns the number of lines consumed, blank lines included.
func (rd *Reader) Lines() int64 {
	if rd.skipping {
		return rd.skipLine - 1
	}
	return rd.line
}

// Buffered returns the bytes of the partial line held after io.EOF. The
// slice aliases the buffer and is valid until the next call to Next.
func (rd *Reader) Buffered() []byte {
	if rd.skipping {
		return nil
	}
	return rd.buf[rd.start:rd.end]
}

// Next returns the next complete non-blank line.
//
// At the end of the data it returns io.EOF, keeping any partial last line
// (see [Reader.Buffered]); calling Next again reads on, so that a file
// that has grown since is followed. Any other read error is returned as
// is, with the reader still usable.
//
// A line longer than MaxLineBytes is skipped whole and reported as a
// *LineTooLongError once its end has been read; reading continues with the
// next line.
func (rd *Reader) Next() (Line, error) {
	for {
		if i := bytes.IndexByte(rd.buf[rd.scanned:rd.end], '\n'); i >= 0 {
			nl := rd.scanned + i
			l := Line{
				Bytes:  rd.buf[rd.start:nl],
				Offset: rd.off,
				End:    rd.off + int64(nl+1-rd.start),
			}
			rd.line++
			l.Number = rd.line
			rd.off = l.End
			rd.start = nl + 1
			rd.scanned = rd.start
			if rd.skipping {
				rd.skipping = false
				return Line{}, &LineTooLongError{
					Offset: rd.skipStart,
					Line:   rd.skipLine,
					Length: l.End - 1 - rd.skipStart,
					Head:   append([]byte(nil), rd.skipHead...),
				}
			}
			l.Bytes = trimLine(l.Bytes, l.Offset)
			if len(l.Bytes) > rd.max {
				return Line{}, rd.tooLong(l)
			}
			if isBlank(l.Bytes) {
				continue
			}
			return l, nil
		}
		rd.scanned = rd.end

		// No complete line buffered.
		if rd.skipping {
			rd.off += int64(rd.end - rd.start)
			rd.start, rd.end, rd.scanned = 0, 0, 0
		} else if rd.end-rd.start > rd.max+1 { // +1 for a '\r'
			rd.beginSkip()
		}
		if err := rd.fill(); err != nil {
			return Line{}, err
		}
	}
}

// tooLong reports a complete line over the limit.
func (rd *Reader) tooLong(l Line) error {
	head := l.Bytes[:min(len(l.Bytes), headBytes)]
	return &LineTooLongError{
		Offset: l.Offset,
		Line:   l.Number,
		Length: int64(len(l.Bytes)),
		Head:   append([]byte(nil), head...),
	}
}

// beginSkip starts skipping the over-long line at buf[start:].
func (rd *Reader) beginSkip() {
	head := rd.buf[rd.start:rd.end]
	if len(head) > headBytes {
		head = head[:headBytes]
	}
	rd.skipping = true
	rd.skipStart = rd.off
	rd.skipLine = rd.line + 1
	rd.skipHead = append(rd.skipHead[:0], head...)
	rd.off += int64(rd.end - rd.start)
	rd.start, rd.end, rd.scanned = 0, 0, 0
}

// keepBuffer is the largest buffer kept between long lines: a larger
// one shrinks back as soon as a long line is consumed. One up to this
// size shrinks back after twice its size was read with no long line.
const keepBuffer = 16 << 20

// fill reads more data, making room first. It returns io.EOF when the
// underlying reader has nothing more now.
func (rd *Reader) fill() error {
	if rd.start > 0 {
		// Move the partial line to the front.
		n := copy(rd.buf, rd.buf[rd.start:rd.end])
		rd.scanned -= rd.start
		rd.start, rd.end = 0, n
	}
	pending := rd.end - rd.start
	switch {
	case rd.buf == nil:
		rd.buf = make([]byte, max(rd.min, rd.keep))
	case rd.end == len(rd.buf):
		// Grow, up to what the longest line needs.
		size := 2 * len(rd.buf)
		if size > rd.max+2 {
			size = rd.max + 2
		}
		if size <= len(rd.buf) {
			size = len(rd.buf) + rd.min
		}
		nb := make([]byte, size)
		copy(nb, rd.buf[:rd.end])
		rd.buf = nb
	case len(rd.buf) > max(4*rd.min, rd.keep) && pending < rd.min/2 &&
		(len(rd.buf) > keepBuffer || rd.sinceLong >= 2*len(rd.buf)):
		// Shrink back once long lines seem to be over: a file with a
		// pasted image every few lines would otherwise allocate the
		// large buffer again for each.
		nb := make([]byte, max(rd.min, rd.keep))
		copy(nb, rd.buf[:rd.end])
		rd.buf = nb
	}
	if pending >= rd.min {
		rd.sinceLong = 0
	}
	room := rd.buf[rd.end:]
	if rd.keep > 0 && len(room) > rd.min {
		room = room[:rd.min] // a kept large buffer is read in chunks: it stays in cache
	}
	for range 100 {
		n, err := rd.r.Read(room)
		if n < 0 || n > len(room) {
			return errors.New("jsonl: reader returned an invalid count")
		}
		rd.end += n
		if n > 0 {
			rd.sinceLong += n
			return nil
		}
		if err != nil {
			return err
		}
	}
	return io.ErrNoProgress
}

// trimLine removes a trailing '\r' and, on the first line of the stream,
// a UTF-8 byte order mark.
func trimLine(b []byte, offset int64) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	if offset == 0 && len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
		b = b[3:]
	}
	return b
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}
