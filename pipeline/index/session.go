package index

import (
	"math"
	"slices"
	"time"

	"github.com/sessionpipe/sessionpipe/schema"
)

// Session is the aggregate of one session, as DESIGN.md defines it. Its
// JSON form is what `sessionpipe sessions --json` prints and what the
// indexer's HTTP API serves.
type Session struct {
	SessionID string        `json:"session_id"`
	Format    schema.Format `json:"format"`
	Host      string        `json:"host"`
	CWD       string        `json:"cwd"`
	FirstTS   time.Time     `json:"first_ts"`
	LastTS    time.Time     `json:"last_ts"`

	Turns             int64 `json:"turns"`
	UserMessages      int64 `json:"user_messages"`
	AssistantMessages int64 `json:"assistant_messages"`
	APICalls          int64 `json:"api_calls"`
	ToolCalls         int64 `json:"tool_calls"`
	ToolErrors        int64 `json:"tool_errors"`

	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CacheReadTokens  int64 `json:"cache_read_tokens"`
	CacheWriteTokens int64 `json:"cache_write_tokens"`
	TotalTokens      int64 `json:"total_tokens"`

	// CostUSD is the cost of the priced calls. UnpricedCalls counts the
	// calls whose model has no price; their cost is not in CostUSD.
	CostUSD        float64  `json:"cost_usd"`
	UnpricedCalls  int64    `json:"unpriced_calls"`
	UnpricedModels []string `json:"unpriced_models,omitempty"`
	// PriceSources splits the priced calls and CostUSD by where each
	// call's price came from ("override", "recorded", "local", "litellm",
	// "models.dev"; see package pipeline/price): every priced call is in
	// exactly one. Calls of a Pricer that does not tell are in none.
	PriceSources map[string]PriceSource `json:"price_sources,omitempty"`

	Models      []string `json:"models"`
	Compactions int64    `json:"compactions"`
	Subagents   int64    `json:"subagents"`

	ParentSessionID string         `json:"parent_session_id,omitempty"`
	Title           string         `json:"title,omitempty"`
	Slug            string         `json:"slug,omitempty"`
	Origin          *schema.Origin `json:"origin,omitempty"`
	// Labels are the labels of the session's earliest entry that has
	// any (chosen as Host is: the labels of the host that wrote the
	// session; a session whose tailer got its -label flags while it was
	// written takes them from its first entry read with them). A call
	// counts under its own entry's labels in usage by label, which may
	// differ for such a session.
	Labels map[string]string `json:"labels,omitempty"`

	// SessionKind is "plan" or "implementation" for Claude Code sessions
	// linked by slug (see the package documentation), else "".
	SessionKind              string   `json:"session_kind,omitempty"`
	PlanSessionIDs           []string `json:"plan_session_ids,omitempty"`
	ImplementationSessionIDs []string `json:"implementation_session_ids,omitempty"`

	firstPrompt string
}

// session is the mutable state behind a Session. Every field is a
// function of the set of entries added, not of their order: minima,
// maxima, sets, and values chosen by a [choice] rule.
type session struct {
	num    uint64 // the session's number in the store
	id     string
	format schema.Format
	host   string // with format and id, what identifies the session

	cached
	refs        int       // occurrences of cached facts in this session: it stays cached while any
	contested   bool      // some fact occurs in this session and another
	reorder     bool      // its place in the session order may have changed since the last commit
	stored      bool      // the store holds a version of it
	indexedTS   time.Time // its last activity in the store's index
	indexedSlug string    // its slug in the store's index

	headerTS time.Time // creation time from a session header, if any
	firstTS  time.Time
	lastTS   time.Time

	cwd      choice[string] // a header's, else the earliest main-transcript entry's, else a sidechain's
	parentID choice[string] // named by the latest main-transcript entry
	title    choice[string] // the latest title line
	slug     choice[string] // of the latest main-transcript entry
	origin   choice[*schema.Origin]
	labels   choice[labelSet] // of the earliest entry with labels

	firstPrompt choice[string] // the earliest real input

	// conversation is set once the session has a message, a compaction
	// or usage; sessions without are bookkeeping only and not listed.
	conversation bool

	sum    totals
	models map[string]int      // model → winning usage facts
	agents map[string]struct{} // subagents seen (not in copies)
	unpr   map[string]int      // unpriced model → winning usage facts
	// srcCalls and srcCost count the priced calls and their nano-dollars
	// by price source.
	srcCalls map[string]int
	srcCost  map[string]int64

	ledger map[ledgerKey]ledgerItem // the turn ledger, in memory without a store
}

// PriceSource is the share of one price source in a session's cost.
type PriceSource struct {
	Calls   int64   `json:"calls"`
	CostUSD float64 `json:"cost_usd"`
}

