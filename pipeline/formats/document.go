package formats

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/amp"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/codebuff"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/droid"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/gemini"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// DefaultMaxDocumentBytes bounds a whole-file document: a larger one is
// not read (a *DocumentTooLargeError), since it is read, and held, whole
// at every change. Amp's threads and Gemini CLI's session files stay
// well below it (tens of MiB would be a session of thousands of turns).
const DefaultMaxDocumentBytes = 64 << 20

// IsDocumentCandidate reports whether a file name may hold a whole-file
// JSON document of an agent, by the names the agents give them: an Amp
// thread (T-<id>.json), a Gemini CLI session (session-<time>-<id8>.json),
// a Droid session's settings (<session>.settings.json) or a Codebuff chat
// (chat-messages.json). Such a file
// is read whole, and its content, never its name, decides whether it is
// a transcript and of which format ([ParseDocument]); one that is not is
// skipped, counted as not a transcript. Other ".json" files (OpenClaw's
// sessions.json stores and .trajectory-path.json sidecars, Claude Code's
// .meta.json sidecars, settings and caches) are left out by their names.
func IsDocumentCandidate(name string) bool {
	if !strings.HasSuffix(name, ".json") {
		return false
	}
	return strings.HasPrefix(name, "T-") || strings.HasPrefix(name, "session-") || strings.HasSuffix(name, ".settings.json") ||
		name == "chat-messages.json"
}

// IsDocumentFormat reports whether format f is read as whole-file
// documents only (Amp, Droid, Codebuff). Gemini CLI is read both ways: its
// session-*.json documents and its .jsonl recordings.
func IsDocumentFormat(f schema.Format) bool {
	return f == schema.FormatAmp || f == schema.FormatDroid || f == schema.FormatCodebuff
}

// ErrDocumentFormat reports a line given to the line parser of a format
// that is only written as whole-file documents: such a file is read with
// [ReadDocument].
var ErrDocumentFormat = errors.New("formats: a whole-file document format, not read line by line")

// DocumentTooLargeError reports a document over the size limit: it is not
// read. The tailer looks at it again when it changes.
type DocumentTooLargeError struct {
	Path        string
	Size, Limit int64
}

func (e *DocumentTooLargeError) Error() string {
	return fmt.Sprintf("%s: document of %d bytes exceeds the limit of %d bytes", e.Path, e.Size, e.Limit)
}

// Document is one version of a whole-file document, parsed.
type Document struct {
	Format  schema.Format
	Entries []schema.Entry
	// Errors are the located problems of its parts (a message that
	// cannot be read, a bad counter): *schema.DecodeError, each also
	// counted as a bad part; the rest of the document is read.
	Errors []error
}

// ParseDocument detects the format of a whole JSON document from its
// top-level shape (never from its path) and parses it: an object is
// Gemini CLI's, Amp's or Droid's by its fields; an array whose first
// element is an object with a string "variant" or "role" is a Codebuff
// chat (codebuff.Detect). cfg.Path names it in entries and errors; mtime
// is its modification time (a Droid settings file's time when it records
// none). It returns ErrUnknownFormat for valid JSON of no known shape
// (an empty array among them), and a *schema.DecodeError wrapping the
// *jsonl.SyntaxError (or parse.ErrNotObject) for a document that is not
// one JSON object or array: a file
// being rewritten in place may be read half-written, so callers read it
// again at its next change before calling it broken.
func ParseDocument(data []byte, cfg parse.Config, mtime time.Time) (Document, error) {
	if isArray(data) {
		return parseArray(data, cfg)
	}
	fields, err := parse.Fields(data)
	if err != nil {
		return Document{}, documentError(data, cfg, err)
	}
	var d Document
	switch {
	case gemini.DetectDocument(fields):
		d.Format = schema.FormatGeminiCLI
		d.Entries, d.Errors = gemini.ParseDocument(nil, cfg, data, fields)
	case amp.Detect(fields):
		d.Format = schema.FormatAmp
		d.Entries, d.Errors = amp.Parse(nil, cfg, data, fields)
	case droid.Detect(fields):
		d.Format = schema.FormatDroid
		d.Entries, d.Errors = droid.Parse(nil, cfg, data, fields, mtime)
	default:
		return Document{}, ErrUnknownFormat
	}
	return d, nil
}

