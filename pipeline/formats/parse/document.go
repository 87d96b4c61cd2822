package parse

import (
	"bytes"
	"errors"

	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

// ErrNotArray reports a document field that must be a JSON array and is
// not (an Amp thread's messages, a Gemini CLI session's messages).
var ErrNotArray = errors.New("parse: field is not a JSON array")

// Element is one value inside a whole-file JSON document: its bytes (a
// sub-slice of the document, valid as long as the document is), the
// byte offset where it starts and the 1-based line it starts on. A
// parser of a document makes the entries of an element carry Offset and
// Line so that its errors and entries locate it in the file.
type Element struct {
	Raw    []byte
	Offset int64
	Line   int64
}

// Fields returns the fields of the top-level object of a JSON document,
// each with its value's position; a field given twice keeps its last
// value, as JSON.parse does. A document that is not valid JSON gives the
// scanner's *jsonl.SyntaxError (its Offset locates the fault), one whose
// value is not an object ErrNotObject; anything after the object but
// white space is a syntax error too.
func Fields(data []byte) (map[string]Element, error) {
	var s jsonl.Scanner
	s.Reset(data)
	if !s.More() {
		if err := s.Err(); err != nil {
			return nil, err
		}
		return nil, ErrNotObject
	}
	if !s.EnterObject() {
		s.Skip()
		if err := s.Err(); err != nil {
			return nil, err
		}
		return nil, ErrNotObject
	}
	fields := make(map[string]Element)
	lines := lineCounter{data: data}
	for s.NextField() {
		key := string(s.Key())
		v := s.Value()
		if s.Err() != nil {
			break
		}
		raw := v.Raw()
		if v.Kind() == jsonl.String {
			raw = stringWithQuotes(data, raw)
		}
		off := int64(cap(data) - cap(raw))
		fields[key] = Element{Raw: raw, Offset: off, Line: lines.at(off)}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	if s.More() {
		// A second value after the object: not one document.
		return nil, &jsonl.SyntaxError{Offset: s.Offset(), Msg: "data after the document", Err: jsonl.ErrSyntax}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	return fields, nil
}

// stringWithQuotes widens the raw bytes of a string value (the scanner
// gives them without quotes) to the quoted JSON string in data.
func stringWithQuotes(data, raw []byte) []byte {
	start := cap(data) - cap(raw) - 1
	return data[start : start+len(raw)+2]
}

// Elements returns the elements of an array value of a document (an
// [Element] that [Fields] or Elements returned from data), each with its
// position in data. A value that is not an array gives ErrNotArray.
func Elements(data []byte, arr Element) ([]Element, error) {
	var s jsonl.Scanner
	s.Reset(arr.Raw)
	if !s.More() || !s.EnterArray() {
		if err := s.Err(); err != nil {
			return nil, err
		}
		return nil, ErrNotArray
	}
	var out []Element
	lines := lineCounter{data: data}
	for s.NextElem() {
		v := s.Value()
		if s.Err() != nil {
			break
		}
		raw := v.Raw()
		if v.Kind() == jsonl.String {
			raw = stringWithQuotes(data, raw)
		}
		off := int64(cap(data) - cap(raw))
		out = append(out, Element{Raw: raw, Offset: off, Line: lines.at(off)})
	}
	if err := s.Err(); err != nil {
		var se *jsonl.SyntaxError
		if errors.As(err, &se) {
			// Where in the document, not in the array.
			return nil, &jsonl.SyntaxError{Offset: se.Offset + int(arr.Offset), Msg: se.Msg, Err: se.Err}
		}
		return nil, err
	}
	return out, nil
}

// lineCounter gives the line of increasing offsets, counting each byte
// once.
type lineCounter struct {
	data []byte
	pos  int64
	line int64
}

func (l *lineCounter) at(off int64) int64 {
	if l.line == 0 {
		l.line = 1
	}
	if off < l.pos { // not increasing: count again from the start
		l.pos, l.line = 0, 1
	}
	l.line += int64(bytes.Count(l.data[l.pos:off], []byte{'\n'}))
	l.pos = off
	return l.line
}
