package export

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
)

// ErrSegment reports an archive segment that cannot be read.
var ErrSegment = errors.New("export: bad archive segment")

// ReadSegmentIndex returns the chunk index of the segment file at p,
// read from its footer.
func ReadSegmentIndex(p string) ([]Chunk, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := info.Size()
	var foot [footerBytes]byte
	if size < 8+footerBytes {
		return nil, fmt.Errorf("%w: %s: %d bytes", ErrSegment, p, size)
	}
	if _, err := f.ReadAt(foot[:], size-footerBytes); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrSegment, p, err)
	}
	n := int64(binary.LittleEndian.Uint32(foot[:4]))
	if string(foot[4:]) != indexTag || n > size-8-footerBytes {
		return nil, fmt.Errorf("%w: %s: no index footer", ErrSegment, p)
	}
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, size-footerBytes-n); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrSegment, p, err)
	}
	var index []Chunk
	if err := json.Unmarshal(buf, &index); err != nil {
		return nil, fmt.Errorf("%w: %s: index: %v", ErrSegment, p, err)
	}
	return index, nil
}

// RestoreConfig says what [Restore] gives back.
type RestoreConfig struct {
	Archive string    // archive root
	Out     string    // files are written at <Out>/<host>/<original path>
	Host    string    // only this host's files; "" all
	Session string    // only the files holding this session; "" all
	Since   time.Time // only files with chunks dated on or after it (UTC date); zero: all
	Force   bool      // overwrite files that exist under Out
	Logger  *slog.Logger
}

// Restored describes one file [Restore] wrote.
type Restored struct {
	Host  string
	Path  string // original path
	Out   string // where it was written
	Lines int64  // lines written
	Bytes int64
	Holes int64 // lines too long to archive, left out
}

