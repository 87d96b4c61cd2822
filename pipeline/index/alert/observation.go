package alert

import (
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

// key returns the observation's key in a scope, "" when it has none (an
// entry without a model, or without the label).
func (o *Observation) key(s Scope) string {
	switch s {
	case ScopeSession:
		return o.SessionID
	case ScopeHost:
		return o.Host
	case ScopeProject:
		return o.Project
	case ScopeModel:
		return o.Model
	case ScopeFormat:
		return string(o.Format)
	case ScopeFleet:
		return FleetKey
	}
	if name, ok := s.Label(); ok {
		return o.Labels[name]
	}
	return ""
}
