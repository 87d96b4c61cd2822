package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/ccusage"
	"github.com/sessionpipe/sessionpipe/pipeline/report"
)

// calendarJSON is the JSON of `sessionpipe daily|weekly|monthly --json`.
type calendarJSON struct {
	Period   string        `json:"period"`
	TimeZone string        `json:"timezone"`
	Rows     []report.Row  `json:"rows"`
	Total    report.Totals `json:"total"`
}

func ourCalendar(t *testing.T, name, tz string, paths ...string) calendarJSON {
	t.Helper()
	code, stdout, stderr := runCommand(t, append([]string{name, "--json", "-q", "--timezone", tz}, paths...)...)
	require.Equal(t, exitOK, code, stderr)
	var got calendarJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &got), stdout)
	return got
}

func rowTotals(r report.Totals) totals {
	return totals{r.InputTokens, r.OutputTokens, r.CacheReadTokens, r.CacheWriteTokens, r.CostUSD}
}

// The daily, weekly and monthly reports give ccusage's figures for every
// period, in UTC and in a time zone far from it (a day there starts at
// 15:00 UTC the day before), on the samples both tools agree on per
// session (see TestSessions_SameTotalsAsCcusage).
func TestReports_SameAsCcusage(t *testing.T) {
	tests := []struct {
		name string
		kind ccusage.Kind
		dir  string
		skip []string
	}{
		// spotter/subagent.jsonl: see TestReports_CcusageDailyCountsProgressMirrors.
		{name: "ClaudeCode", kind: ccusage.Claude, dir: "claude-code", skip: []string{"claude-code-log", "spotter/subagent.jsonl"}},
		{name: "Codex", kind: ccusage.Codex, dir: "codex/localpush"},
		{name: "CodexFixtures", kind: ccusage.Codex, dir: "codex/ccusage/sessions/project-alpha"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := corpusFiles(t, tc.dir, tc.skip...)
			root := ccusage.Layout(t, tc.kind, files)
			for _, rep := range []string{"daily", "weekly", "monthly"} {
				if rep == "weekly" && tc.kind == ccusage.Codex {
					continue // "The weekly report is not available for Codex usage."
				}
				for _, tz := range []string{"UTC", "Asia/Tokyo", "America/Los_Angeles"} {
					theirs, theirTotal := ccusage.Periods(t, tc.kind, root, rep, tz)
					ours := ourCalendar(t, rep, tz, files...)
					msg := rep + " " + tz
					require.Equal(t, tz, ours.TimeZone)
					require.NotEmpty(t, ours.Rows, msg)
					require.Len(t, ours.Rows, len(theirs), "%s: %+v", msg, ours.Rows)
					for i, p := range theirs {
						require.Equal(t, p.Name, ours.Rows[i].Period, msg)
						requireSame(t, fromCcusage(p.Usage), rowTotals(ours.Rows[i].Totals), msg+" "+p.Name)
					}
					requireSame(t, fromCcusage(theirTotal), rowTotals(ours.Total), msg+" total")
				}
			}
		})
	}
}

// The blocks report gives ccusage's blocks (start, end, gaps, calls,
// tokens, cost) on the Claude Code samples.
func TestBlocks_SameAsCcusage(t *testing.T) {
	files := corpusFiles(t, "claude-code", "claude-code-log")
	theirs := ccusage.Blocks(t, ccusage.Layout(t, ccusage.Claude, files))
	code, stdout, stderr := runCommand(t, append([]string{"blocks", "--json", "-q"}, files...)...)
	require.Equal(t, exitOK, code, stderr)
	var ours struct{ Blocks []report.Block }
	require.NoError(t, json.Unmarshal([]byte(stdout), &ours))
	require.Len(t, ours.Blocks, len(theirs))
	require.Greater(t, len(theirs), 2, "blocks and gaps to compare")
	for i, b := range theirs {
		o := ours.Blocks[i]
		start, err := time.Parse(time.RFC3339, b.StartTime)
		require.NoError(t, err)
		end, err := time.Parse(time.RFC3339, b.EndTime)
		require.NoError(t, err)
		require.Equal(t, start, o.Start, "block %d start", i)
		require.Equal(t, end, o.End, "block %d end", i)
		require.Equal(t, b.IsGap, o.Gap, "block %d", i)
		require.Equal(t, b.Entries, o.Calls, "block %d calls", i)
		requireSame(t, totals{b.Tokens.Input, b.Tokens.Output, b.Tokens.CacheRead, b.Tokens.CacheWrite, b.CostUSD}, rowTotals(o.Totals), b.ID)
	}
}

