package alert

import (
	"fmt"
	"strings"
	"time"

	"github.com/sessionpipe/sessionpipe/schema"
)

// Observation is what one counted API call, or one correction of it, adds
// to the numbers the rules watch. The indexer makes one per usage it
// counts; when a usage grows (a streamed response) or moves to another
// session (first-writer attribution), it makes corrections: an observation
// with the difference, whose deltas may be negative, or one removing the
// usage from the old session and one adding it to the new.
type Observation struct {
	// Seq and Part identify the observation in the stream: Seq is the
	// stream sequence of the entry that caused it and Part tells apart the
	// observations of one entry (0, 1, …). Observations must be given in
	// (Seq, Part) order; one at or before the last applied is a replay and
	// is skipped, so a batch replayed after a restart changes nothing.
	// Seq 0 turns this off for the observation.
	Seq  uint64
	Part int

	// Time is the entry's timestamp: it places the observation in windows
	// and periods, and moves its keys' windows forward (see "Time" in the
	// package documentation). A zero time, or one later than the
	// evaluator's clock, counts as the clock's now.
	Time time.Time

	// Format, Host and SessionID identify the session (ids are unique
	// only within an agent, and within a host for some).
	SessionID string
	Host      string
	Project   string // the session's working directory (cwd)
	Model     string
	Format    schema.Format
	Labels    map[string]string // entry labels, for label:<name> scopes

	// Tokens holds the token deltas by kind (total = input + output +
	// cache read + cache write); CostUSD the cost delta of priced calls.
	Tokens  schema.Usage
	CostUSD float64
	// Unpriced says the call's model has no price: its cost is not in
	// CostUSD, and unpriced_model rules fire for Model.
	Unpriced bool
}

// value returns the observation's delta of a metric.
func (o *Observation) value(m Metric) float64 {
	switch m {
	case MetricInputTokens:
		return float64(o.Tokens.Input)
	case MetricOutputTokens:
		return float64(o.Tokens.Output)
	case MetricCacheReadTokens:
		return float64(o.Tokens.CacheRead)
	case MetricCacheWriteTokens:
		return float64(o.Tokens.CacheWrite)
	case MetricCostUSD, MetricProjectedCostUSD:
		return o.CostUSD
	case MetricTotalTokens, MetricTokensPerMinute:
		return float64(o.Tokens.Total())
	}
	return 0
}

// FleetKey is the one key of fleet-scope rules.
const FleetKey = "*"

// appendKey appends the observation's key in a scope to b; nothing when
// it has none (an entry without a model, or without the label).
func (o *Observation) appendKey(b []byte, s Scope) []byte {
	switch s {
	case ScopeSession:
		if o.SessionID == "" {
			return b
		}
		return appendSessionKey(b, o.Format, o.Host, o.SessionID)
	case ScopeHost:
		return append(b, o.Host...)
	case ScopeProject:
		return append(b, o.Project...)
	case ScopeModel:
		return append(b, o.Model...)
	case ScopeFormat:
		return append(b, o.Format...)
	case ScopeFleet:
		return append(b, FleetKey...)
	}
	if name, ok := s.Label(); ok {
		return append(b, o.Labels[name]...)
	}
	return b
}

// SessionKey is the key of a session in session-scope rules (Event.Key):
// format "/" host "/" id, with '%' and '/' of the host escaped as %25 and
// %2F, so that no two sessions share a key (a format holds no '/', and the
// id is the rest, '/' included). Two agents, or two hosts, may each have a
// session "session-alpha": they are two keys.
func SessionKey(format schema.Format, host, id string) string {
	return string(appendSessionKey(nil, format, host, id))
}

func appendSessionKey(b []byte, format schema.Format, host, id string) []byte {
	b = append(b, format...)
	b = append(b, '/')
	for i := 0; i < len(host); i++ {
		switch host[i] {
		case '%':
			b = append(b, "%25"...)
		case '/':
			b = append(b, "%2F"...)
		default:
			b = append(b, host[i])
		}
	}
	b = append(b, '/')
	return append(b, id...)
}

// ParseSessionKey reads a [SessionKey].
func ParseSessionKey(k string) (format schema.Format, host, id string, err error) {
	f, rest, ok1 := strings.Cut(k, "/")
	h, id, ok2 := strings.Cut(rest, "/")
	if !ok1 || !ok2 || f == "" {
		return "", "", "", fmt.Errorf("alert: session key %q: want format/host/id", k)
	}
	var b strings.Builder
	for i := 0; i < len(h); i++ {
		switch {
		case h[i] != '%':
			b.WriteByte(h[i])
			continue
		case strings.HasPrefix(h[i:], "%25"):
			b.WriteByte('%')
		case strings.HasPrefix(h[i:], "%2F"):
			b.WriteByte('/')
		default:
			return "", "", "", fmt.Errorf("alert: session key %q: bad escape in the host", k)
		}
		i += 2
	}
	return schema.Format(f), b.String(), id, nil
}
