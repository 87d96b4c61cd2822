package api

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A date is a day of the tz given: its start in Berlin is 23:00Z the day
// before (winter), and the end of the day of the change to summer time
// is 23 hours after its start.
func TestParseTime_DaysOfTheZone(t *testing.T) {
	t.Parallel()
	berlin, err := parseTZ("Europe/Berlin")
	require.NoError(t, err)
	since, err := parseTime("since", "2026-03-02", false, berlin)
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 3, 1, 23, 0, 0, 0, time.UTC), since.UTC())
	start, err := parseTime("since", "2026-03-29", false, berlin)
	require.NoError(t, err)
	end, err := parseTime("until", "2026-03-29", true, berlin)
	require.NoError(t, err)
	require.Equal(t, 23*time.Hour-time.Nanosecond, end.Sub(start), "a day of 23 hours")
	utc, err := parseTZ("")
	require.NoError(t, err)
	since, err = parseTime("since", "2026-03-02", false, utc)
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), since)
	_, err = parseTZ("Local")
	require.ErrorContains(t, err, `tz "Local"`)
}
