package formats

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/claude"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// FileStats counts what reading one file gave.
type FileStats struct {
	Format  schema.Format
	Bytes   int64 // bytes of the complete lines read
	Lines   int64 // complete lines read, blank lines included
	Entries int64 // entries emitted
	Errors  int64 // bad lines reported

	// Pending is the length of a last line without its "\n": a line
	// still being written, or cut short. It is not read (DESIGN: a
	// half-written last line counts only once it is complete).
	Pending int64
}

// ReadConfig configures [ReadFile] and [Read].
type ReadConfig struct {
	parse.Config

	// MaxLineBytes is the line reader's limit; zero means its default.
	MaxLineBytes int

	// Format forces the format instead of detecting it.
	Format schema.Format

	// Reader, when set, is reused (Reset) instead of a new line reader,
	// keeping its buffer from file to file. Its own limit then applies;
	// set MaxLineBytes to it to have errors name it.
	Reader *jsonl.Reader
}

// ReadFile reads a whole transcript file, as it is now, through a
// [Decoder] ended as final: it detects the format, parses every complete
// line in order and calls emit for each entry. A bad line is reported to
// onErr (a located *schema.DecodeError) and reading goes on; so is a
// sidecar that cannot be read. A last line without "\n" is not read: its
// length is FileStats.Pending. The *schema.Entry given to emit is valid
// only during the call.
//
// Only a regular file is opened (see [OpenRegular]). ReadFile returns
// ErrUnknownFormat if the file is not a transcript, and the context's
// cause as soon as ctx ends, even in the middle of a long line.
func ReadFile(ctx context.Context, path string, cfg ReadConfig, emit func(*schema.Entry), onErr func(error)) (FileStats, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return FileStats{}, err
	}
	defer f.Close()
	if cfg.Path == "" {
		cfg.Path = path
	}
	return Read(ctx, f, cfg, emit, onErr)
}

// Read is [ReadFile] on any reader; cfg.Path names it in entries and
// errors.
func Read(ctx context.Context, r io.Reader, cfg ReadConfig, emit func(*schema.Entry), onErr func(error)) (FileStats, error) {
	dec, err := NewDecoder(DecoderConfig{Config: cfg.Config, Format: cfg.Format, MaxLineBytes: cfg.MaxLineBytes, OnFileError: onErr})
	if err != nil {
		return FileStats{}, err
	}
	rd := cfg.Reader
	if rd == nil {
		rd = jsonl.NewReader(nil, jsonl.ReaderConfig{MaxLineBytes: cfg.MaxLineBytes})
	}
	var st FileStats
	err = decodeAll(ctx, r, rd, dec, &st, func(res *Result) error {
		for i := range res.Entries {
			emit(&res.Entries[i])
		}
		if res.Err != nil {
			onErr(res.Err)
		}
		return nil
	})
	return st, err
}

// decodeAll reads r whole through rd and dec, as a final file, counting
// in st; fn receives every line's result. It returns ErrUnknownFormat,
// a read error, or the context's cause.
func decodeAll(ctx context.Context, r io.Reader, rd *jsonl.Reader, dec *Decoder, st *FileStats, fn func(*Result) error) error {
	rd.Reset(ctxReader{ctx: ctx, r: r}, 0, 0)
	count := func(res *Result) error {
		st.Entries += int64(len(res.Entries))
		if res.Err != nil {
			st.Errors++
		}
		return fn(res)
	}
	defer func() {
		st.Format = dec.Format()
		st.Lines, st.Bytes = rd.Lines(), rd.Offset()
	}()
	for {
		line, err := rd.Next()
		switch {
		case err == nil:
			err = dec.Decode(line, count)
		case errors.Is(err, io.EOF):
			if rest := rd.Buffered(); !isBlank(rest) {
				st.Pending = int64(len(rest))
			}
			return dec.End(true, count)
		case tooLong(err) != nil:
			err = dec.TooLong(tooLong(err), rd.Offset(), count)
		case ctx.Err() != nil:
			return context.Cause(ctx)
		default:
			return fmt.Errorf("read %s: %w", dec.cfg.Path, err)
		}
		if err != nil {
			return err
		}
	}
}

// tooLong returns the *jsonl.LineTooLongError in err, or nil. It is out
// of decodeAll's loop so that the variable errors.As needs escapes to the
// heap only when a line is read in error, not for every line.
func tooLong(err error) *jsonl.LineTooLongError {
	var tl *jsonl.LineTooLongError
	if errors.As(err, &tl) {
		return tl
	}
	return nil
}

// ctxReader fails reads once ctx has ended, so that a long line or a huge
// file stops promptly.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// OpenRegular opens path for reading if it is a regular file (or a link
// to one), and fails with an error wrapping [ErrNotRegular] otherwise. The
// check is made before opening, as opening a FIFO blocks until a writer
// comes, and again on the opened file (opened non-blocking), so that a
// path swapped in between cannot make it block or read a device.
func OpenRegular(path string) (*os.File, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, notRegular(path, info.Mode())
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if info, err = f.Stat(); err != nil || !info.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, err
		}
		return nil, notRegular(path, info.Mode())
	}
	return f, nil
}

func notRegular(path string, mode fs.FileMode) error {
	return &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, kindOf(mode))}
}

// kindOf names the type of a file that is not regular.
func kindOf(mode fs.FileMode) string {
	switch {
	case mode.IsDir():
		return "a directory"
	case mode&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeCharDevice != 0:
		return "a character device"
	case mode&fs.ModeDevice != 0:
		return "a device"
	}
	return "an irregular file"
}

// NewForFile is [New] for a file on disk: it also reads what sits beside
// the file for it (the .meta.json sidecar of a Claude Code subagent, which
// names its type). A sidecar that cannot be read is returned as the error
// together with a usable parser; only an unknown format gives no parser.
func NewForFile(format schema.Format, cfg parse.Config) (Parser, error) {
	p, err := New(format, cfg)
	if err != nil {
		return nil, err
	}
	if cp, ok := p.(*claude.Parser); ok && cfg.Path != "" {
		meta, found, err := claude.ReadAgentMeta(cfg.Path)
		if err != nil {
			return p, err
		}
		if found {
			cp.SetAgentType(meta.AgentType)
		}
	}
	return p, nil
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}
