package parquet

import (
	"math"
	"strings"
	"unsafe"

	"github.com/sessionpipe/sessionpipe/schema"
)

// The strings of a packed row, by index into prow.s.
const (
	sKey = iota
	sFormat
	sHost
	sPath
	sSession
	sEntry
	sParent
	sParentSession
	sKind
	sRole
	sSubtype
	sText
	sModel
	sProvider
	sMessage
	sRequest
	sUsageKey
	sStopReason
	sSender
	sCWD
	sGitBranch
	sAgentVersion
	sAgentID
	sAgentType
	sSlug
	sCommand
	sCommandArgs
	sTitle
	sRaw
	sSpeed
	sReactionMessage
	sOriginProvider
	sOriginSurface
	sOriginChatType
	sOriginFrom
	sOriginLabel
	nSpans
)

// Flags of a packed row.
const (
	fMeta = 1 << iota
	fCopy
	fTruncated
	fSidechain
	fUsage
	fCost
	fReaction
	fOrigin
	fBackground
)

// prow is a buffered row without pointers: strings are spans of the
// part's arena, lists are ranges of the part's side tables. A part holds
// thousands of them; the garbage collector does not scan them. unpack
// turns one into a [row] just before it is written.
//
// A field added to [schema.Entry] is added to row, here, and to pack and
// unpack.
type prow struct {
	seq, offset, line, ts int64
	usage                 [7]int64 // input, output, cache_read, cache_write, 5m, 1h, reasoning
	cost                  float64
	object                int32
	callsOmitted          int32 // schema.Entry.ToolCallsOmitted
	resultsOmitted        int32 // schema.Entry.ToolResultsOmitted
	flags                 uint16
	hasTS                 bool // ts is a time (else none; 0 is also 1970-01-01T00:00:00Z)
	s                     [nSpans]span
	calls, results, atts  rng
	emojis                rng
	labels                rng
}

// rng is a range of a side table.
type rng struct{ start, n uint32 }

type pcall struct{ id, name, input span }

type presult struct {
	id, content span
	isError     bool
}

type patt struct{ filename, mimeType, size span }

// plabel is one label of a row.
type plabel struct{ key, value span }

// Sizes for the memory budget.
const (
	prowSize    = int64(unsafe.Sizeof(prow{}))
	pcallSize   = int64(unsafe.Sizeof(pcall{}))
	presultSize = int64(unsafe.Sizeof(presult{}))
	pattSize    = int64(unsafe.Sizeof(patt{}))
	plabelSize  = int64(unsafe.Sizeof(plabel{}))
	spanSize    = int64(unsafe.Sizeof(span{}))
)

// tables are a part's side tables: the list elements of its rows.
type tables struct {
	calls   []pcall
	results []presult
	atts    []patt
	emojis  []span
	labels  []plabel
}