// With no PATH, sessions and the reports read the well-known locations of
// every agent under $HOME, as run does, and say so; with none there, the
// error lists where they looked.
func TestSessions_WellKnownLocations(t *testing.T) {
	home := t.TempDir()
	for _, k := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_AGENT_DIR", "COPILOT_HOME", "GROK_HOME", "QWEN_HOME", "QWEN_RUNTIME_DIR", "KIMI_SHARE_DIR", "OPENCODE_DATA_DIR", "XDG_DATA_HOME", "GOOSE_PATH_ROOT"} {
		t.Setenv(k, "")
	}
	t.Setenv("HOME", home)
	for _, cmd := range []string{"sessions", "daily", "blocks"} {
		code, _, stderr := runCommand(t, cmd)
		require.Equal(t, exitError, code, stderr)
		require.Contains(t, stderr, "no transcripts in the well-known locations ("+filepath.Join(home, ".claude", "projects", "**", "*.jsonl"))
	}

	src, err := os.ReadFile(filepath.Join(corpus, "claude-code/ccusage/projects/project-alpha/session-alpha/chat.jsonl"))
	require.NoError(t, err)
	dst := filepath.Join(home, ".claude", "projects", "p1", "s.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
	require.NoError(t, os.WriteFile(dst, src, 0o644))
	code, stdout, stderr := runCommand(t, "sessions", "--json")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stderr, "no PATH given: reading "+filepath.Join(home, ".claude", "projects", "**", "*.jsonl"))
	want := ours(t, dst)
	var got []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	require.Len(t, got, len(want))
	require.NotEmpty(t, want)

	day := ourCalendar(t, "daily", "UTC")
	require.Equal(t, fromSessions(want), rowTotals(day.Total))
}

// Hand-computed: the ccusage fixture's three calls (2026-01-09 10:00 and
// 12:30, 2026-01-10 09:15 UTC) fall on two days in UTC and on one in
// Honolulu (UTC-10), and in one week starting on Sunday 2026-01-04, or on
// Monday 2026-01-05.
func TestReports_TimeZonesAndWeeks(t *testing.T) {
	path := filepath.Join(corpus, "claude-code/ccusage/projects/project-alpha/session-alpha/chat.jsonl")
	periods := func(c calendarJSON) (ps []string) {
		for _, r := range c.Rows {
			ps = append(ps, r.Period)
		}
		return ps
	}
	require.Equal(t, []string{"2026-01-09", "2026-01-10"}, periods(ourCalendar(t, "daily", "UTC", path)))
	require.Equal(t, []string{"2026-01-09"}, periods(ourCalendar(t, "daily", "Pacific/Honolulu", path)))
	require.Equal(t, []string{"2026-01-04"}, periods(ourCalendar(t, "weekly", "UTC", path)))
	code, stdout, stderr := runCommand(t, "weekly", "--json", "-q", "--timezone", "UTC", "--start-of-week", "monday", path)
	require.Equal(t, exitOK, code, stderr)
	var c calendarJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &c))
	require.Equal(t, []string{"2026-01-05"}, periods(c))
	require.Equal(t, []string{"2026-01"}, periods(ourCalendar(t, "monthly", "UTC", path)))

	// --since and --until take dates in the report's time zone: in
	// Honolulu, 2026-01-09 ends at 10:00 UTC on the 10th, after all three.
	code, stdout, stderr = runCommand(t, "daily", "--json", "-q", "--timezone", "Pacific/Honolulu", "--until", "2026-01-09", path)
	require.Equal(t, exitOK, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(stdout), &c))
	require.Equal(t, int64(3), c.Total.Calls)
	code, stdout, stderr = runCommand(t, "daily", "--json", "-q", "--timezone", "UTC", "--until", "2026-01-09", path)
	require.Equal(t, exitOK, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(stdout), &c))
	require.Equal(t, int64(2), c.Total.Calls)

	// Split by model: a row per day and model.
	code, stdout, stderr = runCommand(t, "daily", "--json", "-q", "--timezone", "UTC", "--by", "model", path)
	require.Equal(t, exitOK, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(stdout), &c))
	require.Len(t, c.Rows, 3)
	require.Equal(t, "claude-opus-4-20250514", c.Rows[0].Group)

	for _, bad := range [][]string{{"daily", "--timezone", "Mars/Olympus"}, {"daily", "--by", "colour"}, {"weekly", "--start-of-week", "someday"}} {
		code, _, stderr := runCommand(t, append(bad, path)...)
		require.Equal(t, exitUsage, code, "%v: %s", bad, stderr)
	}
}

// Claude Code mirrors a subagent's messages into its parent's transcript as
// `progress` lines (data.type agent_progress) that carry the message's
// usage; the subagent's own file holds the call (docs/ARCHITECTURE.md,
// "Counting rules"). ccusage's daily report counts those mirrors, its
// session report does not: on spotter's subagent.jsonl they disagree by the
// mirrored calls, and sessionpipe's daily report agrees with the session
// report of both tools.
func TestReports_CcusageDailyCountsProgressMirrors(t *testing.T) {
	path := filepath.Join(corpus, "claude-code/spotter/subagent.jsonl")
	root := ccusage.Layout(t, ccusage.Claude, []string{path})
	sessionTotal := fromCcusage(ccusage.Totals(t, ccusage.Claude, root))
	_, dailyTotal := ccusage.Periods(t, ccusage.Claude, root, "daily", "UTC")
	ourDaily := ourCalendar(t, "daily", "UTC", path)
	requireSame(t, sessionTotal, rowTotals(ourDaily.Total), "ccusage's session report")
	requireSame(t, fromSessions(ours(t, path)), rowTotals(ourDaily.Total), "our session report")
	extra := fromCcusage(dailyTotal).minus(sessionTotal)
	require.Positive(t, extra.Output, "ccusage's daily report counts the mirrored calls")
	t.Logf("ccusage daily counts %+v more than its session report", extra)
}
