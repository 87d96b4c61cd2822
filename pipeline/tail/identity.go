package tail

import (
	"bytes"
	"hash/crc32"
	"io"
	"os"

	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

// fingerprintBytes is how much of the start of a file its fingerprint
// covers: enough to tell two transcripts apart (their first line holds a
// session id or a timestamp), small enough to re-check on every read.
const fingerprintBytes = 1024

// fileID is a file's device and inode (formats.FileID, the one helper).
type fileID = formats.FileID

// idOf returns the identity of a file from its stat result.
func idOf(info os.FileInfo) (fileID, bool) { return formats.IDOf(info) }

// fingerprint hashes the first min(size, fingerprintBytes) bytes of f.
func fingerprint(f io.ReaderAt, size int64) (sum uint64, n int, err error) {
	var buf [fingerprintBytes]byte
	n, err = readHead(f, size, buf[:])
	if err != nil {
		return 0, 0, err
	}
	return fnv64a(buf[:n]), n, nil
}

// readHead reads the first min(size, len(buf)) bytes of f into buf and
// returns how many it got: fewer if the file shrank meanwhile.
func readHead(f io.ReaderAt, size int64, buf []byte) (int, error) {
	n := int(min(size, int64(len(buf))))
	if n <= 0 {
		return 0, nil
	}
	m, err := f.ReadAt(buf[:n], 0)
	if err != nil && err != io.EOF {
		return 0, err
	}
	return m, nil
}

// prefixMatches reports whether the first n bytes of f still hash to sum.
func prefixMatches(f io.ReaderAt, n int, sum uint64) (bool, error) {
	var buf [fingerprintBytes]byte
	m, err := readHead(f, int64(n), buf[:])
	if err != nil {
		return false, err
	}
	return m == n && fnv64a(buf[:n]) == sum, nil
}

// fnv64a is the 64-bit FNV-1a hash of b (as hash/fnv's New64a, without
// its allocation).
func fnv64a(b []byte) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	for _, c := range b {
		h ^= uint64(c)
		h *= prime
	}
	return h
}

// checkedReader reads a section of a file and, after every read, checks
// that the file still starts with the bytes of its fingerprint and still
// holds, just before the bytes read, the last bytes of the previous read.
// A file rewritten while it is read (in place, or truncated and written
// again, keeping its first kilobyte or not) would otherwise have its new
// bytes parsed as the continuation of the old content: a line torn
// between the two, and the new lines before the read position never
// read. The read that may hold new bytes fails with errRewritten instead,
// before any line of it is handed out.
type checkedReader struct {
	sr    io.SectionReader
	h     io.ReaderAt
	fpLen int
	fpSum uint64
	pos   int64 // file offset of the next byte read

	prev  [checkBytes]byte // the last bytes read, ending at pos
	prevN int
	buf   [checkBytes]byte
}

// newCheckedReader reads h from off to size. before, if not nil, holds
// the bytes just before off as they were read.
func newCheckedReader(h io.ReaderAt, off, size int64, fpLen int, fpSum uint64, before []byte) checkedReader {
	c := checkedReader{sr: *io.NewSectionReader(h, off, size-off), h: h, fpLen: fpLen, fpSum: fpSum, pos: off}
	c.keep(before)
	return c
}

func (c *checkedReader) Read(p []byte) (int, error) {
	n, err := c.sr.Read(p)
	if n <= 0 {
		return n, err
	}
	if c.fpLen > 0 {
		same, ferr := prefixMatches(c.h, c.fpLen, c.fpSum)
		if ferr != nil {
			return 0, ferr
		}
		if !same {
			return 0, errRewritten
		}
	}
	if c.prevN > 0 {
		got, rerr := c.h.ReadAt(c.buf[:c.prevN], c.pos-int64(c.prevN))
		if rerr != nil && rerr != io.EOF {
			return 0, rerr
		}
		if got < c.prevN || !bytes.Equal(c.buf[:c.prevN], c.prev[:c.prevN]) {
			return 0, errRewritten
		}
	}
	c.keep(p[:n])
	c.pos += int64(n)
	return n, err
}

// keep adds b to the last bytes read.
func (c *checkedReader) keep(b []byte) {
	if len(b) >= checkBytes {
		c.prevN = copy(c.prev[:], b[len(b)-checkBytes:])
		return
	}
	k := min(c.prevN, checkBytes-len(b))
	copy(c.prev[:k], c.prev[c.prevN-k:c.prevN])
	c.prevN = k + copy(c.prev[k:], b)
}

// checkBytes is how much of what precedes a checkpoint offset its check
// covers: a file whose content before the offset changed (rewritten while
// the tailer was stopped, or overwritten in place) is told from the one
// checkpointed by these bytes, and read again from its start.
const checkBytes = 1024

// castagnoli is the CRC-32C table: the checksum of a mark is taken at
// every line end, and CRC-32C has a hardware instruction on amd64 and
// arm64.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// headBytes is how much of the start of a long last line a mark covers
// besides the bytes before its offset: two long lines (a tool output, a
// pasted file) may end alike; their starts (type, id, timestamp) differ.
const headBytes = 256

