// Package parse holds what the transcript format parsers share: their
// [Config], timestamp and number decoding, derived entry ids, and the
// construction of located errors. It knows no format; the parsers live in
// the sibling packages claude, pi, codex, fluux and m4dtimes, and
// package formats detects which one a file needs.
package parse

import (
	"errors"
	"log/slog"

	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Config configures the parser of one file. The zero value parses an
// unnamed stream with defaults.
type Config struct {
	// Path is the file's path, copied into every entry and error. Some
	// formats derive a session id from it when the file has no header
	// (pi after gateway compaction: the file stem).
	Path string

	// Host is copied into every entry.
	Host string

	// Text asks for message text, tool result content and tool call
	// input to be extracted (unescaped). Aggregation does not need them;
	// leaving Text off is faster.
	Text bool

	// Raw asks for the original JSON object to be kept in Entry.Raw.
	Raw bool

	// Logger receives debug events; nil discards them.
	Logger *slog.Logger
}

// Log returns Logger, or a logger that discards everything when it is
// nil. Parsers narrow it with their component: Log().With("component",
// "pi") (constant arguments, so that New allocates no more than it must).
func (c Config) Log() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// Sentinel errors shared by the parsers. Each line error is a
// *schema.DecodeError wrapping one of these or a *jsonl.SyntaxError.
var (
	// ErrNotObject reports a line whose JSON value is not an object.
	ErrNotObject = errors.New("parse: line is not a JSON object")

	// ErrMissingField reports an object lacking a field its type needs
	// (for example an assistant message without a message object).
	ErrMissingField = errors.New("parse: missing field")

	// ErrBadField reports a field of the wrong JSON type or an
	// unparsable value (for example a timestamp that is not RFC 3339).
	ErrBadField = errors.New("parse: bad field")
)

// Fail returns the located error for a problem found at byte offset off
// within line (an offset in line.Bytes, not in the file).
func Fail(cfg *Config, line jsonl.Line, off int, err error) error {
	return &schema.DecodeError{
		Path:   cfg.Path,
		Line:   line.Number,
		Offset: line.Offset + int64(off),
		Err:    err,
	}
}

// ScanError returns the located error for the scanner's error, or nil.
func ScanError(cfg *Config, line jsonl.Line, s *jsonl.Scanner) error {
	err := s.Err()
	if err == nil {
		return nil
	}
	var se *jsonl.SyntaxError
	off := s.Offset()
	if errors.As(err, &se) {
		off = se.Offset
	}
	return Fail(cfg, line, off, err)
}

// Base returns an entry with the provenance fields of line filled in.
// object is the index of the JSON object within the line (0 for the first).
func Base(cfg *Config, format schema.Format, line jsonl.Line, object int) schema.Entry {
	return schema.Entry{
		Format: format,
		Host:   cfg.Host,
		Path:   cfg.Path,
		Offset: line.Offset,
		Line:   line.Number,
		Object: object,
	}
}

// Objects walks the JSON objects of one line, the way every parser does:
// it resets s to the line and calls object for each top-level object,
// entered, with its index in the line and its offset. A value that is not
// an object stops the line with ErrNotObject, a syntax error with its
// located error; the entries appended before stay in the returned slice.
// object returns dst extended with its entries, and an error that stops
// the line.
func Objects(cfg *Config, s *jsonl.Scanner, line jsonl.Line, dst []schema.Entry, object func(dst []schema.Entry, obj, start int) ([]schema.Entry, error)) ([]schema.Entry, error) {
	s.Reset(line.Bytes)
	for obj := 0; s.More(); obj++ {
		start := s.Offset()
		if !s.EnterObject() {
			s.Skip() // shows a syntax error, if that is what it is
			if err := ScanError(cfg, line, s); err != nil {
				return dst, err
			}
			return dst, Fail(cfg, line, start, ErrNotObject)
		}
		var err error
		if dst, err = object(dst, obj, start); err != nil {
			return dst, err
		}
	}
	return dst, ScanError(cfg, line, s)
}
