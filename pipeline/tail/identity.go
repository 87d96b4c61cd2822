package tail

import (
	"hash/fnv"
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
	n = int(min(size, fingerprintBytes))
	var buf [fingerprintBytes]byte
	if n > 0 {
		if _, err := f.ReadAt(buf[:n], 0); err != nil && err != io.EOF {
			return 0, 0, err
		}
	}
	h := fnv.New64a()
	h.Write(buf[:n])
	return h.Sum64(), n, nil
}

// prefixMatches reports whether the first n bytes of f still hash to sum.
func prefixMatches(f io.ReaderAt, n int, sum uint64) (bool, error) {
	got, m, err := fingerprint(f, int64(n))
	if err != nil {
		return false, err
	}
	return m == n && got == sum, nil
}
