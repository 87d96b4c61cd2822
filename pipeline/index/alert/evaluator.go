package alert

import (
	"cmp"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"time"
)

// Defaults of [Config].
const (
	// DefaultIdleTTL is how long a session-scope or unpriced_model key is
	// kept without an observation.
	DefaultIdleTTL = 7 * 24 * time.Hour
	// DefaultMaxKeys bounds the keys of one rule.
	DefaultMaxKeys = 100_000
)

// Config configures an [Evaluator].
type Config struct {
	// Rules are the rules to evaluate (from [Parse] or [Load]). They are
	// checked as Parse checks them; an invalid rule fails [New].
	Rules []Rule
	// Now is the clock (default time.Now). It says where windows and
	// budget periods are; observation timestamps place data in them.
	Now func() time.Time
	// IdleTTL: a session-scope or unpriced_model key without an
	// observation for this long (by the clock) is forgotten at the next
	// [Evaluator.Advance] (default [DefaultIdleTTL]). Windowed keys are
	// forgotten once their window holds nothing.
	IdleTTL time.Duration
	// MaxKeys bounds the keys of one rule (default [DefaultMaxKeys]).
	// When a new key would pass it, idle keys are expired and, if that is
	// not enough, the tenth of the keys seen least recently is evicted
	// (counted in [Stats].Evicted and logged).
	MaxKeys int
	// MaxLag, when positive, keeps observations older than the clock by
	// more than MaxLag from firing: the key is marked fired, as it would
	// have been, but no event is returned (counted in [Stats].Suppressed).
	// Use it when rebuilding from the start of a stream, so that old
	// sessions do not fire today. Zero: every firing is returned, however
	// late (an indexer catching up after an outage reports what happened
	// while it was down).
	MaxLag time.Duration
	// OnSuppressed, when set, is given each firing MaxLag kept back, with
	// its Suppressed reason, so that what history would have fired can be
	// listed without being sent.
	OnSuppressed func(Event)
	// Logger receives evictions (Warn) and suppressed firings (Debug; nil:
	// discard).
	Logger *slog.Logger
}

// Validate checks the configuration and its rules.
func (c Config) Validate() error {
	if c.IdleTTL < 0 {
		return &ConfigError{Field: "idle_ttl", Value: c.IdleTTL, Err: ErrInvalidConfig}
	}
	if c.MaxKeys < 0 {
		return &ConfigError{Field: "max_keys", Value: c.MaxKeys, Err: ErrInvalidConfig}
	}
	if c.MaxLag < 0 {
		return &ConfigError{Field: "max_lag", Value: c.MaxLag, Err: ErrInvalidConfig}
	}
	_, err := checkRules(c.Rules)
	return err
}

// ConfigError names the configuration field that failed validation.
type ConfigError struct {
	Field string // configuration field, snake_case
	Value any    // the rejected value
	Err   error  // ErrInvalidConfig, possibly wrapped with a reason
}

// Error formats the error as "alert: invalid configuration: field=value".
func (e *ConfigError) Error() string { return fmt.Sprintf("%v: %s=%v", e.Err, e.Field, e.Value) }

// Unwrap returns the underlying error, which wraps [ErrInvalidConfig].
func (e *ConfigError) Unwrap() error { return e.Err }

// checkRules normalises a copy of rules and checks names are unique.
func checkRules(rules []Rule) ([]Rule, error) {
	out := make([]Rule, len(rules))
	seen := make(map[string]bool, len(rules))
	for i, r := range rules {
		if _, err := r.normalize(); err != nil {
			return nil, &RuleError{Line: r.Line, Rule: r.Name, Err: err}
		}
		if seen[r.Name] {
			return nil, &RuleError{Line: r.Line, Rule: r.Name, Err: ErrDuplicateName}
		}
		seen[r.Name] = true
		out[i] = r
	}
	return out, nil
}

