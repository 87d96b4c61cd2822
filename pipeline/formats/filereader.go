package formats

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/goose"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/hermes"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/kilo"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/opencode"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// BatchSize is about how many entries a [FileReader] hands over at once:
// enough that handing over costs nothing, few enough that the batches
// in flight (an entry is about 650 bytes) stay small and warm in cache.
const BatchSize = 256

// readBuffer is each worker's read size: large reads, few system calls.
// keepBuffer is the line buffer each worker makes once and keeps (see
// jsonl.ReaderConfig.KeepBytes: it costs memory only as far as the
// longest line uses it): a long line (a pasted image) in most files
// would otherwise grow a new buffer in each, fresh memory the kernel
// faults in page by page, and copy the line at each doubling.
const (
	readBuffer = 1 << 20
	keepBuffer = 16 << 20
)

// FileReaderConfig configures a [FileReader].
type FileReaderConfig struct {
	// Host, Text, Raw and Logger are given to every file's parser; Path
	// is each file's own.
	parse.Config

	// Workers is how many files are read at once; zero means GOMAXPROCS.
	// With one, batches come in the order of the files.
	Workers int

	// MaxLineBytes is the longest line read; a longer one is skipped and
	// reported. Zero means jsonl.DefaultMaxLineBytes.
	MaxLineBytes int

	// OnLineError receives each bad line, located (a *schema.DecodeError).
	// OnFileError receives each file left out or read in part: one that
	// cannot be read or is not a regular file inside a directory given,
	// a broken session store, a sidecar that cannot be read. Both are
	// called from the reading goroutines, one call at a time; nil drops
	// the errors (they are counted all the same).
	OnLineError func(error)
	OnFileError func(error)
}

// Validate reports a configuration a FileReader cannot use.
func (c FileReaderConfig) Validate() error {
	switch {
	case c.Workers < 0:
		return &ConfigError{Field: "workers", Value: c.Workers, Err: ErrInvalidConfig}
	case c.MaxLineBytes < 0:
		return &ConfigError{Field: "max_line_bytes", Value: c.MaxLineBytes, Err: ErrInvalidConfig}
	}
	return nil
}

// ReadStats counts what a [FileReader] found and read so far.
type ReadStats struct {
	FilesFound, BytesFound int64 // files found by the walk, and their size

	Files   int64 // transcripts read
	Stores  int64 // session stores read
	Skipped int64 // files that are not transcripts (by their content)
	// SkippedNames counts the files under the directories given that were
	// not read because of their names (not transcript candidates nor
	// session stores, see [WalkAll]).
	SkippedNames int64
	NotRegular   int64 // FIFOs, devices, sockets left out inside directories
	Failed       int64 // files that could not be read, or only in part

	Bytes    int64 // bytes of the complete lines of the transcripts read
	Lines    int64 // their lines
	Entries  int64
	BadLines int64
	Pending  int64 // incomplete last lines, not read
}

// FileReader reads transcript files in parallel, every file through its
// own [Decoder] as a final file, and hands their entries to one consumer
// in batches, in file order within each file. It serves the offline
// commands and exports, where the files are read as they are now.
type FileReader struct {
	cfg FileReaderConfig

	mu                                         sync.Mutex // serialises the error callbacks
	batches                                    sync.Pool  // of []schema.Entry with room for a batch
	found                                      atomic.Pointer[[2]int64]
	files, stores, skipped, notRegular, failed atomic.Int64
	skippedNames                               atomic.Int64
	bytes, lines, entries, bad, pending        atomic.Int64
}

// NewFileReader returns a reader; it fails only for an invalid
// configuration.
func NewFileReader(cfg FileReaderConfig) (*FileReader, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Workers == 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	return &FileReader{cfg: cfg}, nil
}

// Stats returns the counts so far, summed over the calls of
// [FileReader.Read]; it may be called while Read runs (a progress line).
func (r *FileReader) Stats() ReadStats {
	st := ReadStats{
		Files: r.files.Load(), Stores: r.stores.Load(), Skipped: r.skipped.Load(),
		SkippedNames: r.skippedNames.Load(),
		NotRegular:   r.notRegular.Load(), Failed: r.failed.Load(),
		Bytes: r.bytes.Load(), Lines: r.lines.Load(), Entries: r.entries.Load(),
		BadLines: r.bad.Load(), Pending: r.pending.Load(),
	}
	if f := r.found.Load(); f != nil {
		st.FilesFound, st.BytesFound = f[0], f[1]
	}
	return st
}

