// Package report groups counted API calls by calendar period (day, week,
// month) and into the five-hour usage blocks Claude Code's limits count:
// the reports `sessionpipe daily|weekly|monthly|blocks` print.
//
// It works on the calls the counting rules chose ([index.UsageChange], as
// an [index.Aggregator] reports them): each API call once, in the
// occurrence that counts, so a report's totals are the totals of
// `sessionpipe sessions` over the same files. Costs are summed in integer
// nano-dollars, as the aggregates are.
package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Call is one counted API call.
type Call struct {
	TS        time.Time
	Format    schema.Format
	Host      string
	SessionID string
	Project   string
	Model     string
	Labels    map[string]string
	Tokens    schema.Usage
	CostNanos int64 // the call's cost in nano-dollars; 0 when unpriced
	Unpriced  bool
}

// Collector gathers the calls an [index.Aggregator] counts: pass its
// Add as the aggregator's OnUsage. A call taken back (a better occurrence
// arrived) is removed, so Calls returns each call once, where it counts.
// A Collector is not safe for concurrent use (nor is the aggregator).
type Collector struct {
	net map[callKey]*netCall
}

type callKey struct {
	ts                                   int64
	format                               schema.Format
	host, session, project, model        string
	labels                               string
	input, output, cacheRead, cacheWrite int64
	cost                                 int64
	unpriced                             bool
}

type netCall struct {
	call Call
	n    int64
}

// Add records one change of what a call counts for.
func (c *Collector) Add(u index.UsageChange) {
	if c.net == nil {
		c.net = make(map[callKey]*netCall)
	}
	call := Call{
		TS: u.TS, Format: u.Format, Host: u.Host, SessionID: u.SessionID, Project: u.Project, Model: u.Model,
		Labels: u.Labels, Tokens: u.Tokens, CostNanos: nanos(u.CostUSD), Unpriced: u.Unpriced,
	}
	k := callKey{
		format: u.Format, host: u.Host, session: u.SessionID, project: u.Project, model: u.Model, labels: labelKey(u.Labels),
		input: u.Tokens.Input, output: u.Tokens.Output, cacheRead: u.Tokens.CacheRead, cacheWrite: u.Tokens.CacheWrite,
		cost: call.CostNanos, unpriced: u.Unpriced,
	}
	if !u.TS.IsZero() {
		k.ts = u.TS.UnixNano()
	}
	nc := c.net[k]
	if nc == nil {
		nc = &netCall{call: call}
		c.net[k] = nc
	}
	nc.n += u.Sign
	if nc.n == 0 {
		delete(c.net, k)
	}
}

// Calls returns the calls counted, in time order (calls without a
// timestamp first).
func (c *Collector) Calls() []Call {
	var out []Call
	for _, nc := range c.net {
		for range nc.n {
			out = append(out, nc.call)
		}
	}
	slices.SortFunc(out, func(a, b Call) int {
		if c := a.TS.Compare(b.TS); c != 0 {
			return c
		}
		return cmp.Or(strings.Compare(a.SessionID, b.SessionID), strings.Compare(a.Model, b.Model),
			cmp.Compare(a.Tokens.Total(), b.Tokens.Total()))
	})
	return out
}

func labelKey(l map[string]string) string {
	if len(l) == 0 {
		return ""
	}
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(l[k])
		b.WriteByte(0)
	}
	return b.String()
}

// nanos converts dollars to nano-dollars, as the aggregates count them.
func nanos(usd float64) int64 { return int64(math.Round(usd * 1e9)) }

// USD converts nano-dollars to dollars.
func USD(n int64) float64 { return float64(n) / 1e9 }

// Totals are the usage of a set of calls.
type Totals struct {
	Calls            int64    `json:"api_calls"`
	InputTokens      int64    `json:"input_tokens"`
	OutputTokens     int64    `json:"output_tokens"`
	CacheReadTokens  int64    `json:"cache_read_tokens"`
	CacheWriteTokens int64    `json:"cache_write_tokens"`
	TotalTokens      int64    `json:"total_tokens"`
	CostUSD          float64  `json:"cost_usd"`
	UnpricedCalls    int64    `json:"unpriced_calls"`
	Models           []string `json:"models"`

	costNanos int64
}

