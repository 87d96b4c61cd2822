package parquet

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/export/internal/commit"
)

// ManifestName is the manifest's file name in the output root. Its
// leading underscore keeps it out of Hive-style globs such as
// '<out>/**/*.parquet'.
const ManifestName = commit.ManifestName

// File is the manifest record of one committed Parquet file.
type File struct {
	// Path is the file's path relative to the output root, with slashes:
	// format=<f>/date=<d>/host=<h>/part-<first>-<last>.parquet, or
	// part-<first>-<last>-c<generation>.parquet for a file [Compact] merged.
	Path      string    `json:"path"`
	Partition Partition `json:"partition"`
	Rows      int64     `json:"rows"`
	Bytes     int64     `json:"bytes"`
	SHA256    string    `json:"sha256"`    // hex of the whole file
	FirstSeq  uint64    `json:"first_seq"` // stream range of its entries; a merged file's is the union of its inputs'
	LastSeq   uint64    `json:"last_seq"`
	MinTS     time.Time `json:"min_ts,omitzero"` // span of its entries' ts, zero when none had one
	MaxTS     time.Time `json:"max_ts,omitzero"`
	Committed time.Time `json:"committed"` // when the file was recorded
}

// Manifest lists the committed files of an output directory, in commit
// order. It is stored as JSON lines (one [File] per line) in
// <out>/_manifest.jsonl, which DuckDB reads with read_json. A file is
// committed when, and only when, the manifest lists it.
type Manifest struct {
	Files []File
}

// ReadManifest reads the manifest of the output root dir. A directory
// without one has an empty manifest. A manifest that does not decode is
// an error wrapping [ErrManifest] that names the line.
//
// ReadManifest takes no lock: the manifest is replaced by a rename, so it
// reads a whole version, but a process that changes the manifest reads it
// under the manifest lock (see the package documentation, "Commit
// protocol").
func ReadManifest(dir string) (*Manifest, error) {
	m, _, err := readManifest(dir)
	return m, err
}

// readManifest is [ReadManifest], also reporting whether the manifest
// file exists.
func readManifest(dir string) (*Manifest, bool, error) {
	path := filepath.Join(dir, ManifestName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Manifest{}, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read manifest: %w", err)
	}
	m := &Manifest{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var f File
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			return nil, true, fmt.Errorf("%w: %s:%d: %v", ErrManifest, path, n, err)
		}
		m.Files = append(m.Files, f)
	}
	if err := sc.Err(); err != nil {
		return nil, true, fmt.Errorf("%w: %s: %v", ErrManifest, path, err)
	}
	return m, true, nil
}

// rereadManifest reads the manifest of dir again, under the manifest lock, before
// a change. The manifest must exist (a Writer creates it at start): had it
// disappeared, writing the change to an empty list would unlist every
// committed file, and the next clean-up would remove them.
func rereadManifest(dir string) (*Manifest, error) {
	m, ok, err := readManifest(dir)
	if err == nil && !ok {
		err = fmt.Errorf("%w: %s disappeared", ErrManifest, filepath.Join(dir, ManifestName))
	}
	return m, err
}

// highest returns the last committed sequence of each partition: the
// highest LastSeq of its files. A merged file keeps the union of its
// inputs' ranges, so a compaction never lowers it.
func (m *Manifest) highest() map[Partition]uint64 {
	high := make(map[Partition]uint64)
	for _, f := range m.Files {
		high[f.Partition] = max(high[f.Partition], f.LastSeq)
	}
	return high
}

// write stores m in dir atomically: a temporary file, fsync, rename over
// the manifest, fsync of dir. A crash leaves the old or the new manifest,
// never a mix.
func (m *Manifest) write(dir string) error {
	data, err := commit.AppendLines(nil, m.Files)
	if err != nil {
		return err
	}
	return commit.WriteFileAtomic(dir, ManifestName, data)
}

// manifestCopy is a process's copy of the manifest as it last wrote it:
// the files, their encoding, and the written file's identity. Every
// change of the manifest replaces the file by a rename, so a manifest
// that is still the same file (device and inode), with the same size and
// modification time, is the version written: a writer committing again
// need not read and decode the whole manifest, which grows with every
// file committed, to see whether a compaction changed it.
type manifestCopy struct {
	m    *Manifest
	data []byte
	fi   fs.FileInfo
}

// current returns the manifest of dir, from c when the file on disk is
// still the one c describes, else read again; the manifest lock held.
func (c *manifestCopy) current(dir string) (m *Manifest, data []byte, reread bool, err error) {
	if c.fi != nil && c.unchanged(dir) {
		return c.m, c.data, false, nil
	}
	if m, err = rereadManifest(dir); err != nil {
		return nil, nil, false, err
	}
	data, err = commit.AppendLines(nil, m.Files)
	return m, data, true, err
}

// add writes the manifest data followed by files to dir, atomically, and
// keeps the new version as c.
func (c *manifestCopy) add(dir string, m *Manifest, data []byte, files []File) error {
	data, err := commit.AppendLines(data, files) // in place: c's own, and its length is kept on failure
	if err != nil {
		return err
	}
	if err := commit.WriteFileAtomic(dir, ManifestName, data); err != nil {
		return err
	}
	next := &Manifest{Files: append(m.Files, files...)} // as for data
	fi, err := os.Stat(filepath.Join(dir, ManifestName))
	if err != nil {
		fi = nil // read it again next time
	}
	*c = manifestCopy{m: next, data: data, fi: fi}
	return nil
}

// unchanged reports whether the manifest in dir is still the version c
// wrote: the same file (opened, so that a network file system revalidates
// its attributes), size and modification time, and the same last line
// (a compaction always writes its merged file last). Any doubt reads it
// again.
func (c *manifestCopy) unchanged(dir string) bool {
	f, err := os.Open(filepath.Join(dir, ManifestName))
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !sameVersion(c.fi, fi) || fi.Size() != int64(len(c.data)) {
		return false
	}
	last := c.data[bytes.LastIndexByte(bytes.TrimSuffix(c.data, []byte("\n")), '\n')+1:]
	buf := make([]byte, len(last))
	if _, err := f.ReadAt(buf, fi.Size()-int64(len(last))); err != nil && len(buf) > 0 {
		return false
	}
	return bytes.Equal(buf, last)
}

// sameVersion reports whether a and b describe the same version of a file
// replaced only by renames.
func sameVersion(a, b fs.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}