// totals are the counters of a session. Counters saturate instead of
// wrapping (the parsers reject a single call above 10^12 tokens, so a sum
// cannot reach the limit in practice).
type totals struct {
	userMessages, turns, assistantMessages, apiCalls int64
	toolCalls, toolErrors, compactions, unpriced     int64
	usage                                            schema.Usage
	cost                                             int64 // nano-dollars
}

// Classes of a [choice]: which kind of entry a value came from; a lower
// class wins whatever the timestamps.
const (
	fromHeader int8 = iota
	fromMain
	fromSidechain
)

// choice keeps one value among those offered by a session's entries: the
// one from the lowest class, then the earliest (or latest) timestamp,
// then the first position ([comparePosition]). Unknown timestamps count
// as later than every known one for earliest, earlier for latest.
type choice[T any] struct {
	v     T
	at    origin
	class int8
	ok    bool
}

// earliest offers v; it reports whether v was taken.
func (c *choice[T]) earliest(v T, class int8, at origin) bool {
	if !c.ok || class < c.class || class == c.class && earlier(&at, &c.at) {
		*c = choice[T]{v: v, at: at, class: class, ok: true}
		return true
	}
	return false
}

// latest offers v; it reports whether v was taken.
func (c *choice[T]) latest(v T, class int8, at origin) bool {
	if !c.ok || class < c.class || class == c.class && earlier(&c.at, &at) {
		*c = choice[T]{v: v, at: at, class: class, ok: true}
		return true
	}
	return false
}

// earlier orders origins by timestamp (unknown last), then position.
func earlier(x, y *origin) bool {
	if x.ts != y.ts {
		switch {
		case !x.ts.known():
			return false
		case !y.ts.known():
			return true
		}
		return x.ts.compare(y.ts) < 0
	}
	return comparePosition(x, y) < 0
}

// observe records what every entry of the session tells about it,
// whatever it counts; labels is the label set of e's labels.
func (s *session) observe(e *schema.Entry, labels labelSet, at origin) {
	if e.Kind == schema.KindMessage && e.Model != syntheticModel || e.Kind == schema.KindCompaction || e.UsageKey != "" {
		s.conversation = true
	}
	if !e.TS.IsZero() {
		if s.firstTS.IsZero() || e.TS.Before(s.firstTS) {
			s.firstTS = e.TS
			s.reorder = true
		}
		if s.lastTS.IsZero() || e.TS.After(s.lastTS) { // the zero time is none, not year 1
			s.lastTS = e.TS
			s.reorder = true
		}
	}
	class := fromMain
	if e.Sidechain {
		class = fromSidechain
	}
	if len(e.Labels) > 0 {
		s.labels.earliest(labels, fromMain, at)
	}
	if e.CWD != "" {
		c := class
		if e.Kind == schema.KindSession {
			c = fromHeader
		}
		s.cwd.earliest(e.CWD, c, at)
	}
	if e.Slug != "" && !e.Sidechain {
		s.slug.latest(e.Slug, fromMain, at)
	}
	if e.Title != "" {
		s.title.latest(e.Title, fromMain, at)
	}
	if e.Kind == schema.KindSession {
		if !e.TS.IsZero() && (s.headerTS.IsZero() || e.TS.Before(s.headerTS)) {
			s.headerTS = e.TS
			s.reorder = true
		}
		if e.Origin != nil {
			o := *e.Origin
			s.origin.latest(&o, fromHeader, at)
		}
	}
	if e.ParentSessionID != "" && e.ParentSessionID != s.id && !e.Sidechain {
		if s.parentID.latest(e.ParentSessionID, fromMain, at) {
			s.reorder = true
		}
	}
	if e.AgentID != "" && !e.Copy {
		if s.agents == nil {
			s.agents = make(map[string]struct{})
		}
		if _, ok := s.agents[e.AgentID]; !ok {
			s.agents[e.AgentID] = struct{}{}
		}
	}
}

// created is the session's creation time for tie-breaking.
func (s *session) created() time.Time {
	if !s.headerTS.IsZero() {
		return s.headerTS
	}
	return s.firstTS
}

// applyEntry adds (sign 1) or removes (sign -1) what an entry counts.
func (a *Aggregator) applyEntry(s *session, c *entryContrib, at *origin, key factKey, sign int64) {
	if c.turn {
		a.ledger(s, ledgerKey{ts: at.ts, kind: kindEntry, fact: key}, ledgerItem{prompt: c.prompt}, sign)
	}
	t := &s.sum
	if c.user {
		t.userMessages += sign
	}
	if c.turn {
		t.turns += sign
	}
	if c.compaction {
		t.compactions += sign
	}
	t.toolCalls = addSat(t.toolCalls, sign*int64(c.toolCalls))
	t.toolErrors = addSat(t.toolErrors, sign*int64(c.toolErrors))
}

