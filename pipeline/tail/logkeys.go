package tail

// Log attribute keys used by the tail package (the convention of every
// sessionpipe package: snake_case, "error" for the error).
const (
	KeyComponent = "component" // subsystem: "tail"
	KeyError     = "error"     // error text
	KeyFile      = "file"      // a followed file's path
	KeyWatch     = "watch"     // a watch as given
)
