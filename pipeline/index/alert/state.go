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

	// The current period of calendar and projected rules, the same for
	// every key: [curStart, curEnd) in Unix ns.
	curStart, curEnd int64
}

// keyState is what a rule keeps for one key.
type keyState struct {
	fired bool
	seen  int64   // clock of the last observation, Unix ns
	total float64 // running total (session), or the sum of the period starting at start
	start int64   // period of total, Unix ns
	ring  *ring   // sliding window, or burn-rate window
}

// reading is a rule's value for a key, with what a projection used.
type reading struct {
	value       float64
	start, end  int64 // projected: the period
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

// period moves the rule's current period to the one holding now.
func (rs *ruleState) period(now time.Time) {
	n := now.UnixNano()
	if rs.curEnd != 0 && rs.curStart <= n && n < rs.curEnd {
		return
	}
	start := periodStart(rs.rule.Window, rs.rule.Location, now)
	rs.curStart, rs.curEnd = start.UnixNano(), periodEnd(rs.rule.Window, start).UnixNano()
}

// roll moves a key's period sum to the current period.
func (rs *ruleState) roll(ks *keyState, now time.Time) {
	rs.period(now)
	if ks.start != rs.curStart {
		ks.total, ks.start = 0, rs.curStart
	}
}

// add adds delta, observed at ts, to a key. It reports false when ts is
// outside the window or period (nothing added).
func (rs *ruleState) add(ks *keyState, delta float64, ts, now time.Time) bool {
	switch rs.mode {
	case modeTotal:
		ks.total += delta
		return true
	case modeSliding:
		ks.ring.slide(now.UnixNano() / rs.width)
		return ks.ring.add(ts.UnixNano()/rs.width, delta)
	case modeCalendar:
		rs.roll(ks, now)
		if ts.UnixNano() < ks.start {
			return false
		}
		ks.total += delta
		return true
	case modeProjected:
		rs.roll(ks, now)
		inPeriod := ts.UnixNano() >= ks.start
		if inPeriod {
			ks.total += delta
		}
		ks.ring.slide(now.UnixNano() / rs.width)
		inRate := ks.ring.add(ts.UnixNano()/rs.width, delta)
		return inPeriod || inRate
	}
	return false
}

// value returns a key's value at now.
func (rs *ruleState) value(ks *keyState, now time.Time) reading {
	switch rs.mode {
	case modeTotal:
		return reading{value: ks.total}
	case modeSliding:
		ks.ring.slide(now.UnixNano() / rs.width)
		if rs.rule.Metric == MetricTokensPerMinute {
			return reading{value: ks.ring.sum / rs.rule.Window.Size.Minutes()}
		}
		return reading{value: ks.ring.sum}
	case modeCalendar:
		rs.roll(ks, now)
		return reading{value: ks.total}
	case modeProjected:
		rs.roll(ks, now)
		ks.ring.slide(now.UnixNano() / rs.width)
		rate := math.Max(ks.ring.sum, 0) / float64(rs.rule.RateWindow) // $/ns
		left := float64(rs.curEnd - now.UnixNano())
		return reading{
			value:       ks.total + rate*left,
			start:       rs.curStart,
			end:         rs.curEnd,
			spent:       ks.total,
			burnPerHour: rate * float64(time.Hour),
		}
	}
	return reading{}
}

// rearms reports whether a fired key with value v is armed again.
func (rs *ruleState) rearms(ks *keyState, v float64) bool {
	return rs.rule.Scope.windowed() && rs.mode != modeUnpriced && v < rs.rule.rearm()
}

// empty reports whether a key of a windowed rule holds nothing at the
// time of the last value call.
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
