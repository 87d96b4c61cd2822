package tail

import (
	"hash/crc32"
	"io"
	"os"
	"syscall"

	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

// fingerprintBytes is how much of the start of a file its fingerprint
// covers: enough to tell two transcripts apart (their first line holds a
// session id or a timestamp), small enough to re-check on every read.
const fingerprintBytes = 1024

// fileID is a file's device and inode.
type fileID struct{ dev, ino uint64 }

// idOf returns the identity of a file from its stat result.
func idOf(info os.FileInfo) (fileID, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino}, true
}

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
// that the file still starts with the bytes of its fingerprint. A file
// rewritten in place while it is read would otherwise have its new bytes
// parsed as the continuation of the old content, at the old offsets and
// with the old session: the read that may hold them fails with
// errRewritten instead, before any line of it is handed out.
type checkedReader struct {
	sr    io.SectionReader
	h     io.ReaderAt
	fpLen int
	fpSum uint64
}

func (c *checkedReader) Read(p []byte) (int, error) {
	n, err := c.sr.Read(p)
	if n > 0 && c.fpLen > 0 {
		same, ferr := prefixMatches(c.h, c.fpLen, c.fpSum)
		if ferr != nil {
			return 0, ferr
		}
		if !same {
			return 0, errRewritten
		}
	}
	return n, err
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

// mark is a line end in a file with a checksum of the bytes just before
// it. A checkpoint offset always comes with its mark.
type mark struct {
	at  int64  // offset just past a line's "\n"
	n   int32  // bytes before at that sum covers, at most checkBytes
	sum uint32 // CRC-32C of the file's bytes [at-n, at)
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
}

// reset empties w at offset at.
func (w *window) reset(at int64) { w.n, w.end = 0, at }

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
	if l.Offset == 0 && extra >= 4 {
		w.append(bom)
		extra -= 3
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
	return mark{at: w.end, n: int32(k), sum: crc32.Checksum(w.buf[w.n-k:w.n], castagnoli)}
}
