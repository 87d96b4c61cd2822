package ccusage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// RunTimeout bounds one ccusage run started by the [testing.TB] helpers.
const RunTimeout = 10 * time.Minute

// Session is one row of a ccusage session report.
//
// The four token counters are disjoint, as sessionpipe's are: Input
// excludes cached input (ccusage subtracts Codex's cached_input_tokens),
// CacheWrite is ccusage's cacheCreationTokens, and Output includes Codex
// reasoning tokens, which Reasoning repeats for information. Total is
// ccusage's totalTokens: Input+Output+CacheRead+CacheWrite, except for
// Codex, where it is the sum of the log's own total_tokens deltas (which a
// log may compute differently, e.g. adding reasoning a second time).
type Session struct {
	// ID is ccusage's session identifier, derived from the path, never from
	// the transcript: Claude Code the file stem (for
	// <session>/subagents/agent-*.jsonl the <session> directory name, so
	// subagents count in their parent); Codex the path under sessions/
	// without ".jsonl" (e.g. "2026/02/23/rollout-…"); pi and OpenClaw the
	// file stem after its first "_" (pi names files <time>_<uuid>.jsonl).
	ID string `json:"id"`
	// Project is the project directory for Claude Code and pi (pi: the
	// directory under sessions/, "unknown" when there is none), the
	// directory under sessions/ for Codex ("" for a flat file), and the
	// constant "OpenClaw" for OpenClaw.
	Project string `json:"project"`
	// Usage holds the session's counters and cost: Reasoning is the part
	// of Output that Codex reports as reasoning (0 for the other kinds);
	// CostUSD is ccusage's cost, a cost recorded in the log when there is
	// one (Claude costUSD, pi/OpenClaw usage.cost.total), else tokens
	// times the embedded LiteLLM prices. An unknown model costs 0 (see
	// [ModelUsage.MissingPricing]).
	Usage
	// Models lists the models as ccusage names them (pi and OpenClaw
	// prefix "[pi] " / "[openclaw] "; Claude Code drops "<synthetic>" and
	// appends "-fast" for fast-mode responses), sorted.
	Models []string `json:"models"`
	// Breakdown has one row per model, sorted by name.
	Breakdown []ModelUsage `json:"breakdown"`
	// FirstActivity is the earliest timestamp counted; zero for Codex,
	// whose report has none.
	FirstActivity time.Time `json:"first_activity"`
	// LastActivity is the latest timestamp counted.
	LastActivity time.Time `json:"last_activity"`
}

// ModelUsage is one model's share of a [Session].
type ModelUsage struct {
	Model      string `json:"model"`
	Input      int64  `json:"input"`
	Output     int64  `json:"output"`
	CacheRead  int64  `json:"cache_read"`
	CacheWrite int64  `json:"cache_write"`
	Reasoning  int64  `json:"reasoning"`
	// CostUSD is the model's cost; ccusage's Codex report gives none per
	// model, so it is 0 there.
	CostUSD float64 `json:"cost_usd"`
	// Fallback reports that Codex recorded no model and ccusage priced the
	// tokens as its fallback model (gpt-5).
	Fallback bool `json:"fallback,omitempty"`
	// MissingPricing reports a Codex model ccusage has no price for (cost
	// 0). The other reports say nothing in JSON: an unknown model simply
	// costs 0 (the table view prints a warning).
	MissingPricing bool `json:"missing_pricing,omitempty"`
}

// Usage is a sum of token counters and cost over sessions: the totals
// object ccusage prints (see [Totals]) or what [Sum] computes.
type Usage struct {
	Input      int64   `json:"input"`
	Output     int64   `json:"output"`
	CacheRead  int64   `json:"cache_read"`
	CacheWrite int64   `json:"cache_write"`
	Reasoning  int64   `json:"reasoning"`
	Total      int64   `json:"total"`
	CostUSD    float64 `json:"cost_usd"`
}

// Sum adds up sessions. Compare its CostUSD with a tolerance: ccusage sums
// floats in its own order.
func Sum(sessions []Session) Usage {
	var t Usage
	for _, s := range sessions {
		t.Input += s.Input
		t.Output += s.Output
		t.CacheRead += s.CacheRead
		t.CacheWrite += s.CacheWrite
		t.Reasoning += s.Reasoning
		t.Total += s.Total
		t.CostUSD += s.CostUSD
	}
	return t
}

// Report is a decoded ccusage session report.
type Report struct {
	// Sessions are sorted by ID (ccusage sorts by cost or activity).
	Sessions []Session `json:"sessions"`
	// Totals is ccusage's own totals object.
	Totals Usage `json:"totals"`
}

// Args returns the arguments [Run] passes to ccusage for kind, before any
// extra ones.
func Args(kind Kind) []string {
	return []string{string(kind), "session", "--json", "--offline", "--timezone", "UTC"}
}