func (t *Totals) add(c *Call) {
	t.Calls++
	t.InputTokens = addSat(t.InputTokens, c.Tokens.Input)
	t.OutputTokens = addSat(t.OutputTokens, c.Tokens.Output)
	t.CacheReadTokens = addSat(t.CacheReadTokens, c.Tokens.CacheRead)
	t.CacheWriteTokens = addSat(t.CacheWriteTokens, c.Tokens.CacheWrite)
	t.TotalTokens = addSat(t.TotalTokens, c.Tokens.Total())
	t.costNanos = addSat(t.costNanos, c.CostNanos)
	t.CostUSD = USD(t.costNanos)
	if c.Unpriced {
		t.UnpricedCalls++
	}
	if c.Model != "" {
		if i, found := slices.BinarySearch(t.Models, c.Model); !found {
			t.Models = slices.Insert(t.Models, i, c.Model)
		}
	}
}

func addSat(a, b int64) int64 {
	s := a + b
	if (s > a) == (b > 0) {
		return s
	}
	if b > 0 {
		return math.MaxInt64
	}
	return math.MinInt64
}

// Period is the length of a calendar report's rows.
type Period string

// The periods of the calendar reports.
const (
	Day   Period = "day"
	Week  Period = "week"
	Month Period = "month"
)

// By is what a report's rows are split by besides the period: "" (not
// split), agent, model, project, host, or label:NAME.
type By string

// The dimensions of [By].
const (
	ByNone    By = ""
	ByAgent   By = "agent"
	ByModel   By = "model"
	ByProject By = "project"
	ByHost    By = "host"
)

// ParseBy checks a --by value.
func ParseBy(s string) (By, error) {
	switch b := By(s); b {
	case ByNone, ByAgent, ByModel, ByProject, ByHost:
		return b, nil
	}
	if name, ok := strings.CutPrefix(s, "label:"); ok {
		if err := schema.ValidateLabel(name, "x"); err != nil {
			return "", fmt.Errorf("-by %s: %w", s, err)
		}
		return By(s), nil
	}
	return "", fmt.Errorf("-by %q: want agent, model, project, host or label:NAME", s)
}

// key returns the value of c that b splits by.
func (b By) key(c *Call) string {
	switch b {
	case ByAgent:
		return string(c.Format)
	case ByModel:
		return c.Model
	case ByProject:
		return c.Project
	case ByHost:
		return c.Host
	case ByNone:
		return ""
	}
	name, _ := strings.CutPrefix(string(b), "label:")
	return c.Labels[name]
}

// Options configure [Calendar].
type Options struct {
	Period Period
	// Location is the time zone periods start in; nil is UTC.
	Location *time.Location
	// WeekStart is the first day of a week (ccusage's default: Sunday).
	WeekStart time.Weekday
	By        By
}

// Row is the usage of one period (and one group, when split).
type Row struct {
	// Period names the period: 2026-01-09 (a day; a week by its first
	// day) or 2026-01 (a month), in the report's time zone.
	Period string `json:"period"`
	// Group is the value the row is split by (--by); absent otherwise.
	Group string `json:"group,omitempty"`
	Totals
}

// Calendar groups calls by period (and by o.By). Rows are in time order,
// then by group. Calls without a timestamp are in no row; undated
// returns their totals.
func Calendar(calls []Call, o Options) (rows []Row, total, undated Totals) {
	loc := o.Location
	if loc == nil {
		loc = time.UTC
	}
	type key struct{ period, group string }
	idx := make(map[key]int)
	for i := range calls {
		c := &calls[i]
		total.add(c)
		if c.TS.IsZero() {
			undated.add(c)
			continue
		}
		k := key{periodOf(c.TS.In(loc), o.Period, o.WeekStart), o.By.key(c)}
		j, ok := idx[k]
		if !ok {
			j = len(rows)
			idx[k] = j
			rows = append(rows, Row{Period: k.period, Group: k.group})
		}
		rows[j].add(c)
	}
	slices.SortFunc(rows, func(a, b Row) int {
		return cmp.Or(strings.Compare(a.Period, b.Period), strings.Compare(a.Group, b.Group))
	})
	return rows, total, undated
}