// Restore writes back every archived file the filters select, as it was
// last read by the tailer: the complete lines of the file, byte for byte
// (except the spans a redaction rule replaced, and lines too long to
// archive, which are left out and counted as holes). A file read again
// after it was rewritten is given back as rewritten; one that was renamed,
// at its last path. Each file is written through a temporary name.
func Restore(ctx context.Context, cfg RestoreConfig) ([]Restored, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	segs, err := ReadArchiveManifest(cfg.Archive)
	if err != nil {
		return nil, err
	}
	if len(segs) == 0 {
		if _, err := os.Stat(filepath.Join(cfg.Archive, ManifestName)); err != nil {
			return nil, fmt.Errorf("%s is not an archive (no %s): %w", cfg.Archive, ManifestName, err)
		}
	}
	since := ""
	if !cfg.Since.IsZero() {
		since = cfg.Since.UTC().Format(time.DateOnly)
	}
	type located struct {
		Chunk
		seg string
	}
	var all []located
	for _, s := range segs {
		if cfg.Host != "" && s.Partition.Host != cfg.Host {
			continue
		}
		if since != "" && s.Partition.Date != "" && s.Partition.Date < since {
			continue
		}
		p := filepath.Join(cfg.Archive, filepath.FromSlash(s.Path))
		index, err := ReadSegmentIndex(p)
		if err != nil {
			return nil, err
		}
		for _, c := range index {
			all = append(all, located{c, p})
		}
	}
	slices.SortFunc(all, func(a, b located) int { return compareSeq(a.Seq, b.Seq) })

	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	files := map[string]*os.File{}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	frame := func(c *located) ([]byte, error) {
		f := files[c.seg]
		if f == nil {
			if f, err = os.Open(c.seg); err != nil {
				return nil, err
			}
			files[c.seg] = f
		}
		buf := make([]byte, c.FrameBytes)
		if _, err := f.ReadAt(buf, c.FrameOffset); err != nil {
			return nil, fmt.Errorf("%w: %s at %d: %v", ErrSegment, c.seg, c.FrameOffset, err)
		}
		out, err := dec.DecodeAll(buf, make([]byte, 0, c.Bytes))
		if err != nil {
			return nil, fmt.Errorf("%w: %s at %d: %v", ErrSegment, c.seg, c.FrameOffset, err)
		}
		return out, nil
	}

	// Rebuild each file line by line, in stream order: a chunk replaces
	// the lines from its first one on (a re-send after a restart gives the
	// same lines again; a rewrite read from the start gives new ones).
	type rebuilt struct {
		host, path, file string
		lines            [][]byte // nil: a hole
		sessions         map[string]bool
		dated            bool
	}
	var done []*rebuilt
	current := map[string]*rebuilt{}
	var pending []byte // the parts of a chunk so far
	for i := 0; i < len(all); i++ {
		if err := ctx.Err(); err != nil {
			return nil, context.Cause(ctx)
		}
		c := &all[i]
		data, err := frame(c)
		if err != nil {
			return nil, err
		}
		if c.Parts > 1 {
			if c.Part == 1 {
				pending = pending[:0]
			}
			pending = append(pending, data...)
			if c.Part < c.Parts {
				continue
			}
			data = pending
		}
		key := c.Host + "\x00" + c.File
		r := current[key]
		if r != nil && c.Line == 1 && r.path != c.Path && len(r.lines) > 0 {
			// The file's identity was reused by another file.
			done = append(done, r)
			r = nil
		}
		if r == nil {
			r = &rebuilt{host: c.Host, file: c.File, sessions: map[string]bool{}}
			current[key] = r
		}
		r.path = c.Path
		for _, s := range c.Sessions {
			r.sessions[s] = true
		}
		if since == "" || c.TS.IsZero() || c.TS.UTC().Format(time.DateOnly) >= since {
			r.dated = true
		}
		from := int(c.Line - 1)
		if from < len(r.lines) {
			clear(r.lines[from:])
			r.lines = r.lines[:from]
		}
		for len(r.lines) < from {
			r.lines = append(r.lines, nil) // lines never archived: unknown
		}
		holes := c.Holes
		for n := int64(0); n < c.Lines; n++ {
			if len(holes) > 0 && holes[0].Line == c.Line+n {
				r.lines = append(r.lines, nil)
				holes = holes[1:]
				continue
			}
			nl := bytes.IndexByte(data, '\n')
			if nl < 0 {
				return nil, fmt.Errorf("%w: %s: chunk %d of %s holds fewer lines than it says", ErrSegment, c.seg, c.Seq, c.Path)
			}
			r.lines = append(r.lines, slices.Clone(data[:nl+1]))
			data = data[nl+1:]
		}
	}
	for _, r := range current {
		done = append(done, r)
	}
	slices.SortFunc(done, func(a, b *rebuilt) int {
		return strings.Compare(a.host+"\x00"+a.path, b.host+"\x00"+b.path)
	})

	var out []Restored
	for _, r := range done {
		if cfg.Session != "" && !r.sessions[cfg.Session] || !r.dated {
			continue
		}
		dst, err := restorePath(cfg.Out, r.host, r.path)
		if err != nil {
			return out, err
		}
		var b bytes.Buffer
		res := Restored{Host: r.host, Path: r.path, Out: dst}
		for _, l := range r.lines {
			if l == nil {
				res.Holes++
				continue
			}
			b.Write(l)
			res.Lines++
		}
		res.Bytes = int64(b.Len())
		if err := writeRestored(dst, b.Bytes(), cfg.Force); err != nil {
			return out, err
		}
		if res.Holes > 0 {
			log.Warn("restored with lines missing (too long to archive, or never read)", "file", dst, "missing", res.Holes)
		}
		out = append(out, res)
	}
	return out, nil
}

// restorePath returns where the file at p of host is restored under out:
// out/<host>/<p>, host escaped as a partition value and p cleaned so that
// neither can leave out.
func restorePath(out, host, p string) (string, error) {
	clean := filepath.Clean("/" + filepath.FromSlash(strings.ReplaceAll(p, "\x00", "")))
	if vol := filepath.VolumeName(clean); vol != "" {
		clean = clean[len(vol):]
	}
	rel := strings.TrimLeft(clean, string(filepath.Separator))
	if rel == "" || rel == "." {
		return "", fmt.Errorf("restore: archived file of %s has no usable path %q", host, p)
	}
	return filepath.Join(out, EscapeValue(host), rel), nil
}

// writeRestored writes data at dst through a temporary file.
func writeRestored(dst string, data []byte, force bool) error {
	if !force {
		if _, err := os.Lstat(dst); err == nil {
			return fmt.Errorf("restore: %s exists (use --force to overwrite)", dst)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return writeFileAtomic(filepath.Dir(dst), filepath.Base(dst), data)
}