// Env returns the whole environment [Run] gives ccusage: PATH, HOME=home,
// TZ=UTC, NO_COLOR=1 and the kind's root variable (see [Kind]). Nothing of
// the caller's environment leaks in.
func Env(kind Kind, root, home string) ([]string, error) {
	name, value, err := kind.EnvVar(root)
	if err != nil {
		return nil, err
	}
	return []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"HOME=" + home,
		"TZ=UTC",
		"NO_COLOR=1",
		name + "=" + value,
	}, nil
}

// Run runs the ccusage binary bin on root as a report of kind (see [Args]
// and [Env], plus extra arguments such as "--mode", "calculate"), in a
// temporary empty home that it removes afterwards, and decodes the report.
// A non-zero exit, a missing "sessions" or "totals" object or a session
// without an id or cost is an error that quotes ccusage's stderr. ctx
// bounds the run.
func Run(ctx context.Context, bin string, kind Kind, root string, extra ...string) (Report, error) {
	home, err := os.MkdirTemp("", "ccusage-home-")
	if err != nil {
		return Report{}, fmt.Errorf("ccusage: create home: %w", err)
	}
	defer os.RemoveAll(home)
	return run(ctx, bin, kind, root, home, extra)
}

func run(ctx context.Context, bin string, kind Kind, root, home string, extra []string) (Report, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return Report{}, fmt.Errorf("ccusage: resolve root: %w", err)
	}
	env, err := Env(kind, abs, home)
	if err != nil {
		return Report{}, err
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, append(Args(kind), extra...)...)
	cmd.Env = env
	cmd.Dir = home
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return Report{}, fmt.Errorf("ccusage %s session on %s: %w", kind, root, context.Cause(ctx))
		}
		return Report{}, fmt.Errorf("ccusage %s session on %s: %w\n%s", kind, root, err, stderr.Bytes())
	}
	rep, err := Decode(stdout.Bytes())
	if err != nil {
		return Report{}, fmt.Errorf("ccusage %s session on %s: %w\nstderr: %s", kind, root, err, stderr.Bytes())
	}
	return rep, nil
}

// MustRun is [Run] with the binary from [Binary], a home in tb.TempDir and
// a deadline of [RunTimeout]; any error fails tb.
func MustRun(tb testing.TB, kind Kind, root string, extra ...string) Report {
	tb.Helper()
	bin := Binary(tb)
	ctx, cancel := context.WithTimeout(tb.Context(), RunTimeout)
	defer cancel()
	rep, err := run(ctx, bin, kind, root, tb.TempDir(), extra)
	if err != nil {
		tb.Fatal(err)
	}
	return rep
}

// Sessions runs the ccusage session report of kind on root (see [MustRun])
// and returns its sessions, sorted by ID. Any failure fails tb.
func Sessions(tb testing.TB, kind Kind, root string) []Session {
	tb.Helper()
	return MustRun(tb, kind, root).Sessions
}

// Totals runs the ccusage session report of kind on root (see [MustRun])
// and returns the totals object ccusage prints, to compare with [Sum] of
// its sessions or with sessionpipe's. Any failure fails tb.
func Totals(tb testing.TB, kind Kind, root string) Usage {
	tb.Helper()
	return MustRun(tb, kind, root).Totals
}

// rawReport is the JSON of "ccusage <kind> session --json": one shape for
// claude, pi and openclaw, another for codex (costUSD, directory, models
// as a map).
type rawReport struct {
	Sessions *[]rawSession `json:"sessions"`
	Totals   *rawTotals    `json:"totals"`
}

type rawTotals struct {
	InputTokens           int64    `json:"inputTokens"`
	OutputTokens          int64    `json:"outputTokens"`
	CacheCreationTokens   int64    `json:"cacheCreationTokens"`
	CacheReadTokens       int64    `json:"cacheReadTokens"`
	ReasoningOutputTokens int64    `json:"reasoningOutputTokens"`
	TotalTokens           int64    `json:"totalTokens"`
	TotalCost             *float64 `json:"totalCost"`
	CostUSD               *float64 `json:"costUSD"`
}

type rawSession struct {
	rawTotals
	SessionID       string                   `json:"sessionId"`
	ProjectPath     string                   `json:"projectPath"`
	Directory       string                   `json:"directory"`
	FirstActivity   string                   `json:"firstActivity"`
	LastActivity    string                   `json:"lastActivity"`
	ModelsUsed      []string                 `json:"modelsUsed"`
	ModelBreakdowns []rawBreakdown           `json:"modelBreakdowns"`
	Models          map[string]rawCodexModel `json:"models"`
}

type rawBreakdown struct {
	ModelName           string  `json:"modelName"`
	InputTokens         int64   `json:"inputTokens"`
	OutputTokens        int64   `json:"outputTokens"`
	CacheCreationTokens int64   `json:"cacheCreationTokens"`
	CacheReadTokens     int64   `json:"cacheReadTokens"`
	Cost                float64 `json:"cost"`
}

