package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/sessionpipe/sessionpipe/cmd/internal/indexcmd"
	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
	"github.com/sessionpipe/sessionpipe/pipeline/report"
)

const alertsCheckUsage = `Usage: sessionpipe alerts check -rules FILE [flags] [PATH...]

Evaluates alert rules offline on the transcripts under PATH (by default
the well-known locations of every agent under $HOME) and prints the
alerts they would have fired, to try rules before deploying them to an
indexer. Every API call counted (as 'sessionpipe sessions' counts) is
replayed in time order as if it arrived at its own time, so windows,
rates and budget periods behave as they would have live; no max lag
applies (history fires, unlike a rebuilt indexer).

Example:
  sessionpipe alerts check -rules rules.yaml -since 2026-01-01 ~/.claude/projects

Flags:
`

func runAlerts(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "check" {
		fmt.Fprint(stderr, alertsCheckUsage)
		if len(args) == 0 {
			return usageError{"alerts: give a command: check"}
		}
		if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
			return nil
		}
		return usageError{fmt.Sprintf("alerts: unknown command %q (want check)", args[0])}
	}
	fs := newFlagSet("alerts check", alertsCheckUsage, stderr)
	rulesPath := fs.String("rules", "", "alert rules file (YAML, as the indexer's -rules; required)")
	r := addReportFlags(fs)
	r.shared = addOfflineFlags(fs)
	calls, err := r.calls(ctx, "alerts check", fs, args[1:], stderr)
	if err != nil {
		return err
	}
	if *rulesPath == "" {
		return usageError{"alerts check: -rules FILE is required"}
	}
	rules, err := alert.LoadContext(ctx, *rulesPath)
	if err != nil {
		return err
	}
	events, err := checkAlerts(rules, calls)
	if err != nil {
		return err
	}
	if !*r.shared.quiet {
		fmt.Fprintf(stderr, "sessionpipe: %s over %s: %s would fire\n", cli.Count(len(rules), "rule"),
			cli.Count(len(calls), "API call"), cli.Count(len(events), "alert"))
	}
	if *r.asJSON {
		return writeJSON(stdout, struct {
			Alerts []alert.Event `json:"alerts"`
		}{nonNil(events)})
	}
	return indexcmd.WriteAlertsTable(stdout, events)
}

// checkAlerts replays calls (in time order) through an evaluator of
// rules whose clock is each call's time, and returns what fired.
func checkAlerts(rules []alert.Rule, calls []report.Call) ([]alert.Event, error) {
	// The clock: each call's time; before the first dated call (calls
	// without a timestamp sort first), that call's time.
	now := time.Now()
	for i := range calls {
		if !calls[i].TS.IsZero() {
			now = calls[i].TS
			break
		}
	}
	ev, err := alert.New(alert.Config{Rules: rules, Now: func() time.Time { return now }})
	if err != nil {
		return nil, err
	}
	var events []alert.Event
	for i := range calls {
		c := &calls[i]
		if !c.TS.IsZero() && c.TS.After(now) {
			now = c.TS
		}
		events = append(events, ev.Observe(alert.Observation{
			Seq: uint64(i + 1), Time: c.TS, SessionID: c.SessionID, Host: c.Host, Project: c.Project, Model: c.Model,
			Format: c.Format, Labels: c.Labels, Tokens: c.Tokens, CostUSD: report.USD(c.CostNanos), Unpriced: c.Unpriced,
		})...)
		ev.Advance()
	}
	return events, nil
}
