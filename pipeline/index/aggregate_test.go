package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/schema"
)

// flatPricer prices every call of a known model at $1 per million tokens
// of any kind; other models are unpriced.
type flatPricer map[string]bool

func (p flatPricer) Cost(model string, u schema.Usage) (float64, bool) {
	if !p[model] {
		return 0, false
	}
	return float64(u.Total()) / 1e6, true
}

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

// builder makes entries of one file.
type builder struct {
	format  schema.Format
	session string
	path    string
	n       int64
}

func (b *builder) entry(id string, ts time.Time, kind schema.Kind, role schema.Role) schema.Entry {
	b.n++
	return schema.Entry{
		Format: b.format, Host: "h", Path: b.path, Line: b.n,
		SessionID: b.session, EntryID: id, TS: ts, Kind: kind, Role: role,
	}
}

func (b *builder) user(id string, ts time.Time, text string) schema.Entry {
	e := b.entry(id, ts, schema.KindMessage, schema.RoleUser)
	e.Text = text
	return e
}

func (b *builder) assistant(id string, ts time.Time, msgID string, u schema.Usage) schema.Entry {
	e := b.entry(id, ts, schema.KindMessage, schema.RoleAssistant)
	e.MessageID = msgID
	e.Model = "m"
	e.Usage = &u
	e.UsageKey = "claude:" + msgID + ":req"
	return e
}

func addAll(a *Aggregator, entries ...[]schema.Entry) {
	for _, es := range entries {
		for i := range es {
			a.Add(&es[i])
		}
	}
}

func one(t *testing.T, a *Aggregator, id string) Session {
	t.Helper()
	for _, s := range a.Sessions() {
		if s.SessionID == id {
			return s
		}
	}
	t.Fatalf("session %s not found", id)
	return Session{}
}

func TestAggregator_SplitResponseCountsOnceWithLargestTotal(t *testing.T) {
	t.Parallel()
	b := &builder{format: schema.FormatClaudeCode, session: "s1", path: "s1.jsonl"}
	u := func(out int64) schema.Usage {
		return schema.Usage{Input: 3, Output: out, CacheRead: 100, CacheWrite: 50}
	}
	es := []schema.Entry{
		b.user("u1", at(0), "hello"),
		b.assistant("a1", at(1), "msg1", u(8)),
		b.entry("t1", at(2), schema.KindMessage, schema.RoleTool),
		b.assistant("a2", at(3), "msg1", u(8)),
		b.assistant("a3", at(4), "msg1", u(780)),
	}
	es[3].ToolCalls = []schema.ToolCall{{ID: "x", Name: "Bash"}}
	es[2].ToolResults = []schema.ToolResult{{ToolCallID: "x", IsError: true}}
	a := NewAggregator(flatPricer{"m": true})
	addAll(a, es)
	s := one(t, a, "s1")
	require.Equal(t, int64(1), s.APICalls)
	require.Equal(t, int64(1), s.AssistantMessages)
	require.Equal(t, int64(780), s.OutputTokens)
	require.Equal(t, int64(3+780+100+50), s.TotalTokens)
	require.InDelta(t, float64(933)/1e6, s.CostUSD, 1e-12)
	require.Equal(t, int64(1), s.ToolCalls)
	require.Equal(t, int64(1), s.ToolErrors)
	require.Equal(t, int64(1), s.Turns)
	require.Equal(t, int64(1), s.UserMessages)
	require.Equal(t, []string{"m"}, s.Models)
}

// An entry shortened to fit a message (the tailer's bus.FitEntryMsg)
// keeps the count of the tool calls it left out: they count.
func TestAggregator_OmittedToolCallsCount(t *testing.T) {
	t.Parallel()
	b := &builder{format: schema.FormatClaudeCode, session: "s1", path: "s1.jsonl"}
	es := []schema.Entry{
		b.user("u1", at(0), "hello"),
		b.assistant("a1", at(1), "msg1", schema.Usage{Input: 3, Output: 8}),
	}
	es[1].ToolCalls = []schema.ToolCall{{ID: "x", Name: "Bash"}, {ID: "y", Name: "Bash"}}
	es[1].ToolCallsOmitted, es[1].Truncated = 59_998, true
	a := NewAggregator(flatPricer{"m": true})
	addAll(a, es)
	require.Equal(t, int64(60_000), one(t, a, "s1").ToolCalls)
}

