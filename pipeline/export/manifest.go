package export

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
)

// ManifestName is the manifest's file name in the output root. Its
// leading underscore keeps it out of Hive-style globs such as
// '<out>/**/*.parquet'.
const ManifestName = "_manifest.jsonl"

// File is the manifest record of one committed Parquet file.
type File struct {
	// Path is the file's path relative to the output root, with slashes:
	// format=<f>/date=<d>/host=<h>/part-<first>-<last>.parquet.
	Path      string    `json:"path"`
	Partition Partition `json:"partition"`
	Rows      int64     `json:"rows"`
	Bytes     int64     `json:"bytes"`
	SHA256    string    `json:"sha256"`    // hex of the whole file
	FirstSeq  uint64    `json:"first_seq"` // stream range of its entries
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
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Manifest{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
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
			return nil, fmt.Errorf("%w: %s:%d: %v", ErrManifest, path, n, err)
		}
		m.Files = append(m.Files, f)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrManifest, path, err)
	}
	return m, nil
}

// write stores m in dir atomically: a temporary file, fsync, rename over
// the manifest, fsync of dir. A crash leaves the old or the new manifest,
// never a mix.
func (m *Manifest) write(dir string) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for i := range m.Files {
		if err := enc.Encode(&m.Files[i]); err != nil {
			return fmt.Errorf("encode manifest: %w", err)
		}
	}
	return writeFileAtomic(dir, ManifestName, b.Bytes())
}
