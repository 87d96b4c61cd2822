package alert

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Scope says what a rule keeps one value for: each distinct value of the
// scope (a session, a host, …) is a key with its own value and its own
// fired/armed state.
type Scope string

// The scopes. A label scope is written "label:<name>" (e.g. "label:team": keyed by the value of the entry label team).
const (
	ScopeSession Scope = "session" // key: SessionKey (format/host/id); running totals, fires once per session
	ScopeHost    Scope = "host"    // key: the host the entry was read on
	ScopeProject Scope = "project" // key: the session's working directory (cwd)
	ScopeModel   Scope = "model"   // key: the model of the API call
	ScopeFormat  Scope = "format"  // key: the source format, e.g. "claude-code"
	ScopeFleet   Scope = "fleet"   // one key, "*": everything
)

const labelPrefix = "label:"

// Label returns the label name of a label scope, and false for the other
// scopes.
func (s Scope) Label() (string, bool) {
	name, ok := strings.CutPrefix(string(s), labelPrefix)
	return name, ok
}

// windowed reports whether the scope's values are kept over a window.
func (s Scope) windowed() bool { return s != ScopeSession }

func (s Scope) valid() bool {
	switch s {
	case ScopeSession, ScopeHost, ScopeProject, ScopeModel, ScopeFormat, ScopeFleet:
		return true
	}
	name, ok := s.Label()
	return ok && name != "" && !strings.ContainsAny(name, " \t\r\n")
}

// Metric is what a rule measures.
type Metric string

// The metrics. Token counts are those of DESIGN.md: total is input + output
// + cache read + cache write.
const (
	MetricTotalTokens      Metric = "total_tokens"
	MetricInputTokens      Metric = "input_tokens"
	MetricOutputTokens     Metric = "output_tokens"
	MetricCacheReadTokens  Metric = "cache_read_tokens"
	MetricCacheWriteTokens Metric = "cache_write_tokens"
	MetricCostUSD          Metric = "cost_usd"
	// MetricTokensPerMinute is the total tokens in the rule's window
	// divided by the window's length in minutes.
	MetricTokensPerMinute Metric = "tokens_per_minute"
	// MetricProjectedCostUSD is the spend of the current budget period
	// extrapolated at the current burn rate to the period's end (see the
	// package documentation).
	MetricProjectedCostUSD Metric = "projected_cost_usd"
	// MetricUnpricedModel fires once per model that an API call used and
	// that has no price; it has no threshold.
	MetricUnpricedModel Metric = "unpriced_model"
)

var metrics = []Metric{
	MetricTotalTokens, MetricInputTokens, MetricOutputTokens, MetricCacheReadTokens,
	MetricCacheWriteTokens, MetricCostUSD, MetricTokensPerMinute, MetricProjectedCostUSD,
	MetricUnpricedModel,
}

func (m Metric) valid() bool {
	for _, v := range metrics {
		if m == v {
			return true
		}
	}
	return false
}

// Period is a calendar budget period.
type Period string

// The calendar periods: they start at midnight in the rule's time zone;
// weeks start on Monday.
const (
	PeriodDay   Period = "day"
	PeriodWeek  Period = "week"
	PeriodMonth Period = "month"
)

// Window is a rule's window as written: either a duration (Size) or a
// calendar period (Period). What it means depends on the metric: see the
// package documentation.
type Window struct {
	Text   string        // as written in the rules file, e.g. "1h" or "day"
	Size   time.Duration // duration windows; 0 for a calendar period
	Period Period        // calendar windows; "" for a duration
}

// IsZero reports whether no window was given.
func (w Window) IsZero() bool { return w.Size == 0 && w.Period == "" }

// ParseWindow reads a window: a Go duration ("90m", "1h"), a number of
// days ("7d"), or a calendar period ("day", "week", "month").
func ParseWindow(s string) (Window, error) {
	switch p := Period(s); p {
	case PeriodDay, PeriodWeek, PeriodMonth:
		return Window{Text: s, Period: p}, nil
	}
	d, err := parseDuration("window", s)
	if err != nil {
		return Window{}, err
	}
	return Window{Text: s, Size: d}, nil
}

