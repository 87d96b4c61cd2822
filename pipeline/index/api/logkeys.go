package api

import "log/slog"

// Log attribute keys, those of pipeline/index.
const (
	KeyComponent = "component" // subsystem: "index.api"
	KeyError     = "error"     // error text
)

func discard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