type rawCodexModel struct {
	InputTokens           int64 `json:"inputTokens"`
	OutputTokens          int64 `json:"outputTokens"`
	CacheCreationTokens   int64 `json:"cacheCreationTokens"`
	CacheReadTokens       int64 `json:"cacheReadTokens"`
	ReasoningOutputTokens int64 `json:"reasoningOutputTokens"`
	IsFallback            bool  `json:"isFallback"`
	MissingPricing        bool  `json:"missingPricing"`
}

// cost returns the cost field of either report shape.
func (t rawTotals) cost() (float64, bool) {
	switch {
	case t.TotalCost != nil:
		return *t.TotalCost, true
	case t.CostUSD != nil:
		return *t.CostUSD, true
	}
	return 0, false
}

// Decode decodes the output of "ccusage <kind> session --json" (any kind).
// It returns [ErrBadOutput] when the output is not JSON, lacks the
// "sessions" or "totals" object, or has a session without an id, without a
// cost (as with --no-cost) or with a timestamp that is not RFC 3339.
func Decode(out []byte) (Report, error) {
	var raw rawReport
	if err := json.Unmarshal(out, &raw); err != nil {
		return Report{}, fmt.Errorf("%w: %w\n%s", ErrBadOutput, err, head(out))
	}
	if raw.Sessions == nil || raw.Totals == nil {
		return Report{}, fmt.Errorf("%w: no \"sessions\" or \"totals\"\n%s", ErrBadOutput, head(out))
	}
	tc, ok := raw.Totals.cost()
	if !ok {
		return Report{}, fmt.Errorf("%w: totals without cost", ErrBadOutput)
	}
	rep := Report{
		Sessions: make([]Session, 0, len(*raw.Sessions)),
		Totals:   raw.Totals.totals(tc),
	}
	for i, rs := range *raw.Sessions {
		s, err := rs.session()
		if err != nil {
			return Report{}, fmt.Errorf("%w: session %d: %w", ErrBadOutput, i, err)
		}
		rep.Sessions = append(rep.Sessions, s)
	}
	sort.Slice(rep.Sessions, func(i, j int) bool { return rep.Sessions[i].ID < rep.Sessions[j].ID })
	return rep, nil
}

func (t rawTotals) totals(cost float64) Usage {
	return Usage{
		Input:      t.InputTokens,
		Output:     t.OutputTokens,
		CacheRead:  t.CacheReadTokens,
		CacheWrite: t.CacheCreationTokens,
		Reasoning:  t.ReasoningOutputTokens,
		Total:      t.TotalTokens,
		CostUSD:    cost,
	}
}

func (rs rawSession) session() (Session, error) {
	if rs.SessionID == "" {
		return Session{}, fmt.Errorf("no sessionId")
	}
	cost, ok := rs.cost()
	if !ok || math.IsNaN(cost) {
		return Session{}, fmt.Errorf("%s: no cost", rs.SessionID)
	}
	s := Session{
		ID:        rs.SessionID,
		Project:   rs.ProjectPath,
		Usage:     rs.totals(cost),
		Models:    append([]string{}, rs.ModelsUsed...),
		Breakdown: []ModelUsage{},
	}
	if rs.Models != nil { // codex
		s.Project = rs.Directory
		for name, m := range rs.Models {
			s.Models = append(s.Models, name)
			s.Breakdown = append(s.Breakdown, ModelUsage{
				Model:          name,
				Input:          m.InputTokens,
				Output:         m.OutputTokens,
				CacheRead:      m.CacheReadTokens,
				CacheWrite:     m.CacheCreationTokens,
				Reasoning:      m.ReasoningOutputTokens,
				Fallback:       m.IsFallback,
				MissingPricing: m.MissingPricing,
			})
		}
	}
	for _, b := range rs.ModelBreakdowns {
		s.Breakdown = append(s.Breakdown, ModelUsage{
			Model:      b.ModelName,
			Input:      b.InputTokens,
			Output:     b.OutputTokens,
			CacheRead:  b.CacheReadTokens,
			CacheWrite: b.CacheCreationTokens,
			CostUSD:    b.Cost,
		})
	}
	sort.Strings(s.Models)
	sort.Slice(s.Breakdown, func(i, j int) bool { return s.Breakdown[i].Model < s.Breakdown[j].Model })
	var err error
	if s.FirstActivity, err = parseTime(rs.FirstActivity); err != nil {
		return Session{}, fmt.Errorf("%s: firstActivity: %w", rs.SessionID, err)
	}
	if s.LastActivity, err = parseTime(rs.LastActivity); err != nil {
		return Session{}, fmt.Errorf("%s: lastActivity: %w", rs.SessionID, err)
	}
	return s, nil
}