// parseDuration is time.ParseDuration plus whole days ("7d").
func parseDuration(field, s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days <= 0 || days > 366 {
			return 0, fmt.Errorf("%w: %s %q: want %s", ErrInvalidValue, field, s, durationHint(field))
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%w: %s %q: want %s", ErrInvalidValue, field, s, durationHint(field))
	}
	return d, nil
}

// Defaults and limits of rules.
const (
	// DefaultRateWindow is the burn-rate window of projected_cost_usd.
	DefaultRateWindow = time.Hour
	// DefaultTokensPerMinuteWindow is the window of tokens_per_minute
	// when the rule gives none.
	DefaultTokensPerMinuteWindow = 5 * time.Minute
	// MinWindow is the shortest sliding window: a sliding window is kept
	// in [Buckets] buckets, so its precision is window/Buckets.
	MinWindow = time.Minute
	// Buckets is the number of buckets of every sliding window.
	Buckets = 60
)

// Rule is one alert rule. [Parse] reads rules from YAML; rules built in
// code are checked by [New] and [Evaluator.Reload] the same way.
type Rule struct {
	Name        string // subject token and id: letters, digits, '-', '_'
	Description string // free text, shown in the event and the webhook message
	Scope       Scope
	Metric      Metric
	// Above is the threshold: the rule fires when the value is strictly
	// greater. Not used by unpriced_model.
	Above float64
	// RearmBelow re-arms a fired key of a windowed scope once its value is
	// strictly below it (hysteresis). Zero means Above. Session-scope keys
	// never re-arm.
	RearmBelow float64
	Window     Window
	// RateWindow is the burn-rate window of projected_cost_usd
	// (default [DefaultRateWindow]).
	RateWindow time.Duration
	// Location is the time zone of calendar periods (default UTC; nil for
	// rules without a period).
	Location *time.Location
	// Line is the line of the rule in its file (0 for rules built in code).
	Line int
}

// rearm returns the value below which a fired key re-arms.
func (r *Rule) rearm() float64 {
	if r.RearmBelow > 0 {
		return r.RearmBelow
	}
	return r.Above
}