// Stats counts what the evaluator did since it was made (not persisted).
type Stats struct {
	Observations uint64 // observations applied
	Replayed     uint64 // observations skipped as at or before the last applied (Seq, Part)
	NoKey        uint64 // rule applications skipped: the observation has no value for the scope
	Late         uint64 // rule applications whose timestamp is before the window or period
	Invalid      uint64 // rule applications skipped: a NaN or infinite delta
	Fired        uint64 // events returned
	Suppressed   uint64 // firings kept back by MaxLag
	Rearmed      uint64 // fired keys armed again
	Expired      uint64 // keys forgotten as idle or empty
	Evicted      uint64 // keys forgotten to stay under MaxKeys
	Keys         int    // keys held now, all rules together
}

// Evaluator evaluates rules against observations. It keeps, for each rule
// and key, the value the rule's metric needs and whether the key has fired.
// It is safe for concurrent use; it does no I/O.
//
// Feed it observations in stream order with [Evaluator.Observe], call
// [Evaluator.Advance] every few seconds while caught up with the stream (it
// slides windows to the clock, re-arms keys whose value fell and forgets
// empty and idle keys), swap
// rules with [Evaluator.Reload], and save [Evaluator.Snapshot] with the
// stream sequence it covers.
type Evaluator struct {
	now     func() time.Time
	idleTTL time.Duration
	maxKeys int
	maxLag  time.Duration
	onSupp  func(Event)
	log     *slog.Logger

	mu    sync.Mutex
	rules []*ruleState
	seq   uint64 // last applied observation
	part  int
	stats Stats
	kbuf  []byte // the key being looked up, reused: lookups do not allocate
}

// New returns an evaluator of cfg.Rules with empty state.
func New(cfg Config) (*Evaluator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rules, _ := checkRules(cfg.Rules)
	e := &Evaluator{
		now:     cfg.Now,
		idleTTL: cmp.Or(cfg.IdleTTL, DefaultIdleTTL),
		maxKeys: cmp.Or(cfg.MaxKeys, DefaultMaxKeys),
		maxLag:  cfg.MaxLag,
		onSupp:  cfg.OnSuppressed,
		log:     cfg.Logger,
	}
	if e.now == nil {
		e.now = time.Now
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	e.log = e.log.With(KeyComponent, "alert")
	for _, r := range rules {
		e.rules = append(e.rules, newRuleState(r))
	}
	return e, nil
}

// Rules returns the rules in force.
func (e *Evaluator) Rules() []Rule {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Rule, len(e.rules))
	for i, rs := range e.rules {
		out[i] = rs.rule
	}
	return out
}

// Applied returns the (Seq, Part) of the last observation applied, (0, 0)
// when none carried a Seq.
func (e *Evaluator) Applied() (seq uint64, part int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.seq, e.part
}

// Stats returns the evaluator's counters.
func (e *Evaluator) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.stats
	for _, rs := range e.rules {
		s.Keys += len(rs.keys)
	}
	return s
}

// Observe applies one observation to every rule and returns the events of
// the rules it made fire (nil when none did: the common case, which does
// not allocate). An observation at or before the last applied (Seq, Part)
// is skipped.
func (e *Evaluator) Observe(o Observation) []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	if o.Seq != 0 {
		if o.Seq < e.seq || o.Seq == e.seq && o.Part <= e.part {
			e.stats.Replayed++
			return nil
		}
		e.seq, e.part = o.Seq, o.Part
	}
	e.stats.Observations++
	now := e.now()
	ts := o.Time
	if ts.IsZero() || ts.After(now) {
		ts = now
	}
	var events []Event
	for _, rs := range e.rules {
		if ev, ok := e.apply(rs, &o, ts, now); ok {
			events = append(events, ev)
		}
	}
	return events
}

// apply applies o to one rule, and returns the event if the rule fired.
func (e *Evaluator) apply(rs *ruleState, o *Observation, ts, now time.Time) (Event, bool) {
	r := &rs.rule
	e.kbuf = o.appendKey(e.kbuf[:0], r.Scope)
	key := e.kbuf // a string of it only when it is stored or fires
	if len(key) == 0 {
		e.stats.NoKey++
		return Event{}, false
	}
	if r.Metric == MetricUnpricedModel {
		if !o.Unpriced {
			return Event{}, false
		}
		ks := e.keyState(rs, key, now)
		if ks.fired {
			return Event{}, false
		}
		ks.fired = true
		return e.fire(rs, string(key), ks, 1, o, ts, now, nil)
	}
	delta := o.value(r.Metric)
	if delta == 0 {
		return Event{}, false
	}
	if math.IsNaN(delta) || math.IsInf(delta, 0) {
		e.stats.Invalid++
		return Event{}, false
	}
	ks := e.keyState(rs, key, now)
	if !rs.add(ks, delta, ts.UnixNano()) {
		e.stats.Late++
	}
	v := rs.value(ks)
	switch {
	case !ks.fired && v.value > r.Above:
		ks.fired = true
		return e.fire(rs, string(key), ks, v.value, o, ts, now, &v)
	case ks.fired && rs.rearms(v.value):
		ks.fired = false
		e.stats.Rearmed++
	}
	return Event{}, false
}

