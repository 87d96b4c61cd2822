package index

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/corpusgen"
	"github.com/sessionpipe/sessionpipe/internal/testutil/testcorpus"
	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
)

// parseFile reads one transcript as `sessionpipe sessions` does.
func parseFile(tb testing.TB, path string) []schema.Entry {
	tb.Helper()
	var es []schema.Entry
	_, err := formats.ReadFile(context.Background(), path, formats.ReadConfig{Config: parse.Config{Host: "h"}},
		func(e *schema.Entry) { es = append(es, *e) }, func(err error) { tb.Fatal(err) })
	require.NoError(tb, err)
	return es
}

// An Anthropic-compatible backend (MiniMax through Claude Code) writes
// cache_creation_input_tokens with a cache_creation breakdown of zeros.
// The cache write is the larger of the two, so the final line of a
// streamed response is the largest and counts: its output and its cache
// write.
func TestAggregator_CacheWriteBreakdownOfZeros(t *testing.T) {
	t.Parallel()
	es := parseFile(t, "../formats/claude/testdata/cache-write-breakdown/input.jsonl")
	a := NewAggregator(price.Default())
	addAll(a, es)
	s := one(t, a, "s-mm")
	require.Equal(t, int64(5), s.APICalls)
	require.Equal(t, int64(412+57+20+441+5), s.OutputTokens, "the final line of each response counts")
	require.Equal(t, int64(3685+606+5000+8037+800), s.CacheWriteTokens)

	// The writes whose tier the line does not name cost the 5-minute
	// rate: msg_part's 4,000 unnamed tokens, its 1,000 1-hour ones.
	p, ok := price.Default().Lookup("claude-sonnet-4-6")
	require.True(t, ok)
	var part schema.Entry
	for _, e := range es {
		if e.MessageID == "msg_part" {
			part = e
		}
	}
	require.NotNil(t, part.Usage)
	want := 3*p.Input + 20*p.Output + 4000*p.CacheWrite5m + 1000*p.CacheWrite1h
	require.InDelta(t, want, p.Cost(*part.Usage), 1e-12)
}

// Claude Code's own notices (model "<synthetic>") are not replies: not
// assistant messages, and they do not end a turn. Entries written before
// the parser made them events still carry them as messages.
func TestAggregator_SyntheticNoticeIsNoReply(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		kind schema.Kind
	}{{"AsMessage", schema.KindMessage}, {"AsEvent", schema.KindEvent}} {
		t.Run(tt.name, func(t *testing.T) {
			b := &builder{format: schema.FormatClaudeCode, session: "s", path: "s.jsonl"}
			notice := b.entry("n1", at(1), tt.kind, schema.RoleAssistant)
			notice.Model, notice.MessageID = "<synthetic>", "5e0c2a4f"
			es := []schema.Entry{
				b.user("u1", at(0), "fix the build"),
				notice,
				b.user("u2", at(2), "fix the build, please"),
				b.assistant("a1", at(3), "msg_real", schema.Usage{Input: 4, Output: 30}),
			}
			a := NewAggregator(nil)
			addAll(a, es)
			s := one(t, a, "s")
			require.Equal(t, int64(1), s.AssistantMessages)
			require.Equal(t, int64(1), s.APICalls)
			require.Equal(t, int64(2), s.UserMessages)
			require.Equal(t, int64(1), s.Turns, "no reply came between the two inputs")
		})
	}
	t.Run("AloneIsNoConversation", func(t *testing.T) {
		b := &builder{format: schema.FormatClaudeCode, session: "s", path: "s.jsonl"}
		notice := b.entry("n1", at(1), schema.KindMessage, schema.RoleAssistant)
		notice.Model = "<synthetic>"
		a := NewAggregator(nil)
		addAll(a, []schema.Entry{notice})
		require.Empty(t, a.Sessions())
	})
}

