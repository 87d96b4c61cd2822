package copilot_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/copilot"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// shutdown returns a session.shutdown line with id and the models'
// usage: each of use is "model in out cacheRead cacheWrite reasoning".
func shutdown(id string, use ...string) string {
	var ms []string
	for _, u := range use {
		var m string
		var in, out, cr, cw, rs int
		if _, err := fmt.Sscan(u, &m, &in, &out, &cr, &cw, &rs); err != nil {
			panic(err)
		}
		ms = append(ms, fmt.Sprintf(`%q:{"requests":{"count":1,"cost":1},"usage":{"inputTokens":%d,"outputTokens":%d,"cacheReadTokens":%d,"cacheWriteTokens":%d,"reasoningTokens":%d}}`, m, in, out, cr, cw, rs))
	}
	return fmt.Sprintf(`{"type":"session.shutdown","data":{"shutdownType":"routine","modelMetrics":{%s}},"id":%q,"timestamp":"2026-11-01T10:00:00.000Z","parentId":null}`, strings.Join(ms, ","), id)
}

const start = `{"type":"session.start","data":{"sessionId":"s1","producer":"copilot-agent","context":{"cwd":"/w"}},"id":"e0","timestamp":"2026-11-01T09:00:00.000Z","parentId":null}`

// parseLines parses lines with one parser and returns the entries with
// usage, keyed "<entry id>" → usage; it fails on any line error.
func parseLines(t *testing.T, path string, lines ...string) (map[string]schema.Usage, []schema.Entry) {
	t.Helper()
	p := copilot.New(parse.Config{Path: path})
	var all []schema.Entry
	for i, l := range lines {
		var err error
		all, err = p.Parse(all, jsonl.Line{Number: int64(i + 1), Bytes: []byte(l)})
		require.NoError(t, err, l)
	}
	got := map[string]schema.Usage{}
	for _, e := range all {
		if e.Usage != nil {
			require.Equal(t, "copilot:"+e.SessionID+":"+strings.SplitN(e.EntryID, ":", 2)[0]+":"+e.Model, e.UsageKey)
			got[e.EntryID] = *e.Usage
		}
	}
	return got, all
}

// Copilot's inputTokens includes the cache reads and writes and
// outputTokens the reasoning: input counts without the cache, output as
// written.
func TestParse_DisjointInput(t *testing.T) {
	got, _ := parseLines(t, "", start, shutdown("x1", "m 1000 50 400 100 20"))
	require.Equal(t, map[string]schema.Usage{
		"x1:m": {Input: 500, Output: 50, CacheRead: 400, CacheWrite: 100, Reasoning: 20},
	}, got)
}

// A resumed session's next shutdown is cumulative over its legs: it
// counts what grew since the previous shutdown, per model.
func TestParse_ResumedLegCountsDelta(t *testing.T) {
	got, _ := parseLines(t, "", start,
		shutdown("x1", "a 1000 50 400 100 0", "b 10 5 0 0 0"),
		`{"type":"session.resume","data":{},"id":"e2","timestamp":"2026-11-02T09:00:00.000Z","parentId":"x1"}`,
		shutdown("x2", "a 3000 80 1400 100 0", "b 10 5 0 0 0", "c 7 3 0 0 0"))
	require.Equal(t, map[string]schema.Usage{
		"x1:a": {Input: 500, Output: 50, CacheRead: 400, CacheWrite: 100},
		"x1:b": {Input: 10, Output: 5},
		"x2:a": {Input: 1000, Output: 30, CacheRead: 1000},
		"x2:c": {Input: 7, Output: 3},
	}, got)
}

// Counters lower than at the previous shutdown follow a reset (a
// compaction, an old version that does not restore them on resume): the
// shutdown's counters are the leg's own and count whole, for every model.
func TestParse_ResetCountsWhole(t *testing.T) {
	got, _ := parseLines(t, "", start,
		shutdown("x1", "a 50000 500 30000 0 200", "b 100 10 0 0 0"),
		shutdown("x2", "a 40000 700 10000 0 100", "b 200 20 0 0 0"))
	require.Equal(t, map[string]schema.Usage{
		"x1:a": {Input: 20000, Output: 500, CacheRead: 30000, Reasoning: 200},
		"x1:b": {Input: 100, Output: 10},
		"x2:a": {Input: 30000, Output: 700, CacheRead: 10000, Reasoning: 100},
		"x2:b": {Input: 200, Output: 20},
	}, got)
}

