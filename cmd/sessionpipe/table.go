package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/index"
)

// writeSessionsTable prints sessions as an aligned table with a total row.
func writeSessionsTable(w io.Writer, all []index.Session) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "SESSION\tFORMAT\tLAST ACTIVE\tTURNS\tMSGS U/A\tCALLS\tTOOLS/ERR\tINPUT\tOUTPUT\tCACHE READ\tCACHE WRITE\tTOTAL\tCOST USD\tMODELS\t")
	var t index.Session
	var unpriced int64
	for _, s := range all {
		cost := fmt.Sprintf("%.2f", s.CostUSD)
		if s.UnpricedCalls > 0 {
			cost += "*"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d/%d\t%d\t%d/%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			short(s.SessionID), s.Format, day(s.LastTS), s.Turns, s.UserMessages, s.AssistantMessages, s.APICalls,
			s.ToolCalls, s.ToolErrors, thousands(s.InputTokens), thousands(s.OutputTokens), thousands(s.CacheReadTokens),
			thousands(s.CacheWriteTokens), thousands(s.TotalTokens), cost, models(s.Models))
		t.Turns += s.Turns
		t.UserMessages += s.UserMessages
		t.AssistantMessages += s.AssistantMessages
		t.APICalls += s.APICalls
		t.ToolCalls += s.ToolCalls
		t.ToolErrors += s.ToolErrors
		t.InputTokens += s.InputTokens
		t.OutputTokens += s.OutputTokens
		t.CacheReadTokens += s.CacheReadTokens
		t.CacheWriteTokens += s.CacheWriteTokens
		t.TotalTokens += s.TotalTokens
		t.CostUSD += s.CostUSD
		unpriced += s.UnpricedCalls
	}
	cost := fmt.Sprintf("%.2f", t.CostUSD)
	if unpriced > 0 {
		cost += "*"
	}
	fmt.Fprintf(tw, "TOTAL (%d)\t\t\t%d\t%d/%d\t%d\t%d/%d\t%s\t%s\t%s\t%s\t%s\t%s\t\t\n",
		len(all), t.Turns, t.UserMessages, t.AssistantMessages, t.APICalls, t.ToolCalls, t.ToolErrors,
		thousands(t.InputTokens), thousands(t.OutputTokens), thousands(t.CacheReadTokens), thousands(t.CacheWriteTokens),
		thousands(t.TotalTokens), cost)
	if err := tw.Flush(); err != nil {
		return err
	}
	if unpriced > 0 {
		_, err := fmt.Fprintf(w, "* %d API calls of models without a price are not in the cost (see unpriced_models in --json).\n", unpriced)
		return err
	}
	return nil
}

func short(id string) string {
	if len(id) > 13 {
		return id[:13] + "…"
	}
	return id
}

func day(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04")
}

func models(m []string) string {
	s := strings.Join(m, ",")
	if len(s) > 40 {
		s = s[:39] + "…"
	}
	return s
}

// thousands formats n with comma separators.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// humanBytes formats n as B, KB, MB or GB (powers of 1000).
func humanBytes(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f KB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}
