// Package jsonl is sessionpipe's hot path: it splits a byte stream into
// complete lines ([Reader]) and walks the JSON object on each line
// ([Scanner]) without allocating, returning the values a caller asks for as
// sub-slices of the input.
//
// # Lines
//
// A [Reader] returns only complete lines, ending in "\n". A partial last
// line is held until the rest of it arrives, so a Reader over a file that
// is still being written follows it: after io.EOF, call [Reader.Next] again
// once the file has grown. "\r\n" endings, a UTF-8 byte order mark and
// blank lines are handled; lines of any size up to a configurable limit
// are returned whole, longer ones are skipped and reported.
//
// # JSON
//
// A [Scanner] is a validating cursor. It does not build a tree: the caller
// walks the object with [Scanner.NextField] and [Scanner.EnterObject],
// reads the values it needs with [Scanner.Value] and lets the rest be
// skipped. Skipped values are still validated (the whole line is checked
// against RFC 8259, as encoding/json would), strings are unescaped only on
// request ([Value.AppendText]), and invalid UTF-8 is replaced by U+FFFD
// when unescaping, as encoding/json does. A line holding two JSON objects
// back to back, as real pi transcripts have, yields two top-level values.
// Malformed input gives a *SyntaxError with the byte offset, never a
// panic.
//
// # Speed
//
// On amd64 with AVX2 the Scanner first indexes the line, 64 bytes at a
// time, in assembly: the offsets of its quotes, brackets, colons and
// commas and of the first byte of each number or literal, found with
// vector compares and carry-less multiplication (as simdjson does), while
// the content of every string is validated (control characters, escapes,
// \u digits). The cursor then steps from offset to offset: a string of any
// length costs two steps, and skipping a nested value never looks at the
// bytes between its structural characters. Numbers, literals and the
// grammar are checked on the way.
//
// Elsewhere, and from the first malformed byte of a line on, a
// byte-by-byte cursor does the same work (scanning strings 32 or 64 bytes
// at a time with AVX2, eight at a time without). It is also the one that
// reports errors, so both give the same offsets and messages; tests check
// them against each other and against encoding/json. [Vectorized] reports
// which implementation runs.
//
// The package does not know any transcript format: pipeline/formats does.
package jsonl
