package index

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/sessionpipe/sessionpipe/schema"
)

// Pricer prices the usage of one API call. ok is false when the model is
// unknown; the call is then counted as unpriced, never as $0.
// *price.Table implements it.
type Pricer interface {
	Cost(model string, u schema.Usage) (usd float64, ok bool)
}

// Aggregator folds normalised entries into per-session aggregates by the
// counting rules of DESIGN.md, shared by the offline `sessionpipe sessions`
// and the live indexer.
//
// Every countable thing an entry carries is a fact with a global identity:
// the entry itself (its copies in resumed or forked sessions share the
// identity), the assistant response it belongs to (several lines of one
// Claude response share it), and its API usage (usage_key). Each fact is
// counted once, in one session: the earliest occurrence wins (for usage:
// the largest total, then the earliest), ties going to the session created
// first. Adding the same entry twice changes nothing, so the Aggregator is
// idempotent under redelivery.
//
// Entries of one file must be added in file order: whether a user input
// starts a turn depends on the entries before it in its file.
//
// An Aggregator is not safe for concurrent use.
type Aggregator struct {
	pricer   Pricer
	sessions map[string]*session
	facts    map[string]*fact
	files    map[string]*fileState
	// contested holds the facts with candidates in several sessions; they
	// are re-resolved when aggregates are read, because the tie-breaking
	// session order can change as entries arrive.
	contested map[*fact]struct{}
}

// NewAggregator returns an empty Aggregator pricing usage with p. A nil p
// leaves every call without a recorded cost unpriced.
func NewAggregator(p Pricer) *Aggregator {
	return &Aggregator{
		pricer:    p,
		sessions:  make(map[string]*session),
		facts:     make(map[string]*fact),
		files:     make(map[string]*fileState),
		contested: make(map[*fact]struct{}),
	}
}

// fileState is what turn detection needs to know of a file.
type fileState struct {
	lastRole schema.Role // role of the last user input or assistant message
}

type factKind uint8

const (
	entryFact factKind = iota
	respFact
	usageFact
)

// fact is one countable thing and the sessions it occurs in.
type fact struct {
	kind   factKind
	cands  []cand
	winner int // index in cands
}

// cand is one occurrence of a fact in a session.
type cand struct {
	s     *session
	ts    time.Time
	total int64 // usage total, for usage facts
	c     contrib
}

// contrib is what a fact adds to the session that wins it.
type contrib struct {
	userMessages      int64
	turns             int64
	assistantMessages int64
	apiCalls          int64
	toolCalls         int64
	toolErrors        int64
	compactions       int64
	unpriced          int64
	usage             schema.Usage
	cost              float64
	model             string
	agentID           string
}

