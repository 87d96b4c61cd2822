package alert

import (
	"math"
	"time"
)

// ring is a sliding window of sums kept in [Buckets] buckets of equal
// width. Bucket b holds what happened in [b*width, (b+1)*width) (Unix
// nanoseconds). The window at a bucket head covers the buckets head-59 …
// head, so it spans between 59/60 of the window and all of it: data leaves
// the window in steps of one bucket.
type ring struct {
	head int64 // newest bucket
	sum  float64
	sums [Buckets]float64
}

// slide moves the window's head to bucket b, emptying the buckets it
// passes. A b at or before the head changes nothing.
func (r *ring) slide(b int64) {
	if b <= r.head {
		return
	}
	if b-r.head >= Buckets {
		clear(r.sums[:])
	} else {
		for i := r.head + 1; i <= b; i++ {
			r.sums[mod(i)] = 0
		}
	}
	r.head = b
	var s float64
	for _, v := range r.sums {
		s += v
	}
	r.sum = s
}

// add adds v to bucket b, which must not be after the head (slide first).
// It reports false, and adds nothing, when b has left the window.
func (r *ring) add(b int64, v float64) bool {
	if b <= r.head-Buckets {
		return false
	}
	r.sums[mod(b)] += v
	r.sum += v
	return true
}

// empty reports whether the window holds no data (sums that corrections
// brought back to zero, give or take rounding, count as none).
func (r *ring) empty() bool {
	for _, v := range r.sums {
		if math.Abs(v) > 1e-9 {
			return false
		}
	}
	return true
}

// periodStart returns the start of the budget period holding t: midnight
// of its day, of the Monday of its week, or of the first of its month in
// loc; or, for a duration period (one dividing 24h), the last multiple of
// size since midnight.
func periodStart(w Window, loc *time.Location, t time.Time) time.Time {
	t = t.In(loc)
	y, m, d := t.Date()
	midnight := time.Date(y, m, d, 0, 0, 0, 0, loc)
	switch w.Period {
	case PeriodWeek:
		return midnight.AddDate(0, 0, -((int(t.Weekday()) + 6) % 7))
	case PeriodMonth:
		return time.Date(y, m, 1, 0, 0, 0, 0, loc)
	case PeriodDay:
		return midnight
	}
	return midnight.Add(t.Sub(midnight) / w.Size * w.Size)
}

// periodEnd returns the end of the period that starts at start.
func periodEnd(w Window, start time.Time) time.Time {
	switch w.Period {
	case PeriodWeek:
		return start.AddDate(0, 0, 7)
	case PeriodMonth:
		return start.AddDate(0, 1, 0)
	case PeriodDay:
		return start.AddDate(0, 0, 1)
	}
	end := start.Add(w.Size)
	y, m, d := start.Date()
	if next := time.Date(y, m, d+1, 0, 0, 0, 0, start.Location()); end.After(next) {
		end = next // a short day (DST) ends its last period early
	}
	return end
}

// mod returns the slot of bucket b in a ring.
func mod(b int64) int {
	return int((b%Buckets + Buckets) % Buckets)
}
