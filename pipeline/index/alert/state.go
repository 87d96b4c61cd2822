package alert

import (
	"math"
	"time"
)

// mode is how a rule keeps its value.
type mode uint8

const (
	modeTotal     mode = iota // session scope: running total
	modeSliding               // sliding window of buckets (sums, tokens_per_minute)
	modeCalendar              // sum over the current calendar period
	modeProjected             // period spend plus a sliding burn-rate window
	modeUnpriced              // a fired flag per model
)

// ruleState is a rule with the state of its keys.
type ruleState struct {
	rule  Rule
	mode  mode
	width int64 // ring bucket width, ns
	keys  map[string]*keyState
}

// keyState is what a rule keeps for one key. Its window or period is
// positioned at at: the latest timestamp observed for the key, or the
// clock of the last Advance.
type keyState struct {
	fired      bool
	seen       int64   // clock of the last observation, Unix ns (for IdleTTL)
	at         int64   // Unix ns
	total      float64 // running total (session), or the sum of the period [start, end)
	start, end int64   // calendar and projected: the period at at, Unix ns
	ring       *ring   // sliding window, or burn-rate window
}

// reading is a rule's value for a key, with what a projection used.
type reading struct {
	value       float64
	spent       float64
	burnPerHour float64
}

func newRuleState(r Rule) *ruleState {
	rs := &ruleState{rule: r, keys: make(map[string]*keyState)}
	switch {
	case r.Metric == MetricUnpricedModel:
		rs.mode = modeUnpriced
	case r.Metric == MetricProjectedCostUSD:
		rs.mode = modeProjected
		rs.width = int64(r.RateWindow / Buckets)
	case r.Window.Period != "":
		rs.mode = modeCalendar
	case r.Scope == ScopeSession && r.Metric != MetricTokensPerMinute:
		rs.mode = modeTotal
	default:
		rs.mode = modeSliding
		rs.width = int64(r.Window.Size / Buckets)
	}
	return rs
}

func (rs *ruleState) newKey() *keyState {
	ks := &keyState{}
	if rs.mode == modeSliding || rs.mode == modeProjected {
		ks.ring = &ring{}
	}
	return ks
}

// moveTo moves a key's window and period forward to t (Unix ns); never
// back.
func (rs *ruleState) moveTo(ks *keyState, t int64) {
	if t <= ks.at {
		return
	}
	ks.at = t
	if ks.ring != nil {
		ks.ring.slide(t / rs.width)
	}
	if (rs.mode == modeCalendar || rs.mode == modeProjected) && t >= ks.end {
		start := periodStart(rs.rule.Window, rs.rule.Location, time.Unix(0, t))
		ks.start, ks.end = start.UnixNano(), periodEnd(rs.rule.Window, start).UnixNano()
		ks.total = 0
	}
}

// add adds delta, observed at ts (Unix ns), to a key, moving its window
// to ts first when ts is its latest. It reports false when ts is before
// the key's window or period (nothing added).
func (rs *ruleState) add(ks *keyState, delta float64, ts int64) bool {
	rs.moveTo(ks, ts)
	switch rs.mode {
	case modeTotal:
		ks.total += delta
		return true
	case modeSliding:
		return ks.ring.add(ts/rs.width, delta)
	case modeCalendar:
		if ts < ks.start {
			return false
		}
		ks.total += delta
		return true
	case modeProjected:
		inPeriod := ts >= ks.start
		if inPeriod {
			ks.total += delta
		}
		inRate := ks.ring.add(ts/rs.width, delta)
		return inPeriod || inRate
	}
	return false
}

// value returns a key's value at its position.
func (rs *ruleState) value(ks *keyState) reading {
	switch rs.mode {
	case modeTotal, modeCalendar:
		return reading{value: ks.total}
	case modeSliding:
		if rs.rule.Metric == MetricTokensPerMinute {
			return reading{value: ks.ring.sum / rs.rule.Window.Size.Minutes()}
		}
		return reading{value: ks.ring.sum}
	case modeProjected:
		rate := math.Max(ks.ring.sum, 0) / float64(rs.rule.RateWindow) // $/ns
		return reading{
			value:       ks.total + rate*float64(ks.end-ks.at),
			spent:       ks.total,
			burnPerHour: rate * float64(time.Hour),
		}
	}
	return reading{}
}

// rearms reports whether a fired key with value v is armed again.
func (rs *ruleState) rearms(v float64) bool {
	return rs.rule.Scope.windowed() && rs.mode != modeUnpriced && v < rs.rule.rearm()
}

// empty reports whether a key of a windowed rule holds nothing.
func (rs *ruleState) empty(ks *keyState) bool {
	switch rs.mode {
	case modeSliding:
		return ks.ring.empty()
	case modeCalendar:
		return math.Abs(ks.total) <= 1e-9
	case modeProjected:
		return math.Abs(ks.total) <= 1e-9 && ks.ring.empty()
	}
	return false
}