// Read finds the files that paths name (see [Walk]: files, directories,
// globs) and reads them, calling fn from the calling goroutine with each
// batch of entries. A batch holds entries of one file, in file order, and
// the batches of a file come in order; those of different files
// interleave. A batch is valid only during fn.
//
// Read returns the error of a path given that cannot be read (before
// reading anything), and the context's cause once ctx ends: reading
// stops promptly, even in the middle of a long line. Bad lines and files
// left out are counted and reported to the callbacks, not returned.
func (r *FileReader) Read(ctx context.Context, paths []string, fn func(entries []schema.Entry)) error {
	found, err := WalkAll(paths, r.skip, func(string) { r.skippedNames.Add(1) })
	if err != nil {
		return err
	}
	var total int64
	for _, f := range found {
		total += f.Size
	}
	r.found.Store(&[2]int64{int64(len(found)), total})

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan Found)
	out := make(chan []schema.Entry, 4*r.cfg.Workers)
	var wg sync.WaitGroup
	for range r.cfg.Workers {
		wg.Go(func() {
			rd := jsonl.NewReader(nil, jsonl.ReaderConfig{MaxLineBytes: r.cfg.MaxLineBytes, BufferSize: readBuffer, KeepBytes: keepBuffer})
			for f := range jobs {
				r.readOne(ctx, f, rd, out)
			}
		})
	}
	wg.Go(func() {
		defer close(jobs)
		for _, f := range found {
			select {
			case jobs <- f:
			case <-ctx.Done():
				return
			}
		}
	})
	go func() {
		wg.Wait()
		close(out)
	}()
	for b := range out {
		if ctx.Err() == nil {
			fn(b)
		}
		clear(b) // drop references before the batch is reused
		if cap(b) >= BatchSize {
			r.batches.Put(b[:0])
		}
	}
	return context.Cause(ctx)
}

// batch returns an empty batch, reusing one the consumer is done with.
func (r *FileReader) batch() []schema.Entry {
	if b, ok := r.batches.Get().([]schema.Entry); ok {
		return b
	}
	return make([]schema.Entry, 0, BatchSize+64)
}

// readOne reads one file and sends its batches to out.
func (r *FileReader) readOne(ctx context.Context, f Found, rd *jsonl.Reader, out chan<- []schema.Entry) {
	cfg := r.cfg.Config
	cfg.Path = f.Path
	send := func(b []schema.Entry) {
		select {
		case out <- b:
		case <-ctx.Done():
		}
	}
	if f.Meta {
		r.readStore(f, cfg, send)
		return
	}
	if f.Database {
		r.readDatabase(ctx, f, cfg, send)
		return
	}
	if f.OpenCodeMessage {
		r.readOpenCodeMessage(f, cfg, send)
		return
	}
	if f.Doc {
		r.readDocument(f, cfg, send)
		return
	}
	h, err := OpenRegular(f.Path)
	if err != nil {
		r.skip(err)
		return
	}
	defer h.Close()
	dec, err := NewDecoder(DecoderConfig{Config: cfg, MaxLineBytes: r.cfg.MaxLineBytes, OnFileError: r.fileError})
	if err != nil {
		r.fileError(err)
		return
	}
	var st FileStats
	var b []schema.Entry
	err = decodeAll(ctx, h, rd, dec, &st, func(res *Result) error {
		if len(res.Entries) > 0 {
			if b == nil {
				b = r.batch()
			}
			b = append(b, res.Entries...)
			if len(b) >= BatchSize {
				send(b)
				b = nil
			}
		}
		if res.Err != nil {
			r.lineError(res.Err)
		}
		return nil
	})
	if len(b) > 0 {
		send(b)
	}
	r.entries.Add(st.Entries)
	switch {
	case errors.Is(err, ErrUnknownFormat):
		r.skipped.Add(1)
		return // its lines and bytes are not a transcript's
	case err != nil && ctx.Err() == nil:
		r.fileError(err)
	case err == nil:
		r.files.Add(1)
	}
	r.bytes.Add(st.Bytes)
	r.lines.Add(st.Lines)
	if st.Pending > 0 {
		r.pending.Add(1)
	}
}

// readStore reads an OpenClaw session store.
func (r *FileReader) readStore(f Found, cfg parse.Config, send func([]schema.Entry)) {
	h, err := OpenRegular(f.Path)
	if err != nil {
		r.skip(err)
		return
	}
	defer h.Close()
	entries, err := ReadSessionStore(h, cfg)
	if err != nil {
		r.fileError(err)
		if len(entries) == 0 {
			return
		}
	}
	r.stores.Add(1)
	r.entries.Add(int64(len(entries)))
	if len(entries) > 0 {
		send(entries)
	}
}

