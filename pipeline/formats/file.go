package formats

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/claude"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// ErrIncompleteLine reports a last line without its "\n" that is not a
// complete JSON object: a line still being written, or cut short.
var ErrIncompleteLine = errors.New("formats: incomplete last line")

// FileStats counts what reading one file gave.
type FileStats struct {
	Format  schema.Format
	Bytes   int64 // bytes read
	Lines   int64 // lines read, blank lines included
	Entries int64 // entries emitted
	Errors  int64 // bad lines reported
}

// ReadConfig configures [ReadFile] and [Read].
type ReadConfig struct {
	parse.Config

	// MaxLineBytes is passed to the line reader; zero means its default.
	MaxLineBytes int

	// Format forces the format instead of detecting it.
	Format schema.Format

	// Reader, when set, is reused (Reset) instead of a new line reader,
	// keeping its buffer from file to file. MaxLineBytes is then the
	// reader's own.
	Reader *jsonl.Reader
}

// ReadFile reads a whole transcript file: it detects the format from the
// first lines, parses every line in order and calls emit for each entry.
// A bad line is reported to onErr (a *schema.DecodeError or a
// *jsonl.LineTooLongError, located) and reading goes on. A last line
// without "\n" is parsed when it holds complete JSON and reported as
// ErrIncompleteLine otherwise. The *schema.Entry given to emit is valid
// only during the call.
//
// It returns ErrUnknownFormat if the file is not a transcript, and the
// context's error if ctx ends first.
func ReadFile(ctx context.Context, path string, cfg ReadConfig, emit func(*schema.Entry), onErr func(error)) (FileStats, error) {
	f, err := os.Open(path)
	if err != nil {
		return FileStats{}, err
	}
	defer f.Close()
	if cfg.Path == "" {
		cfg.Path = path
	}
	return Read(ctx, f, cfg, emit, onErr)
}

// ReadFileBatches is [ReadFile] handing entries over in batches, as
// [ReadBatches] does.
func ReadFileBatches(ctx context.Context, path string, cfg ReadConfig, next func() []schema.Entry, flush func([]schema.Entry), onErr func(error)) (FileStats, error) {
	f, err := os.Open(path)
	if err != nil {
		return FileStats{}, err
	}
	defer f.Close()
	if cfg.Path == "" {
		cfg.Path = path
	}
	return ReadBatches(ctx, f, cfg, next, flush, onErr)
}

// Read is [ReadFile] on any reader; cfg.Path names it in entries and
// errors.
func Read(ctx context.Context, r io.Reader, cfg ReadConfig, emit func(*schema.Entry), onErr func(error)) (FileStats, error) {
	var buf []schema.Entry
	next := func() []schema.Entry { return buf[:0] }
	flush := func(entries []schema.Entry) {
		for i := range entries {
			emit(&entries[i])
		}
		buf = entries
	}
	return ReadBatches(ctx, r, cfg, next, flush, onErr)
}

// BatchSize is how many entries [ReadBatches] gathers before handing
// them over.
const BatchSize = 1024

// ReadBatches is [Read] handing entries over in batches of about
// [BatchSize], in file order, without copying them: next returns an empty
// slice (with room, ideally) to fill, and flush receives each filled one,
// which it may keep. next is called only when a line is to be parsed, so a
// file without lines takes no slice; flush is never called with an empty
// one.
func ReadBatches(ctx context.Context, r io.Reader, cfg ReadConfig, next func() []schema.Entry, flush func([]schema.Entry), onErr func(error)) (FileStats, error) {
	var st FileStats
	rd := cfg.Reader
	if rd == nil {
		rd = jsonl.NewReader(r, jsonl.ReaderConfig{MaxLineBytes: cfg.MaxLineBytes})
	} else {
		rd.Reset(r, 0, 0)
	}

	// Hold the first lines until the format is known.
	var head []jsonl.Line
	var headErrs []error
	eof := false
	format := cfg.Format
	for format == "" && len(head) < DetectLines {
		line, err := rd.Next()
		if errors.Is(err, io.EOF) {
			eof = true
			break
		}
		if err != nil {
			if !isLineError(err) {
				return st, fmt.Errorf("read %s: %w", cfg.Path, err)
			}
			headErrs = append(headErrs, err)
			continue
		}
		line.Bytes = bytes.Clone(line.Bytes)
		head = append(head, line)
	}
	if format == "" {
		lines := make([][]byte, len(head))
		for i := range head {
			lines[i] = head[i].Bytes
		}
		if rest := rd.Buffered(); eof && len(rest) > 0 {
			lines = append(lines, rest)
		}
		var err error
		if format, err = Detect(lines); err != nil {
			return st, err
		}
	}
	st.Format = format
	p, err := NewForFile(format, cfg.Config)
	if err != nil {
		if errors.Is(err, ErrUnknownFormat) {
			return st, err
		}
		st.Errors++
		onErr(err)
	}

	var entries []schema.Entry
	parseLine := func(line jsonl.Line) {
		if entries == nil {
			entries = next()
		}
		n := len(entries)
		var err error
		entries, err = p.Parse(entries, line)
		st.Entries += int64(len(entries) - n)
		if err != nil {
			st.Errors++
			onErr(err)
		}
		if len(entries) >= BatchSize {
			flush(entries)
			entries = nil
		}
	}
	defer func() {
		if len(entries) > 0 {
			flush(entries)
		}
	}()
	for _, err := range headErrs {
		st.Errors++
		onErr(locate(cfg.Path, err))
	}
	for _, line := range head {
		parseLine(line)
	}
	for n := 0; !eof; n++ {
		if n&1023 == 0 && ctx.Err() != nil {
			return st, context.Cause(ctx)
		}
		line, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if !isLineError(err) {
				return st, fmt.Errorf("read %s: %w", cfg.Path, err)
			}
			st.Errors++
			onErr(locate(cfg.Path, err))
			continue
		}
		parseLine(line)
	}
	st.Lines = rd.Lines()
	st.Bytes = rd.Offset()
	if rest := rd.Buffered(); len(rest) > 0 && !isBlank(rest) {
		st.Lines++
		st.Bytes += int64(len(rest))
		line := jsonl.Line{Bytes: bytes.TrimRight(rest, "\r"), Offset: rd.Offset(), End: rd.Offset() + int64(len(rest)), Number: st.Lines}
		if completeJSON(line.Bytes) {
			parseLine(line)
		} else {
			st.Errors++
			onErr(&schema.DecodeError{Path: cfg.Path, Line: line.Number, Offset: line.Offset, Err: ErrIncompleteLine})
		}
	}
	return st, nil
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

// isLineError reports an error about one line, after which reading goes on.
func isLineError(err error) bool {
	var tl *jsonl.LineTooLongError
	return errors.As(err, &tl)
}

// locate turns a line reader error into a located *schema.DecodeError.
func locate(path string, err error) error {
	var tl *jsonl.LineTooLongError
	if errors.As(err, &tl) {
		return &schema.DecodeError{Path: path, Line: tl.Line, Offset: tl.Offset, Err: err}
	}
	return err
}

// completeJSON reports whether b holds only complete, valid JSON values.
func completeJSON(b []byte) bool {
	var s jsonl.Scanner
	s.Reset(b)
	n := 0
	for s.More() {
		s.Skip()
		n++
	}
	return n > 0 && s.Err() == nil
}

func isBlank(b []byte) bool {
	return len(bytes.TrimSpace(b)) == 0
}