// resumed returns an original session and a resumed copy that replays its
// lines (same ids, timestamps, message ids) and goes on.
func resumed() (orig, copy []schema.Entry) {
	o := &builder{format: schema.FormatClaudeCode, session: "orig", path: "orig.jsonl"}
	u := schema.Usage{Input: 10, Output: 20}
	orig = []schema.Entry{
		o.user("u1", at(0), "first"),
		o.assistant("a1", at(1), "m1", u),
		o.user("u2", at(2), "second"),
		o.assistant("a2", at(3), "m2", u),
	}
	r := &builder{format: schema.FormatClaudeCode, session: "res", path: "res.jsonl"}
	for _, e := range orig {
		e.SessionID, e.Path = "res", "res.jsonl"
		copy = append(copy, e)
	}
	copy = append(copy,
		r.user("u3", at(100), "third"),
		r.assistant("a3", at(101), "m3", schema.Usage{Input: 1, Output: 2}),
	)
	return orig, copy
}

func TestAggregator_ResumedCopiesCountInTheOriginal(t *testing.T) {
	t.Parallel()
	orig, cp := resumed()
	for _, order := range []string{"original first", "copy first"} {
		t.Run(order, func(t *testing.T) {
			a := NewAggregator(flatPricer{"m": true})
			if order == "original first" {
				addAll(a, orig, cp)
			} else {
				addAll(a, cp, orig)
			}
			o, r := one(t, a, "orig"), one(t, a, "res")
			require.Equal(t, int64(2), o.UserMessages)
			require.Equal(t, int64(2), o.Turns)
			require.Equal(t, int64(2), o.APICalls)
			require.Equal(t, int64(2), o.AssistantMessages)
			require.Equal(t, int64(60), o.TotalTokens)
			require.Equal(t, int64(1), r.UserMessages)
			require.Equal(t, int64(1), r.Turns)
			require.Equal(t, int64(1), r.APICalls)
			require.Equal(t, int64(3), r.TotalTokens)
		})
	}
}

func TestAggregator_Idempotent(t *testing.T) {
	t.Parallel()
	orig, cp := resumed()
	a := NewAggregator(flatPricer{"m": true})
	addAll(a, orig, cp)
	want := a.Sessions()
	addAll(a, cp, orig, orig)
	require.Equal(t, want, a.Sessions())
}

func TestAggregator_OrderIndependentTotals(t *testing.T) {
	t.Parallel()
	orig, cp := resumed()
	a := NewAggregator(flatPricer{"m": true})
	addAll(a, orig, cp)
	want := a.Sessions()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		// Files interleave arbitrarily; each file stays in order.
		b := NewAggregator(flatPricer{"m": true})
		i, j := 0, 0
		for i < len(orig) || j < len(cp) {
			if j >= len(cp) || (i < len(orig) && rng.IntN(2) == 0) {
				b.Add(&orig[i])
				i++
			} else {
				b.Add(&cp[j])
				j++
			}
		}
		require.Equal(t, want, b.Sessions())
	}
}

func TestAggregator_Turns(t *testing.T) {
	t.Parallel()
	b := &builder{format: schema.FormatFluux, session: "room/1", path: "history.jsonl"}
	meta := b.user("meta", at(2), "<system-reminder>")
	meta.Meta = true
	side := b.user("side", at(3), "subagent prompt")
	side.Sidechain = true
	tool := b.entry("tool", at(4), schema.KindMessage, schema.RoleTool)
	es := []schema.Entry{
		b.user("1", at(0), "alice: hi"),
		b.user("2", at(1), "bob: hello too"), // group chat: same turn
		meta,
		side,
		b.assistant("3", at(5), "r1", schema.Usage{}),
		tool, // tool results do not end or start turns
		b.user("4", at(6), "next"),
		b.assistant("5", at(7), "r2", schema.Usage{}),
		b.assistant("6", at(8), "r3", schema.Usage{}),
		b.user("7", at(9), "again"),
	}
	a := NewAggregator(nil)
	addAll(a, es)
	s := one(t, a, "room/1")
	require.Equal(t, int64(3), s.Turns)
	require.Equal(t, int64(4), s.UserMessages)
	require.Equal(t, int64(3), s.AssistantMessages)
	require.Zero(t, s.APICalls, "zero usage is no API call")
}

