package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
	_ "time/tzdata" // --timezone names work on machines without a zoneinfo database

	"github.com/sessionpipe/sessionpipe/cmd/internal/indexcmd"
	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/report"
	"github.com/sessionpipe/sessionpipe/schema"
)

const calendarUsage = `Usage: sessionpipe %[1]s [flags] [PATH...]

Prints tokens and cost per %[2]s of the transcripts under PATH (by default
the well-known locations of every agent under $HOME), counted as
'sessionpipe sessions' counts them: every API call once, on the date of
the occurrence that counts, in the time zone of --timezone.

Example:
  sessionpipe %[1]s --since 2026-01-01 --timezone Europe/Berlin --by model
  sessionpipe %[1]s --json ~/.claude/projects

Flags:
`

const blocksUsage = `Usage: sessionpipe blocks [flags] [PATH...]

Prints usage in five-hour blocks, as Claude Code's usage limits count
them (and ccusage's blocks report): a block starts at the hour of its
first call and lasts five hours; a call after that, or after five hours
without one, starts the next. The active block shows its burn rate and
what it will have spent at its end.

Example:
  sessionpipe blocks --active
  sessionpipe blocks --json --since 2026-01-01 ~/.claude/projects

Flags:
`

// reportFlags are the flags every report shares.
type reportFlags struct {
	asJSON, wide     *bool
	since, until     *string
	timezone, prices *string
	format           *string
	workers          *int
	shared           offlineFlags
	loc              *time.Location
	from, to         time.Time
	table            index.Pricer
	opts             *offline
}

func addReportFlags(fs *flag.FlagSet) reportFlags {
	return reportFlags{
		asJSON:   fs.Bool("json", false, "print JSON instead of a table"),
		wide:     fs.Bool("wide", false, "every column (the table fits 120 columns without it)"),
		since:    fs.String("since", "", "only calls at or after this date or time (YYYY-MM-DD, YYYYMMDD or RFC 3339; dates in -timezone)"),
		until:    fs.String("until", "", "only calls up to this date (inclusive) or time"),
		timezone: fs.String("timezone", "", "time zone of dates, e.g. UTC, Europe/Berlin (default: this machine's, $TZ)"),
		prices:   fs.String("prices", "", "LiteLLM-shaped price file overriding the embedded prices"),
		format:   fs.String("format", "", "only calls of this agent: "+formatList()),
		workers:  fs.Int("workers", 0, "files read in parallel (default: GOMAXPROCS)"),
	}
}

// calls parses the shared flags and counts the calls of the files.
func (r *reportFlags) calls(ctx context.Context, name string, fs *flag.FlagSet, args []string, stderr io.Writer) ([]report.Call, error) {
	o, err := r.shared.parseOr(fs, args, stderr, os.Getenv)
	if err != nil {
		return nil, err
	}
	o.workers = *r.workers
	r.opts = o
	r.loc = time.Local
	if *r.timezone != "" {
		if r.loc, err = time.LoadLocation(*r.timezone); err != nil {
			return nil, usageError{fmt.Sprintf("%s: -timezone %s: %v", name, *r.timezone, err)}
		}
	}
	if r.from, r.to, err = parseRangeIn(*r.since, *r.until, r.loc); err != nil {
		return nil, err
	}
	if *r.format != "" && !schema.Format(*r.format).Valid() {
		return nil, usageError{fmt.Sprintf("%s: unknown format %q (want one of %s)", name, *r.format, formatList())}
	}
	defer tuneGC()() // before the price table: its parse makes garbage too
	table, err := indexcmd.LoadPrices(*r.prices)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	var col report.Collector
	agg, err := index.New(index.Config{Pricer: table, OnUsage: col.Add})
	if err != nil {
		return nil, err
	}
	err = o.each(ctx, func(entries []schema.Entry) {
		for i := range entries {
			e := &entries[i]
			if !e.TS.IsZero() && (e.TS.Before(r.from) || (!r.to.IsZero() && e.TS.After(r.to))) {
				continue
			}
			agg.Add(e)
		}
	})
	if err != nil {
		return nil, err
	}
	agg.Sessions() // settles the choice of each call's occurrence
	calls := col.Calls()
	if *r.format != "" {
		kept := calls[:0]
		for _, c := range calls {
			if string(c.Format) == *r.format {
				kept = append(kept, c)
			}
		}
		calls = kept
	}
	if !*r.shared.quiet {
		o.summary(time.Since(start))
	}
	return calls, nil
}

