package index

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/index/store"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Pricer prices the usage of one API call. ok is false when the model is
// unknown; the call is then counted as unpriced, never as $0.
// *price.Table implements it, and [EntryPricer] too.
type Pricer interface {
	Cost(model string, u schema.Usage) (usd float64, ok bool)
}

// EntryPricer is a Pricer that prices a call from its whole entry (model,
// provider, time, usage and the cost the transcript recorded) and says
// where the price came from. When the Pricer given to the Aggregator
// implements it, it decides every call's cost, recorded ones included;
// otherwise a recorded cost is used as is (source "recorded") and Cost
// prices the rest (source ""). *price.Table implements it
// ([price.Table.PriceEntry]).
type EntryPricer interface {
	PriceEntry(e *schema.Entry) (usd float64, source string, ok bool)
}

// Aggregator folds normalised entries into per-session aggregates by the
// counting rules of DESIGN.md, shared by the offline `sessionpipe sessions`
// and the live indexer.
//
// Every countable thing an entry carries is a fact with a global identity:
// the entry itself (its copies in resumed or forked sessions, and its
// replays in compaction or side-question files, share the identity), the
// assistant message it belongs to, and its API usage (usage_key). Each
// fact counts once, in one occurrence chosen by a rule over all of its
// occurrences (see the package documentation), so the aggregates do not
// depend on the order in which files, or the lines of different files,
// arrive; adding the same entry twice changes nothing, so the Aggregator
// is idempotent under redelivery.
//
// Entries of one file must be added in file order: whether a user input
// starts a turn depends on the entries before it in its file.
//
// An Aggregator is not safe for concurrent use.
type Aggregator struct {
	pricer   Pricer
	entryPr  EntryPricer // pricer, when it is one
	sessions map[sessionKey]*session
	byNum    map[uint64]*session
	files    map[fileKey]*fileState

	entries   *facts[entryContrib]
	responses *facts[struct{}]
	usage     *facts[usageContrib]
	key       *keyer
	labeler   labeler

	// With a store, the maps above are a write-back cache of it (see
	// state.go); without, they hold everything.
	store   *store.Store
	gen     uint64 // commit generation, for eviction
	nextNum uint64 // number of the next new session
	dirtyS  []*session
	dirtyF  []*fileState
	moved   []*session // the dirty sessions that may have moved in the order (resolve's)
	list    *listing   // the stored sessions' rows, when built (listing.go)

	turns     bool
	ledgerOps []ledgerOp

	rollups map[rollKey]*rollCell
	dirtyR  []*rollCell
	// cells holds every stored cell, with the listing (celltable.go);
	// cellsPending the cells a commit writes, set in it once the store
	// took them.
	cells        *cellTable
	cellsPending []rollCell
	onUsage      func(UsageChange)
	err          error // the first store failure: the Aggregator stops applying
}

// sessionKey identifies a session: session ids are unique only within
// an agent (format), and within a host for some (m4dtimes names sessions
// by Telegram user id, Fluux by JID).
type sessionKey struct {
	format schema.Format
	host   string
	id     string
}

// key returns the identity of s.
func (s *session) key() sessionKey { return sessionKey{s.format, s.host, s.id} }

type fileKey struct{ host, path string }

// Config configures an [Aggregator].
type Config struct {
	// Pricer prices calls without a recorded cost; nil leaves them
	// unpriced.
	Pricer Pricer

	// Seed seeds the fact keys. Zero draws a random one, or takes the
	// store's. A store made with another seed is refused.
	Seed uint64

	// Store, when set, holds the state: the Aggregator resumes what it
	// holds and becomes a write-back cache over it ([Aggregator.Commit]).
	// Without, everything is in memory.
	Store *store.Store

	// OnUsage, when set, is called with every change of what an API call
	// counts for: a call counted (Sign 1), or taken back because a better
	// occurrence of it arrived (Sign -1, followed by the call counted in
	// its new place). Alerts are fed from it.
	OnUsage func(UsageChange)

	// Turns keeps a ledger of each session's turns ([Aggregator.Turns]):
	// the indexer's session detail. Off, it costs nothing.
	Turns bool
}

