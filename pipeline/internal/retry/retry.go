// Package retry spaces the attempts of a failing task: the one
// exponential backoff of the bus's reconnects and handler retries, the
// tailer's periodic saves and the alert webhook. It does not sleep or
// count attempts; callers do.
package retry

import (
	"math/rand/v2"
	"time"
)

// Delay returns the wait before attempt n (1-based) of a failing task:
// first, doubled n-1 times, at most limit. A non-positive first is
// returned as it is (capped), never doubled.
func Delay(n int, first, limit time.Duration) time.Duration {
	d := first
	for i := 1; i < n && d > 0 && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// Jitter returns d moved by a random amount of up to 20% either way, so
// that a fleet of processes failing together does not retry in lockstep.
func Jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}