// A model of the previous shutdown missing from the next: the counters
// were reset, the others count whole though they grew.
func TestParse_MissingModelIsReset(t *testing.T) {
	got, _ := parseLines(t, "", start,
		shutdown("x1", "a 100 10 0 0 0", "b 100 10 0 0 0"),
		shutdown("x2", "a 300 30 0 0 0"))
	require.Equal(t, map[string]schema.Usage{
		"x1:a": {Input: 100, Output: 10},
		"x1:b": {Input: 100, Output: 10},
		"x2:a": {Input: 300, Output: 30},
	}, got)
}

// A shutdown written again (the same event re-sent) adds nothing: its
// counters equal the baseline, so no model has a leg.
func TestParse_ResentShutdownCountsOnce(t *testing.T) {
	s := shutdown("x1", "a 100 10 0 0 0")
	got, all := parseLines(t, "", start, s, s)
	require.Equal(t, map[string]schema.Usage{"x1:a": {Input: 100, Output: 10}}, got)
	last := all[len(all)-1]
	require.Equal(t, schema.KindEvent, last.Kind)
	require.Nil(t, last.Usage)
}

// A shutdown with a bad counter is reported and counts nothing, and the
// baseline stays where it was: the next shutdown counts both legs.
func TestParse_BadLegKeepsBaseline(t *testing.T) {
	p := copilot.New(parse.Config{})
	lines := []string{start,
		shutdown("x1", "a 100 10 0 0 0"),
		strings.Replace(shutdown("x2", "a 200 20 0 0 0"), `"outputTokens":20`, `"outputTokens":"20"`, 1),
		shutdown("x3", "a 300 30 0 0 0"),
	}
	var all []schema.Entry
	var errs []error
	for i, l := range lines {
		var err error
		all, err = p.Parse(all, jsonl.Line{Number: int64(i + 1), Bytes: []byte(l)})
		if err != nil {
			errs = append(errs, err)
		}
	}
	require.Len(t, errs, 1)
	var de *schema.DecodeError
	require.ErrorAs(t, errs[0], &de)
	require.Equal(t, int64(3), de.Line)
	require.ErrorIs(t, errs[0], parse.ErrBadField)
	var x3 *schema.Usage
	for _, e := range all {
		if e.EntryID == "x3:a" {
			x3 = e.Usage
		}
		if strings.HasPrefix(e.EntryID, "x2") {
			require.Nil(t, e.Usage, "the bad leg counts nothing")
		}
	}
	require.Equal(t, &schema.Usage{Input: 200, Output: 20}, x3)
}

// A leg's usage is no reply: Meta, so assistant messages are the
// assistant.message events; those carry no usage (their outputTokens are
// in the shutdown's figures).
func TestParse_LegTotalIsMeta(t *testing.T) {
	_, all := parseLines(t, "", start,
		`{"type":"assistant.message","data":{"messageId":"m1","content":"hi","outputTokens":10},"id":"e1","timestamp":"2026-11-01T09:00:01.000Z","parentId":"e0"}`,
		shutdown("x1", "a 100 10 0 0 0"))
	require.Len(t, all, 3)
	msg, leg := all[1], all[2]
	require.Equal(t, schema.RoleAssistant, msg.Role)
	require.False(t, msg.Meta)
	require.Nil(t, msg.Usage)
	require.Equal(t, "m1", msg.MessageID)
	require.Equal(t, schema.RoleAssistant, leg.Role)
	require.True(t, leg.Meta)
	require.Equal(t, copilot.SubtypeLegTotal, leg.Subtype)
}

// Lines before session.start (none in practice, but a file cut at its
// start) belong to the session the directory names.
func TestParse_SessionFromDirectory(t *testing.T) {
	_, all := parseLines(t, "/h/.copilot/session-state/abc-123/events.jsonl",
		`{"type":"user.message","data":{"content":"x"},"id":"u1","timestamp":"2026-11-01T09:00:01.000Z","parentId":null}`,
		start)
	require.Equal(t, "abc-123", all[0].SessionID)
	require.Equal(t, "s1", all[1].SessionID)
}

// A shutdown without metrics (none written, or {}) says nothing about the
// counters: the baseline stays, and the next shutdown counts only what
// grew since the last one with metrics.
func TestParse_ShutdownWithoutMetricsKeepsBaseline(t *testing.T) {
	got, _ := parseLines(t, "", start,
		shutdown("x1", "a 100 10 0 0 0"),
		`{"type":"session.shutdown","data":{"shutdownType":"error"},"id":"x2","timestamp":"2026-11-01T10:00:00.000Z","parentId":null}`,
		shutdown("x3"),
		shutdown("x4", "a 300 30 0 0 0"))
	require.Equal(t, map[string]schema.Usage{
		"x1:a": {Input: 100, Output: 10},
		"x4:a": {Input: 200, Output: 20},
	}, got)
}