// applyResponse adds or removes an assistant message.
func (a *Aggregator) applyResponse(s *session, _ *struct{}, _ *origin, _ factKey, sign int64) {
	s.sum.assistantMessages += sign
}

// applyUsage adds or removes an API call, in its session, in the rollups
// and for the OnUsage hook.
func (a *Aggregator) applyUsage(s *session, c *usageContrib, at *origin, key factKey, sign int64) {
	a.rollup(s, c, at, sign)
	a.ledger(s, ledgerKey{ts: at.ts, kind: kindUsage, fact: key}, ledgerItem{call: *c}, sign)
	if a.onUsage != nil {
		a.onUsage(usageChange(s, c, at, sign))
	}
	t := &s.sum
	t.apiCalls += sign
	t.usage.Input = addSat(t.usage.Input, sign*c.input)
	t.usage.Output = addSat(t.usage.Output, sign*c.output)
	t.usage.CacheRead = addSat(t.usage.CacheRead, sign*c.cacheRead)
	t.usage.CacheWrite = addSat(t.usage.CacheWrite, sign*c.cacheWrite)
	t.cost = addSat(t.cost, sign*c.cost)
	if c.unpriced {
		t.unpriced += sign
	}
	if c.source != "" && !c.unpriced {
		if s.srcCalls == nil {
			s.srcCalls, s.srcCost = make(map[string]int), make(map[string]int64)
		}
		count(s.srcCalls, c.source, sign)
		if v := addSat(s.srcCost[c.source], sign*c.cost); s.srcCalls[c.source] == 0 {
			delete(s.srcCost, c.source)
		} else {
			s.srcCost[c.source] = v
		}
	}
	if c.model != "" {
		count(s.models, c.model, sign)
		if c.unpriced {
			if s.unpr == nil {
				s.unpr = make(map[string]int)
			}
			count(s.unpr, c.model, sign)
		}
	}
}

func count(m map[string]int, k string, sign int64) {
	n := m[k] + int(sign)
	if n <= 0 {
		delete(m, k)
		return
	}
	m[k] = n
}

func (s *session) snapshot() Session {
	t := &s.sum
	out := Session{
		SessionID:         s.id,
		Format:            s.format,
		Host:              s.host,
		CWD:               s.cwd.v,
		FirstTS:           s.firstTS,
		LastTS:            s.lastTS,
		Turns:             t.turns,
		UserMessages:      t.userMessages,
		AssistantMessages: t.assistantMessages,
		APICalls:          t.apiCalls,
		ToolCalls:         t.toolCalls,
		ToolErrors:        t.toolErrors,
		InputTokens:       t.usage.Input,
		OutputTokens:      t.usage.Output,
		CacheReadTokens:   t.usage.CacheRead,
		CacheWriteTokens:  t.usage.CacheWrite,
		TotalTokens:       totalSat(&t.usage),
		CostUSD:           usd(t.cost),
		UnpricedCalls:     t.unpriced,
		Models:            keys(s.models),
		Compactions:       t.compactions,
		Subagents:         int64(len(s.agents)),
		ParentSessionID:   s.parentID.v,
		Title:             s.title.v,
		Slug:              s.slug.v,
		Labels:            s.labels.v.toMap(),
		firstPrompt:       s.firstPrompt.v,
	}
	if len(s.unpr) > 0 {
		out.UnpricedModels = keys(s.unpr)
	}
	if len(s.srcCalls) > 0 {
		out.PriceSources = make(map[string]PriceSource, len(s.srcCalls))
		for k, n := range s.srcCalls {
			out.PriceSources[k] = PriceSource{Calls: int64(n), CostUSD: usd(s.srcCost[k])}
		}
	}
	if s.origin.v != nil {
		o := *s.origin.v
		out.Origin = &o
	}
	return out
}

func keys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// nanoUSD converts a cost in dollars to the integer nano-dollars that
// sums are kept in: integer sums do not depend on the order they are made
// in, as float sums do, and a per-call rounding of at most half a
// nano-dollar hides no real amount.
func nanoUSD(usd float64) int64 {
	switch {
	case math.IsNaN(usd) || usd <= 0:
		return 0
	case usd >= math.MaxInt64/1e9:
		return math.MaxInt64
	}
	return int64(math.Round(usd * 1e9))
}

// usd converts nano-dollars back to dollars.
func usd(nano int64) float64 { return float64(nano) / 1e9 }

// addSat returns a+b, saturated at the int64 limits instead of wrapping.
func addSat(a, b int64) int64 {
	s := a + b
	switch {
	case a > 0 && b > 0 && s < 0:
		return math.MaxInt64
	case a < 0 && b < 0 && s >= 0:
		return math.MinInt64
	}
	return s
}

// totalSat is u.Total() without wrapping.
func totalSat(u *schema.Usage) int64 {
	return addSat(addSat(u.Input, u.Output), addSat(u.CacheRead, u.CacheWrite))
}
