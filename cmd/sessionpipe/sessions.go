package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/sessionpipe/sessionpipe/cmd/internal/indexcmd"
	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/schema"
)

const sessionsUsage = `Usage: sessionpipe sessions [flags] [PATH...]

Prints per-session aggregates (turns, messages, API calls, tool calls and
errors, the four token counters, cost, models, compactions, subagents) of
the transcripts under PATH (by default the well-known locations of every
agent under $HOME), counted by the rules of docs/ARCHITECTURE.md
("Counting rules"): every API call, message and copy counted once. Bad lines are reported on stderr with
path:line and skipped; a last line without its newline is not counted yet.

PATH is a file, a directory (every transcript under it, at any depth) or a
glob ("~/.claude/projects/**/*.jsonl"). Only regular files are read: a
FIFO or device named as PATH is an error, one inside a directory is skipped.

Flags:
`

func runSessions(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sessions", sessionsUsage, stderr)
	asJSON := fs.Bool("json", false, "print a JSON array instead of a table")
	wide := fs.Bool("wide", false, "every column and whole ids (the table fits 120 columns without it)")
	since := fs.String("since", "", "count only entries at or after this date or time (YYYY-MM-DD, YYYYMMDD or RFC 3339)")
	until := fs.String("until", "", "count only entries up to this date (inclusive) or time")
	prices := fs.String("prices", "", "price file (LiteLLM- or models.dev-shaped rows, optional dated periods) overriding the embedded prices; every call is priced at its own time")
	format := fs.String("format", "", "only sessions of this format: "+formatList())
	workers := fs.Int("workers", 0, "files read in parallel (default: GOMAXPROCS)")
	shared := addOfflineFlags(fs)
	o, err := shared.parseOr(fs, args, stderr, os.Getenv)
	if err != nil {
		return err
	}
	o.workers = *workers
	from, to, err := parseRange(*since, *until)
	if err != nil {
		return err
	}
	if *format != "" && !schema.Format(*format).Valid() {
		return usageError{fmt.Sprintf("sessions: unknown format %q (want one of %s)", *format, formatList())}
	}
	defer tuneGC()() // before the price table: its parse makes garbage too
	table, err := indexcmd.LoadPrices(*prices)
	if err != nil {
		return err
	}
	start := time.Now()
	agg := index.NewAggregator(table)
	err = o.each(ctx, func(entries []schema.Entry) {
		for i := range entries {
			e := &entries[i]
			if !e.TS.IsZero() && (e.TS.Before(from) || (!to.IsZero() && e.TS.After(to))) {
				continue
			}
			agg.Add(e)
		}
	})
	if err != nil {
		return err
	}
	all := agg.Sessions()
	if *format != "" {
		kept := all[:0]
		for _, s := range all {
			if string(s.Format) == *format {
				kept = append(kept, s)
			}
		}
		all = kept
	}
	if !*shared.quiet {
		o.summary(time.Since(start))
	}
	return writeSessions(stdout, all, *asJSON, *wide)
}

// writeSessions prints sessions as a table, or as an indented JSON array
// when asJSON is set (`sessions --json`, `run -once -json`).
func writeSessions(w io.Writer, all []index.Session, asJSON, wide bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(all)
	}
	return indexcmd.WriteSessionsTable(w, all, wide)
}

// gcBudget is the heap size at which the offline commands collect
// garbage, at least: they allocate short-lived entries at a high rate while
// the live heap (the aggregates) stays small, so collecting at a fixed
// budget rather than at every doubling of a small heap saves most of the
// collector's work. The budget follows the live heap (it plus
// gcHeadroom), so a corpus with more sessions than it fits still works.
const (
	gcBudget   = 160 << 20
	gcHeadroom = 96 << 20
)

// tuneGC switches the collector to the budget of gcBudget until the
// returned function is called.
func tuneGC() (restore func()) {
	oldPercent := debug.SetGCPercent(-1)
	undo := cli.SetMemoryLimit(gcBudget, gcHeadroom)
	return func() {
		undo()
		debug.SetGCPercent(oldPercent)
	}
}

func formatList() string {
	var names []string
	for _, f := range schema.Formats() {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}

// parseRange parses the --since and --until values. A date alone means the
// whole day (UTC): since from its start, until to its end.
func parseRange(since, until string) (from, to time.Time, err error) {
	return parseRangeIn(since, until, time.UTC)
}

// parseRangeIn is parseRange with dates in loc: a day starts and ends at
// midnight there.
func parseRangeIn(since, until string, loc *time.Location) (from, to time.Time, err error) {
	if since != "" {
		if from, _, err = parseWhen(since, loc); err != nil {
			return from, to, usageError{fmt.Sprintf("-since: %v", err)}
		}
	}
	if until != "" {
		var day bool
		if to, day, err = parseWhen(until, loc); err != nil {
			return from, to, usageError{fmt.Sprintf("-until: %v", err)}
		}
		if day {
			y, m, d := to.Date()
			to = time.Date(y, m, d+1, 0, 0, 0, 0, loc).Add(-time.Nanosecond) // a day of 23 or 25 hours too
		}
		if !from.IsZero() && to.Before(from) {
			return from, to, usageError{"-until is before -since"}
		}
	}
	return from, to, nil
}

func parseWhen(s string, loc *time.Location) (t time.Time, day bool, err error) {
	for _, layout := range []string{"2006-01-02", "20060102"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, true, nil
		}
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), false, nil
	}
	return time.Time{}, false, fmt.Errorf("%q is not a date (YYYY-MM-DD or YYYYMMDD) nor an RFC 3339 time", s)
}
