package alert

// Log attribute keys used by the alert package.
const (
	KeyComponent = "component"  // subsystem: "alert", "alert.webhook"
	KeyRule      = "rule"       // rule name
	KeyKey       = "key"        // the key a rule fired for
	KeyTime      = "time"       // observation time
	KeyLag       = "lag"        // how far an observation is behind the clock
	KeyEvicted   = "evicted"    // keys evicted
	KeyMaxKeys   = "max_keys"   // the key bound
	KeyEventID   = "event_id"   // an event's id
	KeyAttempt   = "attempt"    // delivery attempt number
	KeyStatus    = "status"     // HTTP status
	KeyError     = "error"      // error text
	KeyNextRetry = "next_retry" // wait before the next attempt
	KeyDropped   = "dropped"    // events dropped from a full queue so far
	KeyPending   = "pending"    // events waiting for delivery
)
