package claude

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// TestTimestamp checks the fast path against parse.Time, which decides.
func TestTimestamp(t *testing.T) {
	tests := []string{
		`"2026-02-11T20:36:47.925Z"`,
		`"2026-02-11T20:36:47Z"`,
		`"2026-02-11T20:36:47.1Z"`,
		`"2026-02-11T20:36:47.123456789Z"`,
		`"2026-02-11T20:36:47.1234567890Z"`,
		`"2024-02-29T00:00:00.000Z"`,
		`"2023-02-29T00:00:00.000Z"`,
		`"1900-02-29T00:00:00Z"`,
		`"2000-02-29T00:00:00Z"`,
		`"2026-04-31T00:00:00Z"`,
		`"2026-13-01T00:00:00Z"`,
		`"2026-00-01T00:00:00Z"`,
		`"2026-01-01T24:00:00Z"`,
		`"2026-01-01T23:60:00Z"`,
		`"2026-01-01T23:59:60Z"`,
		`"2026-01-01T23:59:59.Z"`,
		`"2026-01-01t23:59:59Z"`,
		`"2026-01-01T23:59:59+02:00"`,
		`"2026-01-01T23:59:59.5+00:00"`,
		`"2026-1-01T23:59:59Z"`,
		`"+026-01-01T23:59:59Z"`,
		`"2026-01-01T23:59:5xZ"`,
		`"2026-01-01T23:59:59,5Z"`,
		`"2026-01-01 23:59:59Z"`,
		`"0000-01-01T00:00:00Z"`,
		`"9999-12-31T23:59:59.999999999Z"`,
		`""`,
		`1772704806000`,
		`null`,
	}
	var s jsonl.Scanner
	for _, in := range tests {
		s.Reset([]byte(in))
		v := s.Value()
		want, wantOK := parse.Time(v)
		got, gotOK := timestamp(v)
		assert.Equal(t, wantOK, gotOK, "timestamp(%s) ok", in)
		assert.True(t, want.Equal(got), "timestamp(%s) = %v, want %v", in, got, want)
		assert.Equal(t, want.Location(), got.Location(), "timestamp(%s) location", in)
	}
}

// FuzzTimestamp compares the fast path with parse.Time on any string.
func FuzzTimestamp(f *testing.F) {
	f.Add("2026-02-11T20:36:47.925Z")
	f.Add("2024-02-29T23:59:59.123456789Z")
	f.Fuzz(func(t *testing.T, in string) {
		b, ok := schema.ParseUTC([]byte(in))
		if !ok {
			return
		}
		var s jsonl.Scanner
		s.Reset([]byte(`"` + in + `"`))
		want, wantOK := parse.Time(s.Value())
		if !wantOK {
			t.Fatalf("schema.ParseUTC(%q) = %v, parse.Time rejects it", in, b)
		}
		if !want.Equal(b) {
			t.Fatalf("schema.ParseUTC(%q) = %v, want %v", in, b, want)
		}
	})
}