// Add folds one entry into the aggregates.
func (a *Aggregator) Add(e *schema.Entry) {
	if e.SessionID == "" {
		return
	}
	s := a.session(e)
	s.observe(e)

	fs := a.file(e)
	realInput := e.Kind == schema.KindMessage && e.Role == schema.RoleUser && !e.Meta && !e.Sidechain
	assistant := e.Kind == schema.KindMessage && e.Role == schema.RoleAssistant && !e.Meta && !e.Sidechain
	if e.Copy {
		// A replay of another session's record: it keeps the turn
		// sequence of its file but counts nothing here.
		if realInput || assistant {
			fs.lastRole = e.Role
		}
		return
	}

	var c contrib
	if realInput {
		c.userMessages = 1
		if fs.lastRole != schema.RoleUser {
			c.turns = 1
		}
		fs.lastRole = schema.RoleUser
		if s.firstPrompt == "" || e.TS.Before(s.firstPromptTS) {
			s.firstPrompt = prefix(e.Text, 64)
			s.firstPromptTS = e.TS
		}
	}
	if assistant {
		fs.lastRole = schema.RoleAssistant
	}
	c.toolCalls = int64(len(e.ToolCalls))
	for i := range e.ToolResults {
		if e.ToolResults[i].IsError {
			c.toolErrors++
		}
	}
	if e.Kind == schema.KindCompaction {
		c.compactions = 1
	}
	c.agentID = e.AgentID
	if c != (contrib{}) {
		a.addFact("e\x00"+string(e.Format)+"\x00"+e.EntryID+"\x00"+e.TS.UTC().Format(time.RFC3339Nano), entryFact, s, e.TS, 0, c)
	}

	if assistant {
		key := e.MessageID
		if key == "" {
			key = "entry\x00" + e.EntryID + "\x00" + e.TS.UTC().Format(time.RFC3339Nano)
		}
		a.addFact("r\x00"+string(e.Format)+"\x00"+key, respFact, s, e.TS, 0, contrib{assistantMessages: 1})
	}

	if e.UsageKey != "" && e.Usage != nil && e.Usage.Total() > 0 {
		u := *e.Usage
		uc := contrib{apiCalls: 1, usage: u, model: e.Model}
		switch {
		case e.CostUSD != nil:
			uc.cost = *e.CostUSD
		case a.pricer != nil:
			if usd, ok := a.pricer.Cost(e.Model, u); ok {
				uc.cost = usd
			} else {
				uc.unpriced = 1
			}
		default:
			uc.unpriced = 1
		}
		a.addFact("u\x00"+e.UsageKey, usageFact, s, e.TS, u.Total(), uc)
	}
}

// addFact records an occurrence of the fact key in session s.
func (a *Aggregator) addFact(key string, kind factKind, s *session, ts time.Time, total int64, c contrib) {
	f := a.facts[key]
	if f == nil {
		f = &fact{kind: kind, cands: []cand{{s: s, ts: ts, total: total, c: c}}}
		a.facts[key] = f
		s.apply(&c, 1)
		return
	}
	nc := cand{s: s, ts: ts, total: total, c: c}
	for i := range f.cands {
		if f.cands[i].s != s {
			continue
		}
		// Another occurrence in the same session: keep the better one.
		if !better(f.kind, &nc, &f.cands[i]) {
			return
		}
		if i == f.winner {
			s.apply(&f.cands[i].c, -1)
			f.cands[i] = nc
			s.apply(&nc.c, 1)
			a.resolve(f)
			return
		}
		f.cands[i] = nc
		a.resolve(f)
		return
	}
	f.cands = append(f.cands, nc)
	a.contested[f] = struct{}{}
	a.resolve(f)
}

// resolve makes the best candidate of f its winner, moving the
// contribution if the winner changes.
func (a *Aggregator) resolve(f *fact) {
	best := f.winner
	for i := range f.cands {
		if i != best && better(f.kind, &f.cands[i], &f.cands[best]) {
			best = i
		}
	}
	if best == f.winner {
		return
	}
	old := &f.cands[f.winner]
	old.s.apply(&old.c, -1)
	f.winner = best
	nw := &f.cands[best]
	nw.s.apply(&nw.c, 1)
}

// better reports whether candidate x beats y: for usage the larger total,
// then the earlier timestamp, then the session created first.
func better(kind factKind, x, y *cand) bool {
	if kind == usageFact && x.total != y.total {
		return x.total > y.total
	}
	if !x.ts.Equal(y.ts) {
		if x.ts.IsZero() || y.ts.IsZero() {
			return y.ts.IsZero() && !x.ts.IsZero()
		}
		return x.ts.Before(y.ts)
	}
	return createdBefore(x.s, y.s)
}

// createdBefore orders sessions by creation: the header's time when known,
// else the first entry's; then a parent before the session that names it;
// then the one whose activity ended first (a resumed session goes on after
// the session it copies); then by id.
func createdBefore(x, y *session) bool {
	if x == y {
		return false
	}
	xc, yc := x.created(), y.created()
	if !xc.Equal(yc) {
		return xc.Before(yc)
	}
	if y.parentID == x.id {
		return true
	}
	if x.parentID == y.id {
		return false
	}
	if !x.lastTS.Equal(y.lastTS) {
		return x.lastTS.Before(y.lastTS)
	}
	return x.key < y.key
}