// ReadDocument reads the document at path whole (at most maxBytes; zero
// means DefaultMaxDocumentBytes, over it a *DocumentTooLargeError) and
// parses it ([ParseDocument]). Only a regular file is opened.
func ReadDocument(path string, cfg parse.Config, maxBytes int64) (Document, []byte, error) {
	h, err := OpenRegular(path)
	if err != nil {
		return Document{}, nil, err
	}
	defer h.Close()
	info, err := h.Stat()
	if err != nil {
		return Document{}, nil, err
	}
	data, err := ReadWhole(h, path, info.Size(), maxBytes)
	if err != nil {
		return Document{}, nil, err
	}
	if cfg.Path == "" {
		cfg.Path = path
	}
	d, err := ParseDocument(data, cfg, info.ModTime())
	return d, data, err
}

// ReadWhole reads a document of size bytes from h (what it holds when
// read: a file rewritten meanwhile gives its new length, up to the
// limit); maxBytes as for [ReadDocument].
func ReadWhole(h *os.File, path string, size, maxBytes int64) ([]byte, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxDocumentBytes
	}
	if size > maxBytes {
		return nil, &DocumentTooLargeError{Path: path, Size: size, Limit: maxBytes}
	}
	data, err := io.ReadAll(io.NewSectionReader(h, 0, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > maxBytes {
		return nil, &DocumentTooLargeError{Path: path, Size: int64(len(data)), Limit: maxBytes}
	}
	return data, nil
}

// documentError locates the error of a document that is not one JSON
// value of its kind.
func documentError(data []byte, cfg parse.Config, err error) error {
	off := int64(0)
	var se *jsonl.SyntaxError
	if errors.As(err, &se) {
		off = int64(se.Offset)
	}
	return &schema.DecodeError{Path: cfg.Path, Line: lineAt(data, off), Offset: off, Err: err}
}

// isArray reports whether a document's first byte but white space opens
// an array.
func isArray(data []byte) bool {
	for _, c := range data {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c == '['
	}
	return false
}

// parseArray parses a document whose top-level value is an array: one
// valid JSON array (else its located syntax error), then a Codebuff chat
// by its first element, else of no known shape.
func parseArray(data []byte, cfg parse.Config) (Document, error) {
	var s jsonl.Scanner
	s.Reset(data)
	if s.More() {
		s.Skip()
	}
	if s.Err() == nil && s.More() {
		return Document{}, documentError(data, cfg, &jsonl.SyntaxError{Offset: s.Offset(), Msg: "data after the document", Err: jsonl.ErrSyntax})
	}
	if err := s.Err(); err != nil {
		return Document{}, documentError(data, cfg, err)
	}
	elems, err := codebuff.Elements(data)
	if err != nil {
		// The scanner took it for valid JSON, encoding/json did not.
		return Document{}, &schema.DecodeError{Path: cfg.Path, Err: err}
	}
	if !codebuff.Detect(elems) {
		return Document{}, ErrUnknownFormat
	}
	d := Document{Format: schema.FormatCodebuff}
	d.Entries, d.Errors = codebuff.ParseDocument(nil, cfg, data, elems)
	return d, nil
}

func lineAt(data []byte, off int64) int64 {
	n := int64(1)
	for _, c := range data[:min(off, int64(len(data)))] {
		if c == '\n' {
			n++
		}
	}
	return n
}

// documentLines is the line parser of a document-only format: every
// line is an error saying so.
type documentLines struct {
	cfg    parse.Config
	format schema.Format
}

func (d documentLines) Format() schema.Format { return d.format }

func (d documentLines) Parse(dst []schema.Entry, line jsonl.Line) ([]schema.Entry, error) {
	return dst, parse.Fail(&d.cfg, line, 0, fmt.Errorf("%w: %s", ErrDocumentFormat, d.format))
}
