package index

// Log attribute keys used by the index package (the convention of every
// sessionpipe package: snake_case, "error" for the error).
const (
	KeyComponent = "component" // subsystem: "index", "index.api", "index.store"
	KeyError     = "error"     // error text
	KeyState     = "state"     // state directory
	KeySeq       = "seq"       // stream sequence
	KeyStream    = "stream"    // stream identity
	KeyAlert     = "alert"     // an alert event
)