// pack fills r from e with seq, copying every string into a.
func (r *prow) pack(e *schema.Entry, seq uint64, a *arena, t *tables) {
	var kb [256]byte
	*r = prow{seq: int64(seq), offset: e.Offset, line: e.Line, ts: tsMicros(e.TS), hasTS: !e.TS.IsZero(), object: int32(e.Object),
		callsOmitted: clampInt32(e.ToolCallsOmitted), resultsOmitted: clampInt32(e.ToolResultsOmitted)}
	s := &r.s
	s[sKey] = a.bytes(e.AppendKey(kb[:0]))
	s[sFormat] = a.str(string(e.Format))
	s[sHost] = a.str(e.Host)
	s[sPath] = a.str(e.Path)
	s[sSession] = a.str(e.SessionID)
	s[sEntry] = a.str(e.EntryID)
	s[sParent] = a.str(e.ParentID)
	s[sParentSession] = a.str(e.ParentSessionID)
	s[sKind] = a.str(string(e.Kind))
	s[sRole] = a.str(string(e.Role))
	s[sSubtype] = a.str(e.Subtype)
	s[sText] = a.str(e.Text)
	s[sModel] = a.str(e.Model)
	s[sProvider] = a.str(e.Provider)
	s[sMessage] = a.str(e.MessageID)
	s[sRequest] = a.str(e.RequestID)
	s[sUsageKey] = a.str(e.UsageKey)
	s[sStopReason] = a.str(e.StopReason)
	s[sSender] = a.str(e.Sender)
	s[sCWD] = a.str(e.CWD)
	s[sGitBranch] = a.str(e.GitBranch)
	s[sAgentVersion] = a.str(e.AgentVersion)
	s[sAgentID] = a.str(e.AgentID)
	s[sAgentType] = a.str(e.AgentType)
	s[sSlug] = a.str(e.Slug)
	s[sCommand] = a.str(e.Command)
	s[sCommandArgs] = a.str(e.CommandArgs)
	s[sTitle] = a.str(e.Title)
	s[sRaw] = a.bytes(e.Raw)
	if e.Meta {
		r.flags |= fMeta
	}
	if e.Copy {
		r.flags |= fCopy
	}
	if e.Truncated {
		r.flags |= fTruncated
	}
	if e.Sidechain {
		r.flags |= fSidechain
	}
	if e.Background {
		r.flags |= fBackground
	}
	if u := e.Usage; u != nil {
		r.flags |= fUsage
		r.usage = [7]int64{u.Input, u.Output, u.CacheRead, u.CacheWrite, u.CacheWrite5m, u.CacheWrite1h, u.Reasoning}
		s[sSpeed] = a.str(u.Speed)
	}
	if e.CostUSD != nil {
		r.flags |= fCost
		r.cost = *e.CostUSD
	}
	r.calls = rng{start: uint32(len(t.calls)), n: uint32(len(e.ToolCalls))}
	for i := range e.ToolCalls {
		tc := &e.ToolCalls[i]
		t.calls = append(t.calls, pcall{id: a.str(tc.ID), name: a.str(tc.Name), input: a.bytes(tc.Input)})
	}
	r.results = rng{start: uint32(len(t.results)), n: uint32(len(e.ToolResults))}
	for i := range e.ToolResults {
		tr := &e.ToolResults[i]
		t.results = append(t.results, presult{id: a.str(tr.ToolCallID), content: a.str(tr.Content), isError: tr.IsError})
	}
	r.atts = rng{start: uint32(len(t.atts)), n: uint32(len(e.Attachments))}
	for i := range e.Attachments {
		at := &e.Attachments[i]
		t.atts = append(t.atts, patt{filename: a.str(at.Filename), mimeType: a.str(at.MimeType), size: a.str(at.Size)})
	}
	if rc := e.Reaction; rc != nil {
		r.flags |= fReaction
		s[sReactionMessage] = a.str(rc.MessageID)
		r.emojis = rng{start: uint32(len(t.emojis)), n: uint32(len(rc.Emojis))}
		for _, em := range rc.Emojis {
			t.emojis = append(t.emojis, a.str(em))
		}
	}
	r.labels = rng{start: uint32(len(t.labels)), n: uint32(len(e.Labels))}
	for k, v := range e.Labels {
		t.labels = append(t.labels, plabel{key: a.str(k), value: a.str(v)})
	}
	if o := e.Origin; o != nil {
		r.flags |= fOrigin
		s[sOriginProvider] = a.str(o.Provider)
		s[sOriginSurface] = a.str(o.Surface)
		s[sOriginChatType] = a.str(o.ChatType)
		s[sOriginFrom] = a.str(o.From)
		s[sOriginLabel] = a.str(o.Label)
	}
}

// scratch holds what unpacked rows point to (optional strings, ts, usage,
// cost, lists, structs) for one batch of rows; reset drops it for the next
// batch.
type scratch struct {
	// strs holds the optional strings. A slice grown by append leaves the
	// earlier rows' pointers on its previous array, which they keep alive.
	strs      []string
	usages    []usage
	costs     []float64
	tss       []int64
	calls     []toolCall
	results   []toolResult
	atts      []attachment
	reactions []reaction
	emojis    []string
	origins   []origin
	// labels is the last labels map unpacked, kept from batch to batch:
	// the rows of a file share a few label sets (one per host), and a
	// row whose labels equal it shares it instead of a map of its own.
	labels *map[string]string
}

// opt returns the optional string at s: nil (NULL) when it is empty.
func (sc *scratch) opt(a *arena, s span) *string {
	if s.n == 0 {
		return nil
	}
	sc.strs = append(sc.strs, a.get(s))
	return &sc.strs[len(sc.strs)-1]
}

func (sc *scratch) reset() {
	clear(sc.strs)
	clear(sc.usages)
	clear(sc.calls)
	clear(sc.results)
	clear(sc.atts)
	clear(sc.reactions)
	clear(sc.emojis)
	clear(sc.origins)
	*sc = scratch{
		strs: sc.strs[:0], usages: sc.usages[:0], costs: sc.costs[:0], tss: sc.tss[:0], calls: sc.calls[:0], results: sc.results[:0],
		atts: sc.atts[:0], reactions: sc.reactions[:0], emojis: sc.emojis[:0], origins: sc.origins[:0],
		labels: sc.labels,
	}
}

