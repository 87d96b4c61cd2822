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

	Models      []string `json:"models"`
	Compactions int64    `json:"compactions"`
	Subagents   int64    `json:"subagents"`

	ParentSessionID string         `json:"parent_session_id,omitempty"`
	Title           string         `json:"title,omitempty"`
	Slug            string         `json:"slug,omitempty"`
	Origin          *schema.Origin `json:"origin,omitempty"`

	// SessionKind is "plan" or "implementation" for Claude Code sessions
	// linked by slug (see the package documentation), else "".
	SessionKind              string   `json:"session_kind,omitempty"`
	PlanSessionIDs           []string `json:"plan_session_ids,omitempty"`
	ImplementationSessionIDs []string `json:"implementation_session_ids,omitempty"`

	firstPrompt string
}

// session is the mutable state behind a Session.
type session struct {
	id     string
	format schema.Format
	host   string
	cwd    string

	headerTS time.Time // creation time from a session header, if any
	firstTS  time.Time
	lastTS   time.Time

	parentID string
	title    string
	slug     string
	origin   *schema.Origin

	firstPrompt   string
	firstPromptTS time.Time

	// conversation is set once the session has a message, a compaction
	// or usage; sessions without are bookkeeping only and not listed.
	conversation bool

	sum    totals
	models map[string]int      // model → winning usage facts
	agents map[string]struct{} // subagents seen (not in copies)
	unpr   map[string]int      // unpriced model → winning usage facts
}

// totals are the counters of a session.
type totals struct {
	userMessages, turns, assistantMessages, apiCalls int64
	toolCalls, toolErrors, compactions, unpriced     int64
	usage                                            schema.Usage
	cost                                             float64
}

// observe records what every entry of the session tells about it,
// whatever it counts.
func (s *session) observe(e *schema.Entry) {
	if e.Kind == schema.KindMessage || e.Kind == schema.KindCompaction || e.UsageKey != "" {
		s.conversation = true
	}
	if !e.TS.IsZero() {
		if s.firstTS.IsZero() || e.TS.Before(s.firstTS) {
			s.firstTS = e.TS
		}
		if e.TS.After(s.lastTS) {
			s.lastTS = e.TS
		}
	}
	if s.cwd == "" && e.CWD != "" && !e.Sidechain {
		s.cwd = e.CWD
	}
	if s.host == "" {
		s.host = e.Host
	}
	if e.Slug != "" && !e.Sidechain {
		s.slug = e.Slug
	}
	if e.Title != "" {
		s.title = e.Title // the last title written wins
	}
	if e.Kind == schema.KindSession {
		if !e.TS.IsZero() && (s.headerTS.IsZero() || e.TS.Before(s.headerTS)) {
			s.headerTS = e.TS
		}
		if e.Origin != nil {
			o := *e.Origin
			s.origin = &o
		}
		if e.CWD != "" {
			s.cwd = e.CWD
		}
	}
	if e.ParentSessionID != "" && e.ParentSessionID != s.id && !e.Sidechain {
		s.parentID = e.ParentSessionID
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
func (s *session) applyEntry(c *entryContrib, sign int64) {
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
	t.toolCalls += sign * int64(c.toolCalls)
	t.toolErrors += sign * int64(c.toolErrors)
}

// applyResponse adds or removes an assistant message.
func (s *session) applyResponse(_ *struct{}, sign int64) {
	s.sum.assistantMessages += sign
}

// applyUsage adds or removes an API call.
func (s *session) applyUsage(c *usageContrib, sign int64) {
	t := &s.sum
	t.apiCalls += sign
	t.usage.Input += sign * c.input
	t.usage.Output += sign * c.output
	t.usage.CacheRead += sign * c.cacheRead
	t.usage.CacheWrite += sign * c.cacheWrite
	t.cost += float64(sign) * c.cost
	if c.unpriced {
		t.unpriced += sign
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
		CWD:               s.cwd,
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
		TotalTokens:       t.usage.Total(),
		CostUSD:           roundCost(t.cost),
		UnpricedCalls:     t.unpriced,
		Models:            keys(s.models),
		Compactions:       t.compactions,
		Subagents:         int64(len(s.agents)),
		ParentSessionID:   s.parentID,
		Title:             s.title,
		Slug:              s.slug,
		firstPrompt:       s.firstPrompt,
	}
	if len(s.unpr) > 0 {
		out.UnpricedModels = keys(s.unpr)
	}
	if s.origin != nil {
		o := *s.origin
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

// roundCost rounds to 1e-9 USD, removing the float noise that adding and
// removing contributions leaves, without hiding any real amount.
func roundCost(c float64) float64 {
	r := math.Round(c*1e9) / 1e9
	if r == 0 {
		return 0 // no negative zero
	}
	return r
}