// normalize fills defaults and checks the rule. It returns the name of the
// offending field with the error, so that Parse can point at its line.
func (r *Rule) normalize() (field string, err error) {
	if r.Name == "" {
		return "name", fmt.Errorf("%w: name", ErrMissingField)
	}
	if !validName(r.Name) {
		return "name", fmt.Errorf("%w: %q: use 1 to 64 letters, digits, '-' and '_' (it is a subject token)", ErrInvalidName, r.Name)
	}
	if r.Metric == "" {
		return "metric", fmt.Errorf("%w: metric", ErrMissingField)
	}
	if !r.Metric.valid() {
		return "metric", fmt.Errorf("%w: %q: want one of %s", ErrUnknownMetric, r.Metric, metricList())
	}
	if r.Metric == MetricUnpricedModel {
		return r.normalizeUnpriced()
	}
	if r.Scope == "" {
		return "scope", fmt.Errorf("%w: scope", ErrMissingField)
	}
	if !r.Scope.valid() {
		return "scope", fmt.Errorf("%w: %q: want session, host, project, model, format, fleet or label:<name>", ErrUnknownScope, r.Scope)
	}
	if math.IsNaN(r.Above) || math.IsInf(r.Above, 0) || r.Above < 0 {
		return "above", fmt.Errorf("%w: above %v: want a number >= 0", ErrInvalidValue, r.Above)
	}
	if math.IsNaN(r.RearmBelow) || r.RearmBelow < 0 || r.RearmBelow > r.Above {
		return "rearm_below", fmt.Errorf("%w: rearm_below %v: want a number between 0 and above (%v)", ErrInvalidValue, r.RearmBelow, r.Above)
	}
	if r.RearmBelow != 0 && r.Scope == ScopeSession {
		return "rearm_below", fmt.Errorf("%w: rearm_below: session-scope rules fire once per session and never re-arm", ErrInvalidValue)
	}
	if r.RateWindow != 0 && r.Metric != MetricProjectedCostUSD {
		return "rate_window", fmt.Errorf("%w: rate_window is only for projected_cost_usd", ErrWindow)
	}
	if r.RateWindow < 0 || r.RateWindow != 0 && r.RateWindow < MinWindow {
		return "rate_window", fmt.Errorf("%w: rate_window %v: want at least %v", ErrWindow, r.RateWindow, MinWindow)
	}
	w := r.Window
	switch {
	case r.Metric == MetricTokensPerMinute:
		if w.Period != "" {
			return "window", fmt.Errorf("%w: %q: tokens_per_minute needs a duration (the rate's window), not a calendar period", ErrWindow, w.Text)
		}
		if w.IsZero() {
			r.Window = Window{Text: DefaultTokensPerMinuteWindow.String(), Size: DefaultTokensPerMinuteWindow}
		}
	case r.Metric == MetricProjectedCostUSD:
		if r.Scope == ScopeSession {
			return "scope", fmt.Errorf("%w: projected_cost_usd needs a budget period; session scope has none", ErrWindow)
		}
		if w.IsZero() {
			return "window", fmt.Errorf("%w: window (the budget period: day, week, month, or a duration dividing 24h)", ErrMissingField)
		}
		if w.Size != 0 && (w.Size > 24*time.Hour || (24*time.Hour)%w.Size != 0) {
			return "window", fmt.Errorf("%w: %q: a projection period is day, week, month, or a duration dividing 24h (1h, 6h, 24h …)", ErrWindow, w.Text)
		}
		if r.RateWindow == 0 {
			r.RateWindow = DefaultRateWindow
		}
	case r.Scope == ScopeSession:
		if !w.IsZero() {
			return "window", fmt.Errorf("%w: a session-scope %s is the session's running total; a window means nothing there", ErrWindow, r.Metric)
		}
	default:
		if w.IsZero() {
			return "window", fmt.Errorf("%w: window (scope %s keeps %s over a window: e.g. 1h, 24h, day, month)", ErrMissingField, r.Scope, r.Metric)
		}
	}
	if r.Window.Size < 0 || r.Window.Size != 0 && r.Window.Size < MinWindow {
		return "window", fmt.Errorf("%w: %q: want at least %v", ErrWindow, r.Window.Text, MinWindow)
	}
	if r.Location != nil && !r.calendar() {
		return "timezone", fmt.Errorf("%w: timezone is only for calendar periods (day, week, month, or a projection period)", ErrInvalidValue)
	}
	if r.Location == nil && r.calendar() {
		r.Location = time.UTC
	}
	return "", nil
}

func (r *Rule) normalizeUnpriced() (string, error) {
	switch {
	case r.Scope != "" && r.Scope != ScopeModel:
		return "scope", fmt.Errorf("%w: unpriced_model fires once per model: scope is model (or omitted)", ErrUnknownScope)
	case r.Above != 0:
		return "above", fmt.Errorf("%w: unpriced_model has no threshold", ErrInvalidValue)
	case r.RearmBelow != 0:
		return "rearm_below", fmt.Errorf("%w: unpriced_model never re-arms", ErrInvalidValue)
	case !r.Window.IsZero():
		return "window", fmt.Errorf("%w: unpriced_model has no window", ErrWindow)
	case r.RateWindow != 0:
		return "rate_window", fmt.Errorf("%w: rate_window is only for projected_cost_usd", ErrWindow)
	case r.Location != nil:
		return "timezone", fmt.Errorf("%w: unpriced_model has no period", ErrInvalidValue)
	}
	r.Scope = ScopeModel
	return "", nil
}

// calendar reports whether the rule keeps a value per fixed period (a
// calendar period, or any projection period) rather than a sliding window.
func (r *Rule) calendar() bool {
	return r.Window.Period != "" || r.Metric == MetricProjectedCostUSD
}

// shape is what a rule's state depends on: a rule kept by name keeps its
// state across a reload or restore only when its shape is unchanged.
func (r *Rule) shape() string {
	loc := ""
	if r.Location != nil {
		loc = r.Location.String()
	}
	return fmt.Sprintf("%s|%s|%s/%d|%d|%s", r.Scope, r.Metric, r.Window.Period, r.Window.Size, r.RateWindow, loc)
}

func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func metricList() string {
	var b strings.Builder
	for i, m := range metrics {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(m))
	}
	return b.String()
}

func durationHint(field string) string {
	if field == "window" {
		return "a duration such as 1h, 7d, or day, week, month"
	}
	return "a duration such as 30m, 1h"
}
