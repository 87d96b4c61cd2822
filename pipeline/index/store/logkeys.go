package store

// Log attribute keys, those of pipeline/index.
const (
	KeyComponent = "component" // subsystem: "index.store"
	KeyError     = "error"     // error text
	KeyState     = "state"     // state directory
)