func TestAggregator_Unpriced(t *testing.T) {
	t.Parallel()
	b := &builder{format: schema.FormatM4dtimes, session: "u", path: "u.jsonl"}
	e := b.assistant("a", at(0), "m1", schema.Usage{Input: 5, Output: 5})
	e.Model = "mystery-model"
	a := NewAggregator(flatPricer{"m": true})
	a.Add(&e)
	s := one(t, a, "u")
	require.Equal(t, int64(1), s.UnpricedCalls)
	require.Equal(t, []string{"mystery-model"}, s.UnpricedModels)
	require.Zero(t, s.CostUSD)
	require.Equal(t, int64(10), s.TotalTokens)
}

func TestAggregator_RecordedCostWins(t *testing.T) {
	t.Parallel()
	b := &builder{format: schema.FormatPi, session: "p", path: "p.jsonl"}
	e := b.assistant("a", at(0), "", schema.Usage{Input: 5, Output: 5})
	e.Model = "unknown-to-table"
	cost := 0.0245
	e.CostUSD = &cost
	a := NewAggregator(flatPricer{})
	a.Add(&e)
	s := one(t, a, "p")
	require.Zero(t, s.UnpricedCalls)
	require.InDelta(t, 0.0245, s.CostUSD, 1e-12)
}

func TestAggregator_ForkCopyTieGoesToParent(t *testing.T) {
	t.Parallel()
	// A verbatim fork copy: same ids and timestamps; the child names its
	// parent; both headers at the same second.
	p := &builder{format: schema.FormatPi, session: "parent", path: "parent.jsonl"}
	c := &builder{format: schema.FormatPi, session: "child", path: "child.jsonl"}
	ph := p.entry("hdr-p", at(0), schema.KindSession, "")
	ch := c.entry("hdr-c", at(0), schema.KindSession, "")
	ch.ParentSessionID = "parent"
	pu := p.user("e1", at(1), "q")
	pa := p.assistant("e2", at(2), "", schema.Usage{Input: 7})
	pa.UsageKey = "pi:fp"
	cu, ca := pu, pa
	cu.SessionID, ca.SessionID = "child", "child"
	a := NewAggregator(nil)
	addAll(a, []schema.Entry{ch, cu, ca}, []schema.Entry{ph, pu, pa})
	require.Equal(t, int64(7), one(t, a, "parent").TotalTokens)
	require.Equal(t, int64(1), one(t, a, "parent").UserMessages)
	require.Zero(t, one(t, a, "child").TotalTokens)
	require.Zero(t, one(t, a, "child").UserMessages)
}

func TestAggregator_CopyFlagCountsNothing(t *testing.T) {
	t.Parallel()
	b := &builder{format: schema.FormatCodex, session: "child", path: "c.jsonl"}
	replay := b.assistant("L2", at(0), "", schema.Usage{Input: 100})
	replay.Copy = true
	replay.UsageKey = "codex:x"
	own := b.user("L3", at(5), "hi")
	a := NewAggregator(nil)
	addAll(a, []schema.Entry{replay, own})
	s := one(t, a, "child")
	require.Zero(t, s.TotalTokens)
	require.Zero(t, s.AssistantMessages)
	require.Equal(t, int64(1), s.Turns, "the replayed assistant message ends the previous turn")
}

func TestAggregator_SubagentsAndCompactions(t *testing.T) {
	t.Parallel()
	b := &builder{format: schema.FormatClaudeCode, session: "s", path: "s.jsonl"}
	var es []schema.Entry
	for i, agent := range []string{"a1", "a1", "a2", ""} {
		e := b.assistant("x"+string(rune('0'+i)), at(i), "m"+string(rune('0'+i)), schema.Usage{Output: 1})
		e.AgentID = agent
		e.Sidechain = agent != ""
		es = append(es, e)
	}
	es = append(es, b.entry("cb", at(9), schema.KindCompaction, schema.RoleSystem))
	a := NewAggregator(nil)
	addAll(a, es)
	s := one(t, a, "s")
	require.Equal(t, int64(2), s.Subagents)
	require.Equal(t, int64(1), s.Compactions)
	require.Equal(t, int64(4), s.APICalls, "subagent calls count in the parent session")
	require.Equal(t, int64(1), s.AssistantMessages, "sidechain messages are not the session's assistant messages")
}

