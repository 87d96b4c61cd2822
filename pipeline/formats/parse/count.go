package parse

import (
	"errors"
	"fmt"

	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

// MaxTokens is the largest token counter accepted: 10^12. No model call
// comes near it (the largest context windows hold a few million tokens,
// and cumulative session totals stay far below), while any sum of counters
// under it stays exact in int64 for millions of calls. A counter above it
// (9223372036854775807, 2^62) is corrupt data, not usage.
const MaxTokens = 1_000_000_000_000

// ErrImplausibleCount reports a token counter that is negative or above
// MaxTokens. The parsers report it as the line's error, keep the entry and
// give it no usage, so that nothing vanishes silently and no sum wraps.
var ErrImplausibleCount = errors.New("parse: token counter outside 0..10^12")

// Count decodes a token counter: null or absent is 0, an integer from 0 to
// MaxTokens (written with a fraction or exponent too, 5.0 or 1e3) is its
// value. For any other value ok is false: report [CountError]. It does
// not allocate.
func Count(v jsonl.Value) (n int64, ok bool) {
	switch v.Kind() {
	case jsonl.Invalid, jsonl.Null:
		return 0, true
	case jsonl.Number:
		if n, ok := Int(v); ok && n >= 0 && n <= MaxTokens {
			return n, true
		}
	}
	return 0, false
}

// CountError returns the error for a counter that [Count] refused, naming
// its field: wrapping ErrImplausibleCount for a number out of range,
// ErrBadField for anything else (a string, a fraction).
func CountError(v jsonl.Value, field string) error {
	if v.Kind() == jsonl.Number {
		_, integral := Int(v)
		if integral || isNumberOutOfRange(v) {
			return fmt.Errorf("%w: %s = %s", ErrImplausibleCount, field, v.Raw())
		}
	}
	return fmt.Errorf("%w: %s", ErrBadField, field)
}

// isNumberOutOfRange reports a number beyond the range, integral or not
// (1e30, -0.5): out of range, not malformed.
func isNumberOutOfRange(v jsonl.Value) bool {
	f, ok := v.Float()
	return ok && (f > MaxTokens || f < 0)
}