// unpack fills out from r. Strings alias a; what out points to lives in
// sc until sc.reset.
func (r *prow) unpack(out *row, a *arena, t *tables, sc *scratch) {
	s := &r.s
	*out = row{
		Seq: r.seq, Key: a.get(s[sKey]), Format: a.get(s[sFormat]), Host: sc.opt(a, s[sHost]), Path: sc.opt(a, s[sPath]),
		Offset: r.offset, Line: r.line, Object: r.object, SessionID: a.get(s[sSession]), EntryID: a.get(s[sEntry]),
		ParentID: sc.opt(a, s[sParent]), ParentSessionID: sc.opt(a, s[sParentSession]), Kind: a.get(s[sKind]),
		Role: sc.opt(a, s[sRole]), Subtype: sc.opt(a, s[sSubtype]), Text: sc.opt(a, s[sText]),
		Meta: r.flags&fMeta != 0, Copy: r.flags&fCopy != 0, Truncated: r.flags&fTruncated != 0,
		Model: sc.opt(a, s[sModel]), Provider: sc.opt(a, s[sProvider]), MessageID: sc.opt(a, s[sMessage]),
		RequestID: sc.opt(a, s[sRequest]), UsageKey: sc.opt(a, s[sUsageKey]), StopReason: sc.opt(a, s[sStopReason]),
		Sender: sc.opt(a, s[sSender]), CWD: sc.opt(a, s[sCWD]), GitBranch: sc.opt(a, s[sGitBranch]),
		AgentVersion: sc.opt(a, s[sAgentVersion]), Sidechain: r.flags&fSidechain != 0, Background: r.flags&fBackground != 0, AgentID: sc.opt(a, s[sAgentID]),
		AgentType: sc.opt(a, s[sAgentType]), Slug: sc.opt(a, s[sSlug]), Command: sc.opt(a, s[sCommand]),
		CommandArgs: sc.opt(a, s[sCommandArgs]), ToolCallsOmitted: r.callsOmitted, ToolResultsOmitted: r.resultsOmitted, Title: sc.opt(a, s[sTitle]), Raw: sc.opt(a, s[sRaw]),
	}
	if r.hasTS {
		sc.tss = append(sc.tss, r.ts)
		out.TS = &sc.tss[len(sc.tss)-1]
	}
	if r.flags&fUsage != 0 {
		u := &r.usage
		sc.usages = append(sc.usages, usage{Input: u[0], Output: u[1], CacheRead: u[2], CacheWrite: u[3],
			CacheWrite5m: u[4], CacheWrite1h: u[5], Reasoning: u[6], Speed: sc.opt(a, s[sSpeed])})
		out.Usage = &sc.usages[len(sc.usages)-1]
	}
	if r.flags&fCost != 0 {
		sc.costs = append(sc.costs, r.cost)
		out.CostUSD = &sc.costs[len(sc.costs)-1]
	}
	if r.calls.n > 0 {
		i := len(sc.calls)
		for _, c := range t.calls[r.calls.start : r.calls.start+r.calls.n] {
			sc.calls = append(sc.calls, toolCall{ID: a.get(c.id), Name: a.get(c.name), Input: sc.opt(a, c.input)})
		}
		out.ToolCalls = sc.calls[i:len(sc.calls):len(sc.calls)]
	}
	if r.results.n > 0 {
		i := len(sc.results)
		for _, c := range t.results[r.results.start : r.results.start+r.results.n] {
			sc.results = append(sc.results, toolResult{ToolCallID: a.get(c.id), IsError: c.isError, Content: sc.opt(a, c.content)})
		}
		out.ToolResults = sc.results[i:len(sc.results):len(sc.results)]
	}
	if r.atts.n > 0 {
		i := len(sc.atts)
		for _, c := range t.atts[r.atts.start : r.atts.start+r.atts.n] {
			sc.atts = append(sc.atts, attachment{Filename: sc.opt(a, c.filename), MimeType: sc.opt(a, c.mimeType), Size: sc.opt(a, c.size)})
		}
		out.Attachments = sc.atts[i:len(sc.atts):len(sc.atts)]
	}
	if r.flags&fReaction != 0 {
		i := len(sc.emojis)
		for _, e := range t.emojis[r.emojis.start : r.emojis.start+r.emojis.n] {
			sc.emojis = append(sc.emojis, a.get(e))
		}
		sc.reactions = append(sc.reactions, reaction{MessageID: a.get(s[sReactionMessage]), Emojis: sc.emojis[i:len(sc.emojis):len(sc.emojis)]})
		out.Reaction = &sc.reactions[len(sc.reactions)-1]
	}
	if r.labels.n > 0 {
		out.Labels = sc.labelMap(t.labels[r.labels.start:r.labels.start+r.labels.n], a)
	}
	if r.flags&fOrigin != 0 {
		sc.origins = append(sc.origins, origin{Provider: sc.opt(a, s[sOriginProvider]), Surface: sc.opt(a, s[sOriginSurface]),
			ChatType: sc.opt(a, s[sOriginChatType]), From: sc.opt(a, s[sOriginFrom]), Label: sc.opt(a, s[sOriginLabel])})
		out.Origin = &sc.origins[len(sc.origins)-1]
	}
}

// labelMap returns the map of labels ls: the last one made when it holds
// the same labels, else a new one. Rows must not change it.
func (sc *scratch) labelMap(ls []plabel, a *arena) *map[string]string {
	if sc.labels != nil && len(*sc.labels) == len(ls) {
		m := *sc.labels
		same := true
		for _, l := range ls {
			if v, ok := m[a.get(l.key)]; !ok || v != a.get(l.value) {
				same = false
				break
			}
		}
		if same {
			return sc.labels
		}
	}
	m := make(map[string]string, len(ls))
	for _, l := range ls {
		// Copies: the map outlives the part whose arena holds the spans.
		m[strings.Clone(a.get(l.key))] = strings.Clone(a.get(l.value))
	}
	sc.labels = &m
	return sc.labels
}

// clampInt32 returns n within int32's range.
func clampInt32(n int) int32 { return int32(max(min(n, math.MaxInt32), math.MinInt32)) }