func TestAggregator_PlanAndImplementation(t *testing.T) {
	t.Parallel()
	mk := func(session, prompt string) []schema.Entry {
		b := &builder{format: schema.FormatClaudeCode, session: session, path: session + ".jsonl"}
		e := b.user(session+"-u", at(len(session)), prompt)
		e.Slug = "modular-petting-thompson"
		return []schema.Entry{e}
	}
	a := NewAggregator(nil)
	addAll(a, mk("plan", "Let's plan the refactor"), mk("impl", "Implement the following plan:\n\n# Refactor"))
	p, i := one(t, a, "plan"), one(t, a, "impl")
	require.Equal(t, "plan", p.SessionKind)
	require.Equal(t, []string{"impl"}, p.ImplementationSessionIDs)
	require.Equal(t, "implementation", i.SessionKind)
	require.Equal(t, []string{"plan"}, i.PlanSessionIDs)
}

// bothOrders adds two files in both orders and requires the same
// sessions, returning them.
func bothOrders(t *testing.T, x, y []schema.Entry) []Session {
	t.Helper()
	a := NewAggregator(flatPricer{"m": true})
	addAll(a, x, y)
	b := NewAggregator(flatPricer{"m": true})
	addAll(b, y, x)
	want := a.Sessions()
	require.Equal(t, want, b.Sessions(), "the arrival order of the files changed the aggregates")
	return want
}

// A compaction or side-question file replays main-transcript records as
// sidechain lines with the same ids and timestamps; such a replay never
// takes a record from the main transcript, whichever arrives first.
func TestAggregator_SidechainReplayNeverTakesTheMainRecord(t *testing.T) {
	t.Parallel()
	m := &builder{format: schema.FormatClaudeCode, session: "s", path: "s.jsonl"}
	main := []schema.Entry{m.user("u1", at(0), "go"), m.assistant("a1", at(1), "msg1", schema.Usage{Input: 5})}
	main[1].ToolCalls = []schema.ToolCall{{ID: "t1", Name: "Bash"}, {ID: "t2", Name: "Read"}}
	r := &builder{format: schema.FormatClaudeCode, session: "s", path: "s/subagents/agent-acompact-1.jsonl"}
	replay := []schema.Entry{r.user("u1", at(0), "go"), r.assistant("a1", at(1), "msg1", schema.Usage{Input: 5})}
	replay[1].ToolCalls = main[1].ToolCalls[:1] // the replay kept one block
	for i := range replay {
		replay[i].Sidechain, replay[i].AgentID = true, "acompact-1"
	}
	s := bothOrders(t, main, replay)
	require.Len(t, s, 1)
	require.Equal(t, int64(1), s[0].Turns)
	require.Equal(t, int64(1), s[0].UserMessages)
	require.Equal(t, int64(1), s[0].AssistantMessages)
	require.Equal(t, int64(2), s[0].ToolCalls, "the main transcript's record counts")
	require.Equal(t, int64(1), s[0].APICalls)
	require.Equal(t, int64(1), s[0].Subagents, "the replay file is a subagent id seen")
}

// The same record in two files of one session (a pi archive and the live
// file after gateway compaction) may start a turn in one file and not in
// the other: the occurrence chosen does not depend on arrival order.
func TestAggregator_SameSessionCopiesTieByPosition(t *testing.T) {
	t.Parallel()
	live := &builder{format: schema.FormatPi, session: "s", path: "s.jsonl"}
	bak := &builder{format: schema.FormatPi, session: "s", path: "s.jsonl.bak.1"}
	x := []schema.Entry{bak.user("u0", at(0), "first"), bak.user("u1", at(1), "second, same turn")}
	y := []schema.Entry{live.user("u1", at(1), "second, same turn")}
	s := bothOrders(t, x, y)
	require.Equal(t, int64(2), s[0].UserMessages)
	require.Equal(t, int64(2), s[0].Turns, "line 1 of the live file wins the tie over line 2 of the archive")
}