// compactions counts how often the conversation was compacted: each
// compaction boundary of the main transcript once. A subagent compacting
// its own context, the boundary replayed at the top of a compaction
// agent's copy (even when the main file is gone) and microcompactions do
// not count.
func TestAggregator_CompactionsOfTheConversation(t *testing.T) {
	t.Parallel()
	main := &builder{format: schema.FormatClaudeCode, session: "s", path: "s.jsonl"}
	boundary := func(b *builder, id string, sec int) schema.Entry {
		e := b.entry(id, at(sec), schema.KindCompaction, schema.RoleSystem)
		e.Subtype = "compact_boundary"
		return e
	}
	micro := main.entry("mc1", at(5), schema.KindEvent, schema.RoleSystem)
	micro.Subtype = "microcompact_boundary"
	mainFile := []schema.Entry{
		main.user("u1", at(0), "go"),
		boundary(main, "cb1", 10),
		micro,
		boundary(main, "cb2", 20),
	}
	// The second compaction agent's copy starts with the first boundary.
	copyB := &builder{format: schema.FormatClaudeCode, session: "s", path: "s/subagents/agent-acompact-2.jsonl"}
	copyFile := []schema.Entry{boundary(copyB, "cb1", 10), copyB.user("u1", at(0), "go")}
	for i := range copyFile {
		copyFile[i].Sidechain, copyFile[i].AgentID = true, "acompact-2"
	}
	// A subagent compacts its own context.
	subB := &builder{format: schema.FormatClaudeCode, session: "s", path: "s/subagents/agent-a1.jsonl"}
	subFile := []schema.Entry{boundary(subB, "sb1", 15)}
	subFile[0].Sidechain, subFile[0].AgentID = true, "a1"
	subAsMain := subFile[0]
	subAsMain.EntryID, subAsMain.Sidechain = "sb2", false // a boundary line without isSidechain
	subFile = append(subFile, subAsMain)

	require.Equal(t, int64(2), bothOrders(t, mainFile, append(copyFile, subFile...))[0].Compactions)

	// Without the main file, the copies tell of no compaction.
	a := NewAggregator(nil)
	addAll(a, copyFile, subFile)
	require.Zero(t, one(t, a, "s").Compactions)
}

// Claude Code writes history again with the original uuids, timestamps
// and message ids: a second /compact re-appends earlier history to the
// transcript, and a background hand-off or --fork-session replays the
// chain under a new sessionId ("sessionKind":"bg") while the original
// may go on longer. Every API call still counts once, in the session
// where it first happened: the sessions are what they are without the
// repeats (but for the new compaction), and a copy counts only its own
// lines.
func TestAggregator_RepeatedHistoryCountsOnce(t *testing.T) {
	t.Parallel()
	gen := func() string {
		dir := t.TempDir()
		_, err := corpusgen.WriteTree(t.Context(), corpusgen.TreeConfig{
			Dir: dir, Format: corpusgen.MixClaude, Bytes: 3 << 20, Seed: 19, ResumeRate: -1,
			MinSessionBytes: 40 << 10, MaxSessionBytes: 200 << 10,
		})
		require.NoError(t, err)
		return dir
	}
	plain, repeated := gen(), gen()
	rep := testcorpus.WriteRepeats(t, repeated)
	require.Positive(t, rep.Compactions)
	require.NotEmpty(t, rep.Forks)

	sessions := func(dir string) map[string]Session {
		a := NewAggregator(price.Default())
		for _, f := range readTree(t, dir) {
			addAll(a, f)
		}
		out := map[string]Session{}
		for _, s := range a.Sessions() {
			out[s.SessionID] = s
		}
		return out
	}
	want, got := sessions(plain), sessions(repeated)
	require.Len(t, got, len(want)+len(rep.Forks))
	compactions := int64(0)
	for id, w := range want {
		g := got[id]
		compactions += g.Compactions - w.Compactions
		g.Compactions = w.Compactions
		require.Equal(t, w, g, "session %s", id)
	}
	require.Equal(t, int64(rep.Compactions), compactions, "one compaction more per second /compact")
	for id, orig := range rep.Forks {
		require.Contains(t, want, orig)
		g := got[id]
		require.Equal(t, int64(rep.OwnCalls[id]), g.APICalls, "background copy %s counts only its own calls", id)
	}
}

// readTree reads every transcript under dir, one slice per file in file
// order, as `sessionpipe sessions` does.
func readTree(tb testing.TB, dir string) [][]schema.Entry {
	tb.Helper()
	found, err := formats.Walk([]string{dir}, func(err error) { tb.Fatal(err) })
	require.NoError(tb, err)
	var out [][]schema.Entry
	for _, f := range found {
		if f.Meta {
			continue
		}
		out = append(out, parseFile(tb, f.Path))
	}
	return out
}