// fire makes the event of a rule firing for key, unless MaxLag keeps it
// back.
func (e *Evaluator) fire(rs *ruleState, key string, ks *keyState, value float64, o *Observation, ts, now time.Time, v *reading) (Event, bool) {
	r := &rs.rule
	suppressed := e.maxLag > 0 && now.Sub(ts) > e.maxLag
	if suppressed {
		e.stats.Suppressed++
		e.log.Debug("alert: firing suppressed: observation older than max lag",
			KeyRule, r.Name, KeyKey, key, KeyTime, ts, KeyLag, now.Sub(ts))
		if e.onSupp == nil {
			return Event{}, false
		}
	} else {
		e.stats.Fired++
	}
	ev := Event{
		ID:          eventID(r.Name, key, o.Seq, o.Part, ts),
		Rule:        r.Name,
		Description: r.Description,
		Kind:        KindThreshold,
		Scope:       r.Scope,
		Metric:      r.Metric,
		Key:         key,
		Value:       value,
		Threshold:   r.Above,
		Window:      r.Window.Text,
		Time:        ts,
		FiredAt:     now,
		Host:        o.Host,
		Format:      o.Format,
		SessionID:   o.SessionID,
		Model:       o.Model,
		Seq:         o.Seq,
	}
	if r.Metric == MetricUnpricedModel {
		ev.Kind = KindUnpriced
	}
	if r.Metric == MetricProjectedCostUSD && v != nil {
		start, end := time.Unix(0, ks.start).In(r.Location), time.Unix(0, ks.end).In(r.Location)
		spent, burn := v.spent, v.burnPerHour
		ev.PeriodStart, ev.PeriodEnd, ev.SpentUSD, ev.BurnUSDPerHour = &start, &end, &spent, &burn
	}
	if suppressed {
		ev.Suppressed = fmt.Sprintf("caused by an entry of %s, %s before the clock: older than the max lag %s (history, not sent)",
			ts.UTC().Format(time.RFC3339), now.Sub(ts).Round(time.Second), e.maxLag)
		e.onSupp(ev)
		return Event{}, false
	}
	return ev, true
}

// keyState returns the state of key, made when new.
func (e *Evaluator) keyState(rs *ruleState, key []byte, now time.Time) *keyState {
	ks, ok := rs.keys[string(key)]
	if !ok {
		if len(rs.keys) >= e.maxKeys {
			e.makeRoom(rs, now)
		}
		ks = rs.newKey()
		rs.keys[string(key)] = ks
	}
	ks.seen = now.UnixNano()
	return ks
}

// makeRoom expires idle keys of a full rule and, if that is not enough,
// evicts the tenth seen least recently.
func (e *Evaluator) makeRoom(rs *ruleState, now time.Time) {
	e.sweep(rs, now)
	if len(rs.keys) < e.maxKeys {
		return
	}
	seen := make([]int64, 0, len(rs.keys))
	for _, ks := range rs.keys {
		seen = append(seen, ks.seen)
	}
	slices.Sort(seen)
	cut := seen[len(seen)/10]
	n := 0
	for k, ks := range rs.keys {
		if ks.seen <= cut {
			delete(rs.keys, k)
			n++
		}
	}
	e.stats.Evicted += uint64(n)
	e.log.Warn("alert: too many keys: evicted the least recently seen", KeyRule, rs.rule.Name,
		KeyEvicted, n, KeyMaxKeys, e.maxKeys)
}