// New returns an Aggregator configured by cfg: empty, or resuming the
// state in cfg.Store. It fails only with a store: unreadable, corrupt
// (ErrCorruptState), of another layout (*LayoutError: rebuild it) or made
// with another seed.
func New(cfg Config) (*Aggregator, error) {
	seed := cfg.Seed
	for seed == 0 {
		seed = rand.Uint64()
	}
	ep, _ := cfg.Pricer.(EntryPricer)
	a := &Aggregator{
		pricer:   cfg.Pricer,
		entryPr:  ep,
		sessions: make(map[sessionKey]*session),
		byNum:    make(map[uint64]*session),
		files:    make(map[fileKey]*fileState),
		key:      newKeyer(seed),
		nextNum:  1,
	}
	a.entries = newFacts(a, kindEntry, false, a.applyEntry, entryCodec{})
	a.responses = newFacts(a, kindResponse, false, a.applyResponse, noCodec{})
	a.usage = newFacts(a, kindUsage, true, a.applyUsage, usageCodec{})
	a.rollups = make(map[rollKey]*rollCell)
	a.onUsage = cfg.OnUsage
	a.turns = cfg.Turns
	if cfg.Store != nil {
		if err := a.attach(cfg.Store, cfg.Seed); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// NewAggregator returns an empty in-memory Aggregator pricing usage with
// p. A nil p leaves every call without a recorded cost unpriced.
func NewAggregator(p Pricer) *Aggregator {
	a, _ := New(Config{Pricer: p}) // cannot fail without a store
	return a
}

// fileState is what turn detection needs to know of a file.
type fileState struct {
	key      fileKey
	lastRole schema.Role // role of the last user input or assistant message
	hash     uint64      // fileHash of the path
	cached
}

// Add folds one entry into the aggregates.
func (a *Aggregator) Add(e *schema.Entry) {
	if e.SessionID == "" {
		return
	}
	if a.err != nil {
		return
	}
	fs := a.file(e)
	at := origin{ts: stampOf(e.TS), sidechain: e.Sidechain, background: e.Background, agent: e.AgentID, line: e.Line, object: int32(e.Object), file: fs.hash}
	s := a.session(e)
	a.touchSession(s)
	labels := a.labeler.of(e.Labels)
	s.observe(e, labels, at)
	role := fs.lastRole
	realInput := e.Kind == schema.KindMessage && e.Role == schema.RoleUser && !e.Meta && !e.Sidechain
	assistant := isReply(e) && !e.Meta && !e.Sidechain
	if e.Copy {
		// A replay of another session's record: it keeps the turn
		// sequence of its file but counts nothing here.
		if realInput || assistant {
			a.setRole(fs, e.Role)
		}
		return
	}
	var c entryContrib
	if realInput {
		c.user = true
		c.turn = role != schema.RoleUser
		a.setRole(fs, schema.RoleUser)
		s.firstPrompt.earliest(prefix(e.Text, 64), fromMain, at)
		if a.turns && c.turn {
			c.prompt = prefix(e.Text, PromptHead)
		}
	}
	if assistant {
		a.setRole(fs, schema.RoleAssistant)
	}
	// A shortened entry (too large for a message) counts the tool calls
	// it had to leave out.
	c.toolCalls = int32(min(len(e.ToolCalls)+max(e.ToolCallsOmitted, 0), math.MaxInt32))
	for i := range e.ToolResults {
		if e.ToolResults[i].IsError {
			c.toolErrors++
		}
	}
	c.compaction = isCompaction(e)
	if c != (entryContrib{}) {
		h := a.key.start()
		h.string(string(e.Format))
		h.scope(e)
		h.string(e.EntryID)
		h.int(at.ts.nano())
		a.entries.add(h.sum(), s, at, 0, c)
	}
	if assistant {
		// One assistant message per Claude Code message id (a response
		// is written over several lines); every other format's records
		// are messages of their own: a provider's response id need not
		// be unique (Ollama reuses them).
		h := a.key.start()
		h.string(string(e.Format))
		h.scope(e)
		if e.Format == schema.FormatClaudeCode && e.MessageID != "" {
			h.string(e.MessageID)
		} else {
			h.string("entry")
			h.string(e.EntryID)
			h.int(at.ts.nano())
		}
		a.responses.add(h.sum(), s, at, 0, struct{}{})
	}
	if e.UsageKey != "" && e.Usage != nil && totalSat(e.Usage) > 0 {
		u := e.Usage
		uc := usageContrib{input: u.Input, output: u.Output, cacheRead: u.CacheRead, cacheWrite: u.CacheWrite, model: e.Model, project: e.CWD, labels: labels}
		if uc.project == "" {
			uc.project = s.cwd.v
		}
		switch {
		case a.entryPr != nil:
			cost, src, ok := a.entryPr.PriceEntry(e)
			uc.cost, uc.source, uc.unpriced = nanoUSD(cost), src, !ok
		case e.CostUSD != nil:
			uc.cost, uc.source = nanoUSD(*e.CostUSD), "recorded"
		case a.pricer != nil:
			cost, ok := a.pricer.Cost(e.Model, *u)
			uc.cost, uc.unpriced = nanoUSD(cost), !ok
		default:
			uc.unpriced = true
		}
		h := a.key.start()
		h.string(e.UsageKey)
		h.scope(e)
		a.usage.add(h.sum(), s, at, totalSat(u), uc)
	}
}

// syntheticModel is the model Claude Code writes on the notices it makes
// itself ("No response requested.", "Invalid API key", rate limits).
const syntheticModel = "<synthetic>"

// isReply reports whether e is a message a model wrote: an assistant
// message, not one of Claude Code's own notices (model "<synthetic>"),
// which its parser now makes events but entries written before (in a
// stream or Parquet) still carry as messages.
func isReply(e *schema.Entry) bool {
	return e.Kind == schema.KindMessage && e.Role == schema.RoleAssistant && e.Model != syntheticModel
}

// isCompaction reports whether e is a compaction of the conversation:
// a compaction entry of the main transcript. A subagent compacting its
// own context (a line of a subagent file) and a compaction boundary
// replayed in a sidechain file (the top of a compaction agent's copy)
// are not; microcompactions are events, never compactions.
func isCompaction(e *schema.Entry) bool {
	return e.Kind == schema.KindCompaction && !e.Sidechain && e.AgentID == ""
}

// createdBefore orders sessions by creation: the header's time when known,
// else the first entry's; then a parent before the session that names it;
// then the one whose activity ended first (a resumed session goes on after
// the session it copies); then by id, format and host.
func createdBefore(x, y *session) bool {
	if x == y {
		return false
	}
	xc, yc := x.created(), y.created()
	if !xc.Equal(yc) {
		return xc.Before(yc)
	}
	if y.parentID.v == x.id && y.host == x.host && y.format == x.format {
		return true
	}
	if x.parentID.v == y.id && x.host == y.host && x.format == y.format {
		return false
	}
	if !x.lastTS.Equal(y.lastTS) {
		return x.lastTS.Before(y.lastTS)
	}
	if x.id != y.id {
		return x.id < y.id
	}
	if x.format != y.format {
		return x.format < y.format
	}
	return x.host < y.host
}

// session returns the session of e from the cache or the store, or a new
// one.
func (a *Aggregator) session(e *schema.Entry) *session {
	k := sessionKey{e.Format, e.Host, e.SessionID}
	s := a.sessions[k]
	if s == nil && a.store != nil {
		s = a.loadSession(k)
	}
	if s == nil {
		s = &session{
			num:    a.nextNum,
			id:     e.SessionID,
			format: e.Format,
			host:   e.Host,
			models: make(map[string]int),
		}
		a.nextNum++
		a.cacheSession(s)
	}
	return s
}

// cacheSession puts s in the cache.
func (a *Aggregator) cacheSession(s *session) {
	a.sessions[s.key()] = s
	a.byNum[s.num] = s
	s.used = a.gen
}

// touchSession marks s changed since the last commit.
func (a *Aggregator) touchSession(s *session) {
	s.used = a.gen
	if a.store != nil && !s.dirty {
		s.dirty = true
		a.dirtyS = append(a.dirtyS, s)
	}
}

// markContested records that s has an occurrence of a fact that occurs
// in another session too, and has s written at the next commit, so that
// the store remembers it (settle loads the stored facts of such a
// session when its place in the session order changes).
func (a *Aggregator) markContested(s *session) {
	if !s.contested {
		s.contested = true
		a.touchSession(s)
	}
}

// file returns the turn state of e's file.
func (a *Aggregator) file(e *schema.Entry) *fileState {
	k := fileKey{e.Host, e.Path}
	fs := a.files[k]
	if fs == nil && a.store != nil {
		fs = a.loadFile(k)
	}
	if fs == nil {
		fs = &fileState{key: k, hash: fileHash(e.Path)}
		a.files[k] = fs
	}
	fs.used = a.gen
	return fs
}

// setRole records the role of the last user input or assistant message
// of a file.
func (a *Aggregator) setRole(fs *fileState, r schema.Role) {
	if fs.lastRole == r {
		return
	}
	fs.lastRole = r
	if a.store != nil && !fs.dirty {
		fs.dirty = true
		a.dirtyF = append(a.dirtyF, fs)
	}
}

// ForgetFile drops the turn-detection state of a file (after it was
// deleted or replaced). It changes no aggregate.
func (a *Aggregator) ForgetFile(host, path string) {
	k := fileKey{host, path}
	if fs := a.files[k]; fs != nil {
		a.setRole(fs, "")
	} else if a.store != nil {
		a.forgetStoredFile(k)
	}
}

// resolve settles the facts whose winner depends on the session order.
// Over a store, the sessions whose place in the order may have changed
// since the last commit are known (reorder, among the dirty ones): a fact
// only has to compare their occurrences with its winner (see
// facts.resettle). In memory, where that is not tracked, every fact is
// resolved again.
func (a *Aggregator) resolve() {
	all := a.store == nil
	moved := a.moved[:0]
	if !all {
		for _, s := range a.dirtyS {
			if s.reorder {
				moved = append(moved, s)
			}
		}
	}
	a.entries.resolveAll(moved, all)
	a.responses.resolveAll(moved, all)
	a.usage.resolveAll(moved, all)
	clear(moved)
	a.moved = moved[:0]
}

// Sessions returns the aggregates of every session that holds a
// conversation (a message, a compaction or usage), ordered by first
// timestamp then session id: sessions made only of bookkeeping lines (a
// title or summary line filed under a file name) count nothing and are
// left out. The result is a snapshot the caller owns.
//
// With a store it reads every stored session; it returns nil if the
// store fails (see [Aggregator.Err]).
func (a *Aggregator) Sessions() []Session {
	a.settle()
	out := make([]Session, 0, len(a.sessions))
	if err := a.allSessions(func(s *session) {
		if s.conversation {
			out = append(out, s.snapshot())
		}
	}); err != nil {
		return nil
	}
	classify(out)
	slices.SortFunc(out, func(x, y Session) int {
		if xz, yz := x.FirstTS.IsZero(), y.FirstTS.IsZero(); xz != yz {
			if xz {
				return -1 // none first (as NULLS FIRST), before year 0 too
			}
			return 1
		}
		if c := x.FirstTS.Compare(y.FirstTS); c != 0 {
			return c
		}
		if c := cmp.Compare(x.SessionID, y.SessionID); c != 0 {
			return c
		}
		if c := cmp.Compare(x.Format, y.Format); c != 0 {
			return c
		}
		return cmp.Compare(x.Host, y.Host)
	})
	return out
}

// Session returns the aggregates of the session of format, host and id,
// and whether it is known. [Aggregator.Find] finds the sessions of an id.
func (a *Aggregator) Session(format schema.Format, host, id string) (Session, bool) {
	k := sessionKey{format, host, id}
	s := a.sessions[k]
	if s == nil && a.store != nil {
		s = a.loadSession(k)
	}
	if s == nil {
		return Session{}, false
	}
	a.settle()
	return s.snapshot(), true
}

// Err returns the store failure that stopped the Aggregator, if any.
func (a *Aggregator) Err() error { return a.err }

// Len returns the number of sessions in memory (with a store, the cached
// ones).
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
// of its host sharing its slug are its plan.
func classify(all []Session) {
	type hostSlug struct{ host, slug string } // slugs link the sessions of one host
	bySlug := make(map[hostSlug][]int)
	for i := range all {
		if all[i].Format == schema.FormatClaudeCode && all[i].Slug != "" {
			k := hostSlug{all[i].Host, all[i].Slug}
			bySlug[k] = append(bySlug[k], i)
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