// An origin's flags take the byte that held the sidechain bool before
// background existed: stored facts read the same, background round-trips,
// and an unknown flag is a corrupt record.
func TestOriginCodec_Flags(t *testing.T) {
	t.Parallel()
	for _, o := range []origin{{}, {sidechain: true}, {background: true}, {sidechain: true, background: true, line: 7, agent: "a"}} {
		var e encoder
		e.origin(&o)
		d := decoder{b: e.b, v: recordVersion}
		require.Equal(t, o, d.origin())
		require.NoError(t, d.end())
	}
	var e encoder
	e.origin(&origin{line: 3})
	legacy := append(e.b[:len(e.b)-1:len(e.b)-1], 1) // e.bool(true), as written before
	d := decoder{b: legacy, v: recordVersion}
	require.True(t, d.origin().sidechain)
	require.NoError(t, d.end())
	bad := append(e.b[:len(e.b)-1:len(e.b)-1], 4)
	d = decoder{b: bad, v: recordVersion}
	d.origin()
	require.Error(t, d.end())
}

// A background hand-off or --fork-session replays the chain under a new
// session id ("sessionKind":"bg") with the same uuids, timestamps and
// message ids. Both sessions start at the same time; the original goes
// on longer than the copy. The shared calls count in the original, in
// either arrival order; the copy counts its own.
func TestAggregator_BackgroundCopyTakesNothingFromItsOriginal(t *testing.T) {
	t.Parallel()
	o := &builder{format: schema.FormatClaudeCode, session: "orig", path: "orig.jsonl"}
	c := &builder{format: schema.FormatClaudeCode, session: "bg", path: "bg.jsonl"}
	shared := func(b *builder) []schema.Entry {
		es := []schema.Entry{b.user("u1", at(0), "plan it"), b.assistant("a1", at(1), "m1", schema.Usage{Input: 5, Output: 7})}
		for i := range es {
			es[i].Background = b == c
		}
		return es
	}
	orig := append(shared(o), o.user("u2", at(20), "go on"), o.assistant("a2", at(21), "m2", schema.Usage{Output: 3}))
	own := c.assistant("a3", at(2), "m3", schema.Usage{Output: 11})
	own.Background = true
	copied := append(shared(c), own)
	s := bothOrders(t, orig, copied)
	require.Len(t, s, 2)
	byID := map[string]Session{s[0].SessionID: s[0], s[1].SessionID: s[1]}
	require.Equal(t, [4]int64{2, 2, 2, 2}, [4]int64{byID["orig"].Turns, byID["orig"].UserMessages, byID["orig"].AssistantMessages, byID["orig"].APICalls})
	require.Equal(t, [4]int64{0, 0, 1, 1}, [4]int64{byID["bg"].Turns, byID["bg"].UserMessages, byID["bg"].AssistantMessages, byID["bg"].APICalls})
	require.Equal(t, int64(11), byID["bg"].OutputTokens)
}

// TestFact_FindSession: a fact finds the occurrence of each of its
// sessions, by looking at each below sessionIndexMin occurrences and
// through its map from there on, and none of a session it is not in; the
// map goes with the fact when it is evicted.
func TestFact_FindSession(t *testing.T) {
	fs := &facts[struct{}]{byKey: map[factKey]*fact[struct{}]{}, contested: map[*fact[struct{}]]struct{}{}}
	f := &fact[struct{}]{}
	sessions := make([]*session, 3*sessionIndexMin)
	for i := range sessions {
		sessions[i] = &session{}
		f.cands = append(f.cands, cand[struct{}]{s: sessions[i]})
		if m := fs.bySession[f]; m != nil {
			m[sessions[i]] = int32(i)
		}
		for j := 0; j <= i; j++ {
			require.Equal(t, j, fs.find(f, sessions[j]), "session %d of %d", j, i+1)
		}
		require.Equal(t, -1, fs.find(f, &session{}))
		require.Equal(t, i+1 >= sessionIndexMin, fs.bySession[f] != nil, "after %d occurrences", i+1)
	}
	require.Len(t, fs.bySession[f], len(sessions))

	fs.byKey[f.key] = f
	fs.evict(1, 0)
	require.Empty(t, fs.byKey)
	require.Empty(t, fs.bySession, "evicted with its fact")
}
