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
			got, err := parse.Count(s.Value(), "usage.n")
			require.ErrorIs(t, err, tc.err, "Count(%s)", tc.json)
			require.Equal(t, tc.want, got, "Count(%s)", tc.json)
			if err != nil {
				require.Contains(t, err.Error(), "usage.n")
			}
		})
	}
	// Absent is 0.
	got, err := parse.Count(jsonl.Value{}, "x")
	require.NoError(t, err)
	require.Zero(t, got)
}