func periodOf(t time.Time, p Period, weekStart time.Weekday) string {
	switch p {
	case Month:
		return t.Format("2006-01")
	case Week:
		back := (int(t.Weekday()) - int(weekStart) + 7) % 7
		y, m, d := t.Date()
		return time.Date(y, m, d-back, 0, 0, 0, 0, t.Location()).Format("2006-01-02")
	}
	return t.Format("2006-01-02")
}

// BlockLength is the length of a usage block, as Claude Code's limits
// count them.
const BlockLength = 5 * time.Hour

// Block is a usage block: from the hour of its first call (UTC) for
// BlockLength, or a gap between two blocks with no calls.
type Block struct {
	ID    string    `json:"id"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// ActualEnd is the time of the block's last call; nil for a gap.
	ActualEnd *time.Time `json:"actual_end"`
	Active    bool       `json:"active"`
	Gap       bool       `json:"gap"`
	Totals
	// BurnRate and Projection are set for the active block only (and
	// only once its calls span some time).
	BurnRate   *BurnRate   `json:"burn_rate"`
	Projection *Projection `json:"projection"`
}

// BurnRate is how fast the active block spends: over the time from its
// first call to its last.
type BurnRate struct {
	TokensPerMinute float64 `json:"tokens_per_minute"`
	CostPerHour     float64 `json:"cost_per_hour"`
}

// Projection is what the active block will have spent at its end at the
// current burn rate.
type Projection struct {
	TotalTokens      int64   `json:"total_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	RemainingMinutes int64   `json:"remaining_minutes"`
}

// Blocks groups dated calls (in time order, as [Collector.Calls] returns
// them) into usage blocks of length (0: [BlockLength]), the way Claude
// Code's limits and ccusage count them: a block starts at the UTC hour of
// its first call; a call more than length after the block's start, or
// more than length after the previous call, starts a new block, and a
// silence longer than length between two calls is a gap block (from the
// previous call + length to the next call). The block that ends after now
// and whose last call is less than length ago is active.
func Blocks(calls []Call, length time.Duration, now time.Time) []Block {
	if length <= 0 {
		length = BlockLength
	}
	var (
		out   []Block
		cur   *Block
		first time.Time
		last  time.Time
	)
	closeBlock := func() {
		if cur == nil {
			return
		}
		end := last
		cur.ActualEnd = &end
		cur.Active = now.Sub(last) < length && now.Before(cur.End)
		if cur.Active {
			burn(cur, first, last, now)
		}
		out = append(out, *cur)
	}
	for i := range calls {
		c := &calls[i]
		if c.TS.IsZero() {
			continue
		}
		ts := c.TS.UTC()
		if cur != nil && (ts.Sub(cur.Start) > length || ts.Sub(last) > length) {
			closeBlock()
			if ts.Sub(last) > length {
				gs := last.Add(length)
				out = append(out, Block{ID: "gap-" + gs.Format(time.RFC3339), Start: gs, End: ts, Gap: true})
			}
			cur = nil
		}
		if cur == nil {
			start := ts.Truncate(time.Hour)
			cur = &Block{ID: start.Format(time.RFC3339), Start: start, End: start.Add(length)}
			first = ts
		}
		cur.add(c)
		last = ts
	}
	closeBlock()
	for i := range out {
		if out[i].Models == nil {
			out[i].Models = []string{}
		}
	}
	return out
}

func burn(b *Block, first, last, now time.Time) {
	minutes := last.Sub(first).Minutes()
	if minutes <= 0 {
		return
	}
	b.BurnRate = &BurnRate{
		TokensPerMinute: float64(b.TotalTokens) / minutes,
		CostPerHour:     b.CostUSD / minutes * 60,
	}
	remaining := b.End.Sub(now).Minutes()
	if remaining < 0 {
		remaining = 0
	}
	b.Projection = &Projection{
		TotalTokens:      b.TotalTokens + int64(math.Round(b.BurnRate.TokensPerMinute*remaining)),
		CostUSD:          math.Round((b.CostUSD+b.BurnRate.CostPerHour/60*remaining)*100) / 100,
		RemainingMinutes: int64(math.Round(remaining)),
	}
}