func runCalendar(ctx context.Context, period report.Period, args []string, stdout, stderr io.Writer) error {
	name, noun := map[report.Period][2]string{report.Day: {"daily", "day"}, report.Week: {"weekly", "week"}, report.Month: {"monthly", "month"}}[period][0],
		string(period)
	fs := newFlagSet(name, fmt.Sprintf(calendarUsage, name, noun), stderr)
	r := addReportFlags(fs)
	r.shared = addOfflineFlags(fs)
	by := fs.String("by", "", "split each "+noun+" by agent, model, project, host or label:NAME")
	startOfWeek := fs.String("start-of-week", "sunday", "first day of a week (weekly)")
	calls, err := r.calls(ctx, name, fs, args, stderr)
	if err != nil {
		return err
	}
	b, err := report.ParseBy(*by)
	if err != nil {
		return usageError{name + ": " + err.Error()}
	}
	ws, ok := weekdays[strings.ToLower(*startOfWeek)]
	if !ok {
		return usageError{fmt.Sprintf("%s: -start-of-week %q: want a day name (sunday, monday, …)", name, *startOfWeek)}
	}
	rows, total, undated := report.Calendar(calls, report.Options{Period: period, Location: r.loc, WeekStart: ws, By: b})
	if undated.Calls > 0 && !*r.shared.quiet {
		fmt.Fprintf(stderr, "sessionpipe: %s without a timestamp %s in no %s (they are in the total)\n",
			cli.Count(undated.Calls, "API call"), plural(undated.Calls, "is", "are"), noun)
	}
	if *r.asJSON {
		return writeJSON(stdout, struct {
			Period   report.Period `json:"period"`
			TimeZone string        `json:"timezone"`
			By       report.By     `json:"by,omitempty"`
			Rows     []report.Row  `json:"rows"`
			Total    report.Totals `json:"total"`
		}{period, r.loc.String(), b, nonNil(rows), total})
	}
	return writeCalendarTable(stdout, noun, b, rows, total, *r.wide)
}

var weekdays = map[string]time.Weekday{
	"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writeCalendarTable prints the rows of a calendar report; without wide,
// it fits 120 columns (the four token counters fold into input+output
// and cache read+write).
func writeCalendarTable(w io.Writer, noun string, by report.By, rows []report.Row, total report.Totals, wide bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{strings.ToUpper(noun)}
	if by != report.ByNone {
		head = append(head, strings.ToUpper(strings.TrimPrefix(string(by), "label:")))
	}
	if wide {
		head = append(head, "CALLS", "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "TOTAL", "COST USD", "MODELS")
	} else {
		head = append(head, "CALLS", "IN+OUT", "CACHE R+W", "TOTAL", "COST USD", "MODELS")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	line := func(first []string, t report.Totals) {
		cells := first
		cells = append(cells, cli.Thousands(t.Calls))
		if wide {
			cells = append(cells, cli.Thousands(t.InputTokens), cli.Thousands(t.OutputTokens), cli.Thousands(t.CacheReadTokens), cli.Thousands(t.CacheWriteTokens))
		} else {
			cells = append(cells, cli.Thousands(t.InputTokens+t.OutputTokens), cli.Thousands(t.CacheReadTokens+t.CacheWriteTokens))
		}
		cells = append(cells, cli.Thousands(t.TotalTokens), cli.Dollars(t.CostUSD, t.UnpricedCalls > 0), indexcmd.ModelList(t.Models, wide))
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	for _, r := range rows {
		first := []string{r.Period}
		if by != report.ByNone {
			first = append(first, cli.Printable(orDash(r.Group)))
		}
		line(first, r.Totals)
	}
	first := []string{"TOTAL"}
	if by != report.ByNone {
		first = append(first, "")
	}
	line(first, total)
	if err := tw.Flush(); err != nil {
		return err
	}
	if total.UnpricedCalls > 0 {
		_, err := fmt.Fprintf(w, "* %s of models without a price %s not in the cost\n", cli.Count(total.UnpricedCalls, "API call"), plural(total.UnpricedCalls, "is", "are"))
		return err
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func runBlocks(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("blocks", blocksUsage, stderr)
	r := addReportFlags(fs)
	r.shared = addOfflineFlags(fs)
	active := fs.Bool("active", false, "only the active block")
	recent := fs.Bool("recent", false, "only blocks of the last three days")
	length := fs.Duration("length", report.BlockLength, "length of a block")
	gaps := fs.Bool("gaps", false, "list the gaps between blocks too (JSON always does)")
	calls, err := r.calls(ctx, "blocks", fs, args, stderr)
	if err != nil {
		return err
	}
	if *length <= 0 {
		return usageError{fmt.Sprintf("blocks: -length %s is not positive", *length)}
	}
	now := time.Now()
	blocks := report.Blocks(calls, *length, now)
	kept := blocks[:0]
	for _, b := range blocks {
		switch {
		case *active && !b.Active:
		case *recent && b.End.Before(now.Add(-72*time.Hour)):
		default:
			kept = append(kept, b)
		}
	}
	blocks = kept
	if *r.asJSON {
		return writeJSON(stdout, struct {
			Blocks []report.Block `json:"blocks"`
		}{nonNil(blocks)})
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "BLOCK START\tENDS\tSTATUS\tCALLS\tTOTAL TOKENS\tCOST USD\tMODELS\t")
	for _, b := range blocks {
		if b.Gap {
			if *gaps {
				fmt.Fprintf(tw, "%s\t%s\tgap\t\t\t\t\t\n", b.Start.In(r.loc).Format("2006-01-02 15:04"), b.End.In(r.loc).Format("2006-01-02 15:04"))
			}
			continue
		}
		status := "done"
		if b.Active {
			status = fmt.Sprintf("active, %s left", b.End.Sub(now).Round(time.Minute))
			if b.BurnRate != nil {
				status += fmt.Sprintf(", $%.2f/h → $%.2f", b.BurnRate.CostPerHour, b.Projection.CostUSD)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", b.Start.In(r.loc).Format("2006-01-02 15:04"), b.End.In(r.loc).Format("15:04"), status,
			cli.Thousands(b.Calls), cli.Thousands(b.TotalTokens), cli.Dollars(b.CostUSD, b.UnpricedCalls > 0), indexcmd.ModelList(b.Models, *r.wide))
	}
	return tw.Flush()
}
