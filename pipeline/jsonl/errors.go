package jsonl

import (
	"errors"
	"fmt"
	"strconv"
)

// Sentinel errors. Every *SyntaxError wraps one of them, so callers can
// classify bad input with errors.Is.
var (
	// ErrSyntax reports malformed JSON.
	ErrSyntax = errors.New("jsonl: invalid JSON")

	// ErrUnexpectedEnd reports JSON cut short: the line ends inside a
	// value.
	ErrUnexpectedEnd = errors.New("jsonl: unexpected end of JSON input")

	// ErrTooDeep reports nesting deeper than MaxDepth.
	ErrTooDeep = errors.New("jsonl: exceeded max depth")

	// ErrMisuse reports a [Scanner] method called in the wrong state (for
	// example NextField inside an array). It is a bug in the caller.
	ErrMisuse = errors.New("jsonl: scanner misuse")
)

// SyntaxError is a position-carrying decode error. Offset is the byte
// offset within the data given to [Scanner.Reset] at which the problem was
// found; callers that know the line's position in its file turn it into a
// file location (schema.DecodeError).
type SyntaxError struct {
	Offset int    // byte offset in the scanned data
	Msg    string // what was wrong, e.g. "invalid character 'x' after object key"
	Err    error  // ErrSyntax, ErrUnexpectedEnd, ErrTooDeep or ErrMisuse
}

func (e *SyntaxError) Error() string {
	return "jsonl: " + e.Msg + " at offset " + strconv.Itoa(e.Offset)
}

// Unwrap returns the sentinel the error belongs to.
func (e *SyntaxError) Unwrap() error { return e.Err }

// LineTooLongError reports a line longer than the configured maximum. The
// line was skipped whole; reading continued after it.
type LineTooLongError struct {
	Offset int64  // stream offset of the line's first byte
	Line   int64  // 1-based line number
	Length int64  // length of the line in bytes, without "\n"
	Head   []byte // the first bytes of the line, for the dead-letter record
}

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("jsonl: line %d at offset %d is %d bytes long, over the limit", e.Line, e.Offset, e.Length)
}

// quoteChar formats c for an error message as encoding/json does.
func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	if c >= 0x80 {
		s = strconv.Quote(string([]byte{c}))
	}
	return "'" + s[1:len(s)-1] + "'"
}
