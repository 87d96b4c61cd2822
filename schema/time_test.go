package schema_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/schema"
)

// ParseUTC gives what time.Time's UnmarshalJSON gives for every time it
// accepts, and accepts the form schema.Entry.AppendJSON writes; what it
// does not accept, the decoder hands to UnmarshalJSON.
func TestParseUTC_SameAsUnmarshalJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 11))
	var cases []string
	for range 20000 {
		ts := time.Date(rng.IntN(10000), time.Month(1+rng.IntN(12)), 1+rng.IntN(31), rng.IntN(24), rng.IntN(60), rng.IntN(60),
			rng.IntN(1e9), time.UTC)
		cases = append(cases, ts.Format(time.RFC3339Nano))
	}
	// Each field at and past its bounds, every month's last days in
	// leap and common years, fractions of 0 to 12 digits, other offsets
	// and separators.
	for _, y := range []string{"0000", "1900", "2000", "2023", "2024", "9999", "999", "20x6"} {
		for m := 0; m <= 13; m++ {
			for _, d := range []string{"00", "01", "28", "29", "30", "31", "32"} {
				cases = append(cases, fmt.Sprintf("%s-%02d-%sT00:00:00Z", y, m, d))
			}
		}
	}
	for _, clock := range []string{"23:59:59", "24:00:00", "00:60:00", "00:00:60", "1:02:03", "01:2:03", "01:02:3", "aa:00:00"} {
		cases = append(cases, "2026-01-02T"+clock+"Z")
	}
	frac := "123456789123"
	for n := 0; n <= len(frac); n++ {
		cases = append(cases, "2026-01-02T03:04:05."+frac[:n]+"Z")
	}
	cases = append(cases, "2026-01-02t03:04:05Z", "2026-01-02T03:04:05z", "2026-01-02T03:04:05+00:00", "2026-01-02T03:04:05-07:00",
		"2026-01-02T03:04:05,5Z", "2026-01-02T03:04:05.5", "2026-01-02T03:04:05.Z", "2026-01-02T03:04:05.1a2Z", "2026-01-02 03:04:05Z",
		"2026/01/02T03:04:05Z", "2026-01-02T03:04:05ZZ", "", "Z", "2026-01-02T03:04:05.-1Z", "-026-01-02T03:04:05Z", "+2026-01-02T03:04:05Z",
		"2026-01-02T03:04:05.+12345Z", `2026-01-02T03:04:05\u005a`)
	fast := 0
	for _, c := range cases {
		got, ok := schema.ParseUTC([]byte(c))
		var want time.Time
		err := want.UnmarshalJSON([]byte(`"` + c + `"`))
		if !ok {
			continue
		}
		fast++
		require.NoError(t, err, "%q: ParseUTC accepts what UnmarshalJSON refuses", c)
		require.Equal(t, want, got, "%q", c)
	}
	require.Greater(t, fast, 20000, "the form AppendJSON writes takes the fast path")
}
