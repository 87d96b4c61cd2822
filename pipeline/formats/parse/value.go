package parse

import (
	"math"
	"time"
	"unsafe"

	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

// Time decodes a timestamp: an RFC 3339 string (any offset, any number of
// fraction digits; "Z" and "+00:00" alike) or a number of Unix
// milliseconds. The result is in UTC. ok is false for any other value,
// and for a number of milliseconds outside the years 0 to 9999, which
// RFC 3339 (the entry's JSON form) cannot write: such a time would pass
// offline and fail every consumer of the stream.
func Time(v jsonl.Value) (t time.Time, ok bool) {
	switch v.Kind() {
	case jsonl.String:
		raw := v.Raw()
		if v.Escaped() || len(raw) == 0 {
			return time.Time{}, false
		}
		t, err := time.Parse(time.RFC3339Nano, unsafe.String(unsafe.SliceData(raw), len(raw)))
		if err != nil {
			return time.Time{}, false
		}
		return t.UTC(), true
	case jsonl.Number:
		ms, ok := Int(v)
		if !ok {
			return time.Time{}, false
		}
		t := time.UnixMilli(ms).UTC()
		if t.Year() < 0 || t.Year() > 9999 {
			return time.Time{}, false
		}
		return t, true
	}
	return time.Time{}, false
}

// Int decodes a JSON number as an int64, accepting integral values written
// with a fraction or exponent (5.0, 1e3). ok is false for non-numbers,
// fractions and values beyond int64.
func Int(v jsonl.Value) (int64, bool) {
	if n, ok := v.Int(); ok {
		return n, true
	}
	f, ok := v.Float()
	if !ok || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, false
	}
	return int64(f), true
}

// OptString reads an optional string: v itself when it is a string, a
// zero Value when it is null or absent; ok is false, with a zero Value,
// for any other kind.
func OptString(v jsonl.Value) (s jsonl.Value, ok bool) {
	switch v.Kind() {
	case jsonl.String:
		return v, true
	case jsonl.Null, jsonl.Invalid:
		return jsonl.Value{}, true
	}
	return jsonl.Value{}, false
}

// RawJSON returns a copy of v as JSON text: a string with its quotes put
// back (still escaped, so valid JSON), other kinds as they are; nil for no
// value or null.
func RawJSON(v jsonl.Value) []byte {
	switch v.Kind() {
	case jsonl.Invalid, jsonl.Null:
		return nil
	case jsonl.String:
		raw := v.Raw()
		b := make([]byte, 0, len(raw)+2)
		b = append(b, '"')
		b = append(b, raw...)
		return append(b, '"')
	}
	return append([]byte(nil), v.Raw()...)
}

// Str returns the unescaped text of a string value, or "" for other kinds.
// It allocates only for non-empty strings.
func Str(v jsonl.Value) string {
	if v.Kind() != jsonl.String || len(v.Raw()) == 0 {
		return ""
	}
	return v.String()
}
