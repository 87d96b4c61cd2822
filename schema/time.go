package schema

import "time"

// ParseUTC parses the form [Entry.AppendJSON] writes a time in, RFC 3339
// in UTC with up to nine digits of fraction
// ("2006-01-02T15:04:05.999999999Z", the form Claude Code writes too),
// and gives what time.Time's UnmarshalJSON gives for it; ok is false for
// anything else (another offset, an escape, a field out of range…), which
// the caller's general parser then decodes, or rejects, itself. It checks
// what UnmarshalJSON checks (time.parseRFC3339): each field's digits and
// range, the day against its month's length. It is the fast path of the
// consumers' decoder and of the Claude Code parser.
func ParseUTC(b []byte) (t time.Time, ok bool) {
	const base = len("2006-01-02T15:04:05")
	if len(b) < base+1 || len(b) > base+11 || b[len(b)-1] != 'Z' ||
		b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' {
		return time.Time{}, false
	}
	// The digits of the date and the clock, then their values.
	for _, i := range [...]int{0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18} {
		if b[i]-'0' > 9 {
			return time.Time{}, false
		}
	}
	two := func(i int) int { return int(b[i]-'0')*10 + int(b[i+1]-'0') }
	year := two(0)*100 + two(2)
	month, day, hour, minute, sec := two(5), two(8), two(11), two(14), two(17)
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	nsec := 0
	if frac := b[base : len(b)-1]; len(frac) > 0 {
		// A period and one to nine digits; the nanoseconds are the
		// digits scaled to nine.
		if len(frac) < 2 || frac[0] != '.' {
			return time.Time{}, false
		}
		for _, c := range frac[1:] {
			if c-'0' > 9 {
				return time.Time{}, false
			}
			nsec = nsec*10 + int(c-'0')
		}
		for range 10 - len(frac) {
			nsec *= 10
		}
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC), true
}

// daysIn returns the number of days in month of year (proleptic
// Gregorian), as package time counts them.
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