func (a *Aggregator) session(e *schema.Entry) *session {
	key := string(e.Format) + ":" + e.SessionID
	s := a.sessions[key]
	if s == nil {
		s = &session{
			key:    key,
			id:     e.SessionID,
			format: e.Format,
			host:   e.Host,
			models: make(map[string]int),
			agents: make(map[string]int),
		}
		a.sessions[key] = s
	}
	return s
}

func (a *Aggregator) file(e *schema.Entry) *fileState {
	key := e.Host + "\x00" + e.Path
	fs := a.files[key]
	if fs == nil {
		fs = &fileState{}
		a.files[key] = fs
	}
	return fs
}

// ForgetFile drops the turn-detection state of a file (after it was
// deleted or replaced). It changes no aggregate.
func (a *Aggregator) ForgetFile(host, path string) {
	delete(a.files, host+"\x00"+path)
}

// Sessions returns the aggregates of every session that holds a
// conversation (a message, a compaction or usage), ordered by first
// timestamp then session id: sessions made only of bookkeeping lines (a
// title or summary line filed under a file name) count nothing and are
// left out. The result is a snapshot the caller owns.
func (a *Aggregator) Sessions() []Session {
	for f := range a.contested {
		a.resolve(f)
	}
	out := make([]Session, 0, len(a.sessions))
	for _, s := range a.sessions {
		if s.conversation {
			out = append(out, s.snapshot())
		}
	}
	classify(out)
	slices.SortFunc(out, func(x, y Session) int {
		if c := x.FirstTS.Compare(y.FirstTS); c != 0 {
			return c
		}
		if c := cmp.Compare(x.SessionID, y.SessionID); c != 0 {
			return c
		}
		return cmp.Compare(x.Format, y.Format)
	})
	return out
}

// Session returns the aggregates of one session and whether it is known.
func (a *Aggregator) Session(format schema.Format, id string) (Session, bool) {
	s := a.sessions[string(format)+":"+id]
	if s == nil {
		return Session{}, false
	}
	for f := range a.contested {
		a.resolve(f)
	}
	return s.snapshot(), true
}

// Len returns the number of sessions.
func (a *Aggregator) Len() int { return len(a.sessions) }

func prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// implementationPrefix marks the first prompt of a session that implements
// a plan made in an earlier session with the same slug (Klovi's rule).
const implementationPrefix = "Implement the following plan"

// classify marks Claude Code sessions as plan or implementation and links
// them: a session whose first real prompt starts with
// "Implement the following plan" is an implementation; the other sessions
// sharing its slug are its plan.
func classify(all []Session) {
	bySlug := make(map[string][]int)
	for i := range all {
		if all[i].Format == schema.FormatClaudeCode && all[i].Slug != "" {
			bySlug[all[i].Slug] = append(bySlug[all[i].Slug], i)
		}
	}
	for _, idx := range bySlug {
		var impl, plan []int
		for _, i := range idx {
			if strings.HasPrefix(strings.TrimSpace(all[i].firstPrompt), implementationPrefix) {
				impl = append(impl, i)
			} else {
				plan = append(plan, i)
			}
		}
		if len(impl) == 0 {
			continue
		}
		for _, i := range impl {
			all[i].SessionKind = "implementation"
			for _, j := range plan {
				all[i].PlanSessionIDs = append(all[i].PlanSessionIDs, all[j].SessionID)
			}
			slices.Sort(all[i].PlanSessionIDs)
		}
		for _, j := range plan {
			all[j].SessionKind = "plan"
			for _, i := range impl {
				all[j].ImplementationSessionIDs = append(all[j].ImplementationSessionIDs, all[i].SessionID)
			}
			slices.Sort(all[j].ImplementationSessionIDs)
		}
	}
}
