package bus

import (
	"log/slog"
	"sync"
	"time"
)

// Log attribute keys used by the bus package.
const (
	KeyComponent  = "component"   // subsystem name: "bus.conn", "bus.publisher", "bus.embedded"
	KeyURL        = "url"         // server URL
	KeyStream     = "stream"      // JetStream stream name
	KeySubject    = "subject"     // message subject
	KeyMsgID      = "msg_id"      // Nats-Msg-Id of a message
	KeyAttempt    = "attempt"     // retry attempt number
	KeyPending    = "pending"     // messages not yet acknowledged
	KeyOutage     = "outage"      // how long publishing was failing
	KeySuppressed = "suppressed"  // events not logged since the last line
	KeyError      = "error"       // error text
	KeyNextRetry  = "next_retry"  // wait before the next attempt
	KeyServer     = "server_name" // NATS server name
	KeyConsumer   = "consumer"    // durable consumer name
	KeySeq        = "seq"         // stream sequence
	KeyLease      = "lease"       // lease role
	KeyHolder     = "holder"      // lease holder
)

// discard returns l, or a logger that drops everything when l is nil.
func discard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// rateLimiter lets one event through per interval and counts the rest, so
// that a flapping connection or an outage logs a line every few seconds,
// not one per attempt.
type rateLimiter struct {
	interval time.Duration

	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// allow reports whether an event may be logged now, and how many were
// suppressed since the last one that was.
func (r *rateLimiter) allow(now time.Time) (ok bool, suppressed int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.last.IsZero() && now.Sub(r.last) < r.interval {
		r.suppressed++
		return false, 0
	}
	r.last = now
	suppressed, r.suppressed = r.suppressed, 0
	return true, suppressed
}