// readDocument reads a whole-file document: its entries in one batch
// (or several), its bad parts as line errors. A file that is not a
// known document is skipped as not a transcript; one that is not valid
// JSON (cut short, being rewritten) is a file error.
func (r *FileReader) readDocument(f Found, cfg parse.Config, send func([]schema.Entry)) {
	d, data, err := ReadDocument(f.Path, cfg, 0)
	switch {
	case errors.Is(err, ErrUnknownFormat):
		r.skipped.Add(1)
		return
	case err != nil:
		r.skip(err)
		return
	}
	r.files.Add(1)
	r.bytes.Add(int64(len(data)))
	r.lines.Add(int64(bytes.Count(data, []byte{'\n'})))
	r.entries.Add(int64(len(d.Entries)))
	for _, e := range d.Errors {
		r.lineError(e)
	}
	for len(d.Entries) > 0 {
		n := min(len(d.Entries), BatchSize)
		send(d.Entries[:n:n])
		d.Entries = d.Entries[n:]
	}
}

// readDatabase reads an agent's SQLite database (OpenCode's and Kilo's,
// told apart by the name kilo.db: every message row once as it is now;
// Goose's and Hermes's: every session row), as it is
// now; a file that is none is counted as skipped, as a file whose
// lines are no transcript's.
func (r *FileReader) readDatabase(ctx context.Context, f Found, cfg parse.Config, send func([]schema.Entry)) {
	var b []schema.Entry
	emit := func(e *schema.Entry) {
		if b == nil {
			b = r.batch()
		}
		b = append(b, *e)
		if len(b) >= BatchSize {
			r.entries.Add(int64(len(b)))
			send(b)
			b = nil
		}
	}
	var err error
	if kilo.IsDatabaseName(filepath.Base(f.Path)) {
		// Kilo keeps OpenCode's tables: told apart by the file's name.
		if _, err = kilo.ReadDB(ctx, f.Path, cfg, emit, r.lineError); errors.Is(err, kilo.ErrNotDatabase) {
			err = opencode.ErrNotDatabase
		}
	} else {
		_, err = opencode.ReadDB(ctx, f.Path, cfg, emit, r.lineError)
	}
	if errors.Is(err, opencode.ErrNotDatabase) {
		_, err = goose.ReadDB(ctx, f.Path, cfg, emit, r.lineError)
		if errors.Is(err, goose.ErrNotDatabase) {
			err = opencode.ErrNotDatabase
		}
	}
	if errors.Is(err, opencode.ErrNotDatabase) {
		// Hermes's state.db: a generic name, told by its sessions columns.
		_, err = hermes.ReadDB(ctx, f.Path, cfg, emit, r.lineError)
		if errors.Is(err, hermes.ErrNotDatabase) {
			err = opencode.ErrNotDatabase
		}
	}
	if len(b) > 0 {
		r.entries.Add(int64(len(b)))
		send(b)
	}
	switch {
	case errors.Is(err, opencode.ErrNotDatabase):
		r.skipped.Add(1)
	case err != nil && ctx.Err() == nil:
		r.fileError(err)
	case err == nil:
		r.files.Add(1)
	}
}

// readOpenCodeMessage reads a message document of OpenCode before 1.2:
// one message, its session the document's or its directory's name. A
// document that is not a message is counted as skipped.
func (r *FileReader) readOpenCodeMessage(f Found, cfg parse.Config, send func([]schema.Entry)) {
	h, err := OpenRegular(f.Path)
	if err != nil {
		r.skip(err)
		return
	}
	data, err := io.ReadAll(io.LimitReader(h, opencode.MaxDocumentBytes+1))
	h.Close()
	if err != nil {
		r.fileError(err)
		return
	}
	cfg.Path = f.Path
	e, err := opencode.New(cfg).Document(data, filepath.Base(filepath.Dir(f.Path)))
	if e.Format == "" || len(data) > opencode.MaxDocumentBytes {
		r.skipped.Add(1)
		return
	}
	if err != nil {
		r.lineError(err)
	}
	r.files.Add(1)
	r.bytes.Add(int64(len(data)))
	r.entries.Add(1)
	b := r.batch()
	send(append(b, e))
}

// skip counts and reports a file left out.
func (r *FileReader) skip(err error) {
	if errors.Is(err, ErrNotRegular) {
		r.notRegular.Add(1)
		r.report(r.cfg.OnFileError, err)
		return
	}
	r.fileError(err)
}

func (r *FileReader) fileError(err error) {
	r.failed.Add(1)
	r.report(r.cfg.OnFileError, err)
}

func (r *FileReader) lineError(err error) {
	r.bad.Add(1)
	r.report(r.cfg.OnLineError, err)
}

func (r *FileReader) report(fn func(error), err error) {
	if fn == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	fn(err)
}