// mark is a line end in a file with a checksum of the bytes just before
// it and, when the line ending there is longer than those, of its first
// bytes. A checkpoint offset always comes with its mark.
type mark struct {
	at  int64  // offset just past a line's "\n"
	n   int32  // bytes before at that sum covers, at most checkBytes
	sum uint32 // CRC-32C of the file's bytes [at-n, at)

	hAt  int64  // start of the line's bytes (after a byte order mark), when hn > 0
	hn   int32  // bytes from hAt that hsum covers, at most headBytes
	hsum uint32 // CRC-32C of the file's bytes [hAt, hAt+hn)
}

// later returns whichever of a and b lies further in the file.
func later(a, b mark) mark {
	if b.at > a.at {
		return b
	}
	return a
}

// checkMark reports whether the file, of the given size, still holds
// just before m.at the bytes that m was taken of: m.at is within the
// file, follows a "\n", and the checksum matches. It returns those bytes
// (in buf) when it does.
func checkMark(r io.ReaderAt, size int64, m mark, buf *[checkBytes]byte) (bool, []byte, error) {
	switch {
	case m.at == 0:
		return true, nil, nil
	case m.at < 0 || m.at > size || m.n < 0 || m.n > checkBytes || int64(m.n) > m.at:
		return false, nil, nil
	}
	n := max(int(m.n), 1) // at least the "\n" before at
	got, err := r.ReadAt(buf[:n], m.at-int64(n))
	if err != nil && err != io.EOF {
		return false, nil, err
	}
	if got < n || buf[n-1] != '\n' {
		return false, nil, nil
	}
	if m.hn > 0 {
		var head [headBytes]byte
		if m.hn > headBytes || m.hAt < 0 || m.hAt+int64(m.hn) > m.at {
			return false, nil, nil
		}
		got, err := r.ReadAt(head[:m.hn], m.hAt)
		if err != nil && err != io.EOF {
			return false, nil, err
		}
		if got < int(m.hn) || crc32.Checksum(head[:m.hn], castagnoli) != m.hsum {
			return false, nil, nil
		}
	}
	if m.n == 0 {
		return true, nil, nil
	}
	b := buf[:n]
	return crc32.Checksum(b, castagnoli) == m.sum, b, nil
}

// window holds the last checkBytes bytes of the lines a worker read, as
// they are in the file, to mark each line end.
type window struct {
	buf [2 * checkBytes]byte
	n   int
	end int64 // file offset just past buf[:n]

	// The head of the last line, when it is longer than the window.
	hAt  int64
	hn   int32
	hsum uint32
}

// reset empties w at offset at.
func (w *window) reset(at int64) { w.n, w.end, w.hn = 0, at, 0 }

// seed empties w at offset at and fills it with b, the bytes just before
// at.
func (w *window) seed(at int64, b []byte) {
	w.reset(at)
	w.append(b)
}

// add appends the bytes of line, as the file holds them, reconstructed
// from the line without its terminator (and byte order mark). A line
// that does not follow the last one (blank or skipped lines between)
// starts w anew.
func (w *window) add(l jsonl.Line) {
	if l.Offset != w.end {
		w.reset(l.Offset)
	}
	extra := l.End - l.Offset - int64(len(l.Bytes))
	start := l.Offset
	if l.Offset == 0 && extra >= 4 {
		w.append(bom)
		extra -= 3
		start += 3
	}
	w.hn = 0
	if len(l.Bytes) >= checkBytes {
		h := l.Bytes[:headBytes]
		w.hAt, w.hn, w.hsum = start, headBytes, crc32.Checksum(h, castagnoli)
	}
	body := l.Bytes[max(0, len(l.Bytes)-checkBytes):]
	switch extra {
	case 1:
		w.append(body)
		w.append(lf)
	case 2:
		w.append(body)
		w.append(crlf)
	default: // not a line as jsonl returns them: no check
		w.reset(l.End)
		return
	}
	w.end = l.End
}

var (
	bom  = []byte{0xEF, 0xBB, 0xBF}
	lf   = []byte{'\n'}
	crlf = []byte{'\r', '\n'}
)

// append adds b at the end of w, keeping the last checkBytes bytes.
func (w *window) append(b []byte) {
	if len(b) >= checkBytes {
		w.n = copy(w.buf[:], b[len(b)-checkBytes:])
		return
	}
	if w.n+len(b) > len(w.buf) {
		keep := min(w.n, checkBytes)
		copy(w.buf[:], w.buf[w.n-keep:w.n])
		w.n = keep
	}
	w.n += copy(w.buf[w.n:], b)
}

// mark returns the mark of w's end.
func (w *window) mark() mark {
	k := min(w.n, checkBytes)
	m := mark{at: w.end, n: int32(k), sum: crc32.Checksum(w.buf[w.n-k:w.n], castagnoli)}
	if w.hn > 0 {
		m.hAt, m.hn, m.hsum = w.hAt, w.hn, w.hsum
	}
	return m
}
