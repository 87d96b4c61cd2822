package schema

import (
	"errors"
	"fmt"
	"strconv"
)

// Sentinel errors of the schema package.
var (
	// ErrInvalidEntry reports an entry that violates the contract (an
	// unknown kind or role, a missing format). It is returned by
	// [Entry.Validate]; the caller must not publish such an entry.
	ErrInvalidEntry = errors.New("schema: invalid entry")
)

// DecodeError locates bad input: a line that could not be decoded or
// normalised. Path and Line may be empty when the input is not a file.
// Offset is the byte offset in the file (or stream) where the problem was
// found, not the start of the line.
type DecodeError struct {
	Path   string // file path, or "" for a stream
	Line   int64  // 1-based line number, or 0 if unknown
	Offset int64  // byte offset of the problem in the file
	Err    error  // the underlying error
}

// Error formats the error as path:line: offset N: err, which editors and
// terminals recognise as a location.
func (e *DecodeError) Error() string {
	b := make([]byte, 0, len(e.Path)+64)
	if e.Path != "" {
		b = append(b, e.Path...)
		b = append(b, ':')
	}
	if e.Line > 0 {
		b = strconv.AppendInt(b, e.Line, 10)
		b = append(b, ':')
	}
	if len(b) > 0 {
		b = append(b, ' ')
	}
	b = append(b, "offset "...)
	b = strconv.AppendInt(b, e.Offset, 10)
	if e.Err != nil {
		b = append(b, ": "...)
		b = append(b, e.Err.Error()...)
	}
	return string(b)
}

// Unwrap returns the underlying error.
func (e *DecodeError) Unwrap() error { return e.Err }

// Validate checks the contract invariants of an entry: a valid format,
// kind and role, and a session and entry id. It returns an error wrapping
// [ErrInvalidEntry] naming the first violation.
func (e *Entry) Validate() error {
	switch {
	case !e.Format.Valid():
		return fmt.Errorf("%w: format %q", ErrInvalidEntry, e.Format)
	case !e.Kind.Valid():
		return fmt.Errorf("%w: kind %q", ErrInvalidEntry, e.Kind)
	case !e.Role.Valid():
		return fmt.Errorf("%w: role %q", ErrInvalidEntry, e.Role)
	case e.SessionID == "":
		return fmt.Errorf("%w: empty session_id", ErrInvalidEntry)
	case e.EntryID == "":
		return fmt.Errorf("%w: empty entry_id", ErrInvalidEntry)
	}
	return nil
}