// Session fields chosen among several files (title, cwd, slug) follow a
// rule on timestamps and positions, not on arrival.
func TestAggregator_SessionFieldsDoNotDependOnArrival(t *testing.T) {
	t.Parallel()
	a := &builder{format: schema.FormatClaudeCode, session: "s", path: "s.jsonl"}
	b := &builder{format: schema.FormatClaudeCode, session: "s", path: "s/subagents/agent-x.jsonl"}
	x := []schema.Entry{a.user("u1", at(0), "hi"), a.entry("t1", at(5), schema.KindSummary, "")}
	x[0].CWD, x[0].Slug = "/main", "early-slug"
	x[1].Title = "later title"
	y := []schema.Entry{b.user("u2", at(3), "sub"), b.entry("t2", at(2), schema.KindSummary, "")}
	y[0].CWD, y[0].Sidechain, y[0].AgentID = "/worktree", true, "x"
	y[1].Title = "earlier title"
	s := bothOrders(t, x, y)
	require.Equal(t, "later title", s[0].Title)
	require.Equal(t, "/main", s[0].CWD, "a main-transcript cwd before a sidechain's")
	require.Equal(t, "early-slug", s[0].Slug)
}

// Sums saturate instead of wrapping, and cost is kept in integer
// nano-dollars so that its sum is exact in any order.
func TestAggregator_SumsSaturate(t *testing.T) {
	t.Parallel()
	b := &builder{format: schema.FormatClaudeCode, session: "s", path: "s.jsonl"}
	a := NewAggregator(flatPricer{"m": true})
	for i := range 3 {
		e := b.assistant(fmt.Sprint("a", i), at(i), fmt.Sprint("m", i), schema.Usage{Input: 1 << 62})
		a.Add(&e)
	}
	s := one(t, a, "s")
	require.Equal(t, int64(math.MaxInt64), s.InputTokens)
	require.Equal(t, int64(math.MaxInt64), s.TotalTokens)
	require.Positive(t, s.CostUSD)
	require.Equal(t, int64(3), s.APICalls)
}

func TestAggregator_Usage(t *testing.T) {
	t.Parallel()
	b := &builder{format: schema.FormatClaudeCode, session: "s", path: "s.jsonl"}
	x := b.assistant("a1", at(0), "m1", schema.Usage{Input: 10, Output: 1})
	y := b.assistant("a2", at(3600), "m2", schema.Usage{Input: 20, Output: 2})
	y.Model = "other"
	z := b.assistant("a3", at(2*86400), "m3", schema.Usage{Input: 40})
	z.CWD = "/proj"
	a := NewAggregator(flatPricer{"m": true})
	addAll(a, []schema.Entry{x, y, z})

	rows, err := a.Usage(UsageQuery{GroupBy: ByDay})
	require.NoError(t, err)
	require.Equal(t, []UsageRow{
		{Key: "2026-03-01", Calls: 2, InputTokens: 30, OutputTokens: 3, TotalTokens: 33, CostUSD: 11e-6, UnpricedCalls: 1},
		{Key: "2026-03-03", Calls: 1, InputTokens: 40, TotalTokens: 40, CostUSD: 40e-6},
	}, rows)

	rows, err = a.Usage(UsageQuery{GroupBy: ByHour, Since: at(1800), Until: at(2 * 3600)})
	require.NoError(t, err)
	require.Equal(t, []UsageRow{
		{Key: "2026-03-01T10Z", Calls: 1, InputTokens: 10, OutputTokens: 1, TotalTokens: 11, CostUSD: 11e-6},
		{Key: "2026-03-01T11Z", Calls: 1, InputTokens: 20, OutputTokens: 2, TotalTokens: 22, UnpricedCalls: 1},
	}, rows, "hours are whole: since is truncated to its hour, until is exclusive")

	rows, err = a.Usage(UsageQuery{GroupBy: ByProject, Model: "m"})
	require.NoError(t, err)
	require.Equal(t, []string{"", "/proj"}, []string{rows[0].Key, rows[1].Key})
	require.Equal(t, int64(10), rows[0].InputTokens)

	_, err = a.Usage(UsageQuery{GroupBy: "weekday"})
	require.Error(t, err)
}

func TestAggregator_QueryRejectsBadInput(t *testing.T) {
	t.Parallel()
	a := NewAggregator(nil)
	_, _, err := a.Query(SessionQuery{Cursor: "not-a-cursor!"})
	require.ErrorContains(t, err, "not a cursor this server returned")
	_, _, err = a.Query(SessionQuery{Sort: "random"})
	require.ErrorContains(t, err, "want last_ts")
	page, next, err := a.Query(SessionQuery{Limit: 1e6})
	require.NoError(t, err)
	require.Empty(t, page)
	require.Empty(t, next)
}
