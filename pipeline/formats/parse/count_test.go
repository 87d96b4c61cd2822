package parse_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

func TestCount(t *testing.T) {
	tests := []struct {
		name string
		json string
		want int64
		err  error
	}{
		{"Zero", `0`, 0, nil},
		{"Plain", `12310`, 12310, nil},
		{"Fraction", `5.0`, 5, nil},
		{"Exponent", `1e3`, 1000, nil},
		{"Null", `null`, 0, nil},
		{"AtTheBound", `1000000000000`, parse.MaxTokens, nil},
		{"AboveTheBound", `1000000000001`, 0, parse.ErrImplausibleCount},
		{"MaxInt64", `9223372036854775807`, 0, parse.ErrImplausibleCount},
		{"BeyondInt64", `1e30`, 0, parse.ErrImplausibleCount},
		{"Negative", `-1`, 0, parse.ErrImplausibleCount},
		{"NegativeFraction", `-0.5`, 0, parse.ErrImplausibleCount},
		{"Fractional", `1.5`, 0, parse.ErrBadField},
		{"String", `"12"`, 0, parse.ErrBadField},
		{"Bool", `true`, 0, parse.ErrBadField},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s jsonl.Scanner
			s.Reset([]byte(`{"n":` + tc.json + `}`))
			require.True(t, s.EnterObject())
			require.True(t, s.NextField())
			v := s.Value()
			got, ok := parse.Count(v)
			require.Equal(t, tc.err == nil, ok, "Count(%s)", tc.json)
			require.Equal(t, tc.want, got, "Count(%s)", tc.json)
			if !ok {
				err := parse.CountError(v, "usage.n")
				require.ErrorIs(t, err, tc.err, "CountError(%s)", tc.json)
				require.Contains(t, err.Error(), "usage.n")
			}
			require.Zero(t, testing.AllocsPerRun(10, func() { parse.Count(v) }))
		})
	}
	// Absent is 0.
	got, ok := parse.Count(jsonl.Value{})
	require.True(t, ok)
	require.Zero(t, got)
}