// parseTime parses an RFC 3339 timestamp; "" is the zero time.
func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t.UTC(), err
}

// head returns the start of out for error messages.
func head(out []byte) []byte {
	const n = 2000
	if len(out) > n {
		return append(out[:n:n], "…"...)
	}
	return out
}

// MustReport runs another ccusage report of kind on root, "ccusage <kind>
// <report> --json --offline" plus extra (e.g. "daily", "--timezone",
// "UTC"), in the environment of [Env] with a home in tb.TempDir and a
// deadline of [RunTimeout], and returns its standard output, the report's
// JSON, for the caller to decode. Any failure fails tb.
func MustReport(tb testing.TB, kind Kind, root, report string, extra ...string) []byte {
	tb.Helper()
	if err := kind.Validate(); err != nil {
		tb.Fatal(err)
	}
	bin := Binary(tb)
	ctx, cancel := context.WithTimeout(tb.Context(), RunTimeout)
	defer cancel()
	abs, err := filepath.Abs(root)
	if err != nil {
		tb.Fatal(err)
	}
	home := tb.TempDir()
	env, err := Env(kind, abs, home)
	if err != nil {
		tb.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, append([]string{string(kind), report, "--json", "--offline"}, extra...)...)
	cmd.Env, cmd.Dir = env, home
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		tb.Fatalf("ccusage %s %s on %s: %v\n%s", kind, report, root, err, stderr.Bytes())
	}
	return stdout.Bytes()
}

// Period is one row of a ccusage daily, weekly or monthly report: the
// period's name (2026-01-09, a week by its first day, 2026-01) and its
// usage.
type Period struct {
	Name string
	Usage
}

// Periods runs the ccusage report ("daily", "weekly" or "monthly") of kind
// on root in the time zone tz (see [MustReport]) and returns its rows in
// its order and its totals. Any failure fails tb.
func Periods(tb testing.TB, kind Kind, root, report, tz string) ([]Period, Usage) {
	tb.Helper()
	key, ok := map[string]string{"daily": "date", "weekly": "week", "monthly": "month"}[report]
	if !ok {
		tb.Fatalf("ccusage: %q is not a daily, weekly or monthly report", report)
	}
	out := MustReport(tb, kind, root, report, "--timezone", tz)
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(out, &raw); err != nil {
		tb.Fatalf("ccusage %s: %v\n%s", report, err, head(out))
	}
	var rows []map[string]json.RawMessage
	var totals rawTotals
	if err := json.Unmarshal(raw[report], &rows); err != nil {
		tb.Fatalf("ccusage %s: rows: %v\n%s", report, err, head(out))
	}
	if err := json.Unmarshal(raw["totals"], &totals); err != nil {
		tb.Fatalf("ccusage %s: totals: %v\n%s", report, err, head(out))
	}
	tc, _ := totals.cost()
	var periods []Period
	for _, r := range rows {
		var name string
		var t rawTotals
		b, _ := json.Marshal(r)
		if err := json.Unmarshal(r[key], &name); err != nil {
			tb.Fatalf("ccusage %s: row without %q: %s", report, key, b)
		}
		if err := json.Unmarshal(b, &t); err != nil {
			tb.Fatalf("ccusage %s: row %s: %v", report, b, err)
		}
		c, ok := t.cost()
		if !ok {
			tb.Fatalf("ccusage %s: row without a cost: %s", report, b)
		}
		periods = append(periods, Period{Name: name, Usage: t.totals(c)})
	}
	return periods, totals.totals(tc)
}

// Block is one block of a ccusage blocks report (Claude Code only).
type Block struct {
	ID        string  `json:"id"`
	StartTime string  `json:"startTime"`
	EndTime   string  `json:"endTime"`
	IsGap     bool    `json:"isGap"`
	IsActive  bool    `json:"isActive"`
	Entries   int64   `json:"entries"`
	CostUSD   float64 `json:"costUSD"`
	Tokens    struct {
		Input      int64 `json:"inputTokens"`
		Output     int64 `json:"outputTokens"`
		CacheWrite int64 `json:"cacheCreationInputTokens"`
		CacheRead  int64 `json:"cacheReadInputTokens"`
	} `json:"tokenCounts"`
	TotalTokens int64 `json:"totalTokens"`
}

// Blocks runs "ccusage claude blocks" on root (see [MustReport]) and
// returns its blocks, gaps included. Any failure fails tb.
func Blocks(tb testing.TB, root string) []Block {
	tb.Helper()
	out := MustReport(tb, Claude, root, "blocks", "--timezone", "UTC")
	var rep struct {
		Blocks []Block `json:"blocks"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		tb.Fatalf("ccusage blocks: %v\n%s", err, head(out))
	}
	return rep.Blocks
}
