package tail

import (
	"io"
	"os"
	"syscall"
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
