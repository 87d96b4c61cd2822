package claude

import (
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

// timestamp decodes a timestamp value like [parse.Time], with a fast path
// for the form Claude Code writes, "2026-02-11T20:36:47.925Z" (UTC, any
// number of fraction digits), which is on every line.
func timestamp(v jsonl.Value) (time.Time, bool) {
	if v.Kind() == jsonl.String && !v.Escaped() {
		if t, ok := utcTime(v.Raw()); ok {
			return t, true
		}
	}
	return parse.Time(v)
}

// utcTime parses YYYY-MM-DDTHH:MM:SS[.fraction]Z. ok is false for any
// other text, including out-of-range fields; the caller then falls back to
// the general parser, which decides.
func utcTime(b []byte) (t time.Time, ok bool) {
	n := len(b)
	if n < 20 || n > 30 || b[n-1] != 'Z' || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' {
		return time.Time{}, false
	}
	y1, ok1 := num2(b, 0)
	y2, ok2 := num2(b, 2)
	month, ok3 := num2(b, 5)
	day, ok4 := num2(b, 8)
	hour, ok5 := num2(b, 11)
	minute, ok6 := num2(b, 14)
	sec, ok7 := num2(b, 17)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) {
		return time.Time{}, false
	}
	year := y1*100 + y2
	nsec := 0
	if n > 20 {
		frac := b[20 : n-1]
		if b[19] != '.' || len(frac) == 0 || len(frac) > 9 {
			return time.Time{}, false
		}
		f, ok := digits(frac)
		if !ok {
			return time.Time{}, false
		}
		for range 9 - len(frac) {
			f *= 10
		}
		nsec = f
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC), true
}

// num2 decodes the two ASCII digits at b[i:i+2].
func num2(b []byte, i int) (int, bool) {
	d0, d1 := b[i]-'0', b[i+1]-'0'
	return int(d0)*10 + int(d1), d0 <= 9 && d1 <= 9
}

// digits decodes a run of ASCII digits.
func digits(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		d := c - '0'
		if d > 9 {
			return 0, false
		}
		n = n*10 + int(d)
	}
	return n, true
}

// daysIn returns the number of days of a month of the proleptic Gregorian
// calendar.
func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