// Advance moves every window and period to the clock's now: keys whose
// value fell below their rule's re-arm level are armed again, and keys that
// hold nothing (or, session and unpriced_model scope, were idle for
// IdleTTL) are forgotten. It never fires (values only fall with time). It
// costs a pass over every key. Call it every few seconds while the caller
// is caught up with the stream, not while applying a backlog: it would
// slide windows past observations still to come, which would then count
// as late.
func (e *Evaluator) Advance() {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	for _, rs := range e.rules {
		e.sweep(rs, now)
	}
}

// sweep re-arms and expires the keys of one rule.
func (e *Evaluator) sweep(rs *ruleState, now time.Time) {
	idle := now.Add(-e.idleTTL).UnixNano()
	for k, ks := range rs.keys {
		if !rs.rule.Scope.windowed() || rs.rule.Metric == MetricUnpricedModel {
			if ks.seen < idle {
				delete(rs.keys, k)
				e.stats.Expired++
			}
			continue
		}
		rs.moveTo(ks, now.UnixNano())
		v := rs.value(ks)
		empty := rs.empty(ks)
		if ks.fired && (empty || rs.rearms(v.value)) {
			ks.fired = false
			e.stats.Rearmed++
		}
		if empty && !ks.fired {
			delete(rs.keys, k)
			e.stats.Expired++
		}
	}
}

// Reload swaps the rule set (see [Config.Rules]); on an invalid set it
// keeps the rules in force and returns the error. A rule kept by name with
// the same scope, metric, window, rate window and time zone keeps its
// state; when its threshold changed, every key is evaluated against the new
// one at once (armed keys above it fire, and their events are returned;
// fired keys of windowed scopes below it re-arm). A rule whose shape changed
// starts with empty state, as a new rule does; the state of removed rules is
// dropped.
func (e *Evaluator) Reload(rules []Rule) ([]Event, error) {
	checked, err := checkRules(rules)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	old := make(map[string]*ruleState, len(e.rules))
	for _, rs := range e.rules {
		old[rs.rule.Name] = rs
	}
	now := e.now()
	var events []Event
	next := make([]*ruleState, 0, len(checked))
	for _, r := range checked {
		prev, ok := old[r.Name]
		if !ok || prev.rule.shape() != r.shape() {
			next = append(next, newRuleState(r))
			continue
		}
		changed := prev.rule.Above != r.Above || prev.rule.rearm() != r.rearm()
		prev.rule = r
		next = append(next, prev)
		if changed {
			events = append(events, e.reevaluate(prev, now)...)
		}
	}
	e.rules = next
	return events, nil
}

// ReloadFile loads the rules file at path and swaps it in with
// [Evaluator.Reload]. On a file that does not read or parse, the rules in
// force stay and the error (with file:line) is returned.
func (e *Evaluator) ReloadFile(path string) ([]Event, error) {
	rules, err := Load(path)
	if err != nil {
		return nil, err
	}
	return e.Reload(rules)
}

// reevaluate checks every key of a rule against its threshold, after the
// threshold changed.
func (e *Evaluator) reevaluate(rs *ruleState, now time.Time) []Event {
	r := &rs.rule
	if r.Metric == MetricUnpricedModel {
		return nil
	}
	var events []Event
	keys := make([]string, 0, len(rs.keys))
	for k := range rs.keys {
		keys = append(keys, k)
	}
	slices.Sort(keys) // events in a stable order
	for _, k := range keys {
		ks := rs.keys[k]
		v := rs.value(ks)
		switch {
		case !ks.fired && v.value > r.Above:
			ks.fired = true
			o := Observation{Seq: e.seq, Part: e.part}
			if r.Scope == ScopeSession {
				// The key names the session (a key of a snapshot made
				// before keys did is an id alone, and names it so).
				if f, h, id, err := ParseSessionKey(k); err == nil {
					o.Format, o.Host, o.SessionID = f, h, id
				} else {
					o.SessionID = k
				}
			}
			if ev, ok := e.fire(rs, k, ks, v.value, &o, now, now, &v); ok {
				events = append(events, ev)
			}
		case ks.fired && rs.rearms(v.value):
			ks.fired = false
			e.stats.Rearmed++
		}
	}
	return events
}
