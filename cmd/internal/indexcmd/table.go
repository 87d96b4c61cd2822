package indexcmd

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
)

// WriteSessionsTable prints sessions as an aligned table with a total row,
// in the order of their last activity (the column it shows). It fits 120
// columns: ids cut to 13 characters, the token counters as one total, the
// host only when the sessions are of several; wide prints every column
// and whole ids. Every value that came from a transcript is made
// [cli.Printable].
func WriteSessionsTable(w io.Writer, all []index.Session, wide bool) error {
	rows := slices.Clone(all)
	slices.SortStableFunc(rows, func(a, b index.Session) int { return a.LastTS.Compare(b.LastTS) })
	hosts := wide
	for i := 1; i < len(rows) && !hosts; i++ {
		hosts = rows[i].Host != rows[0].Host
	}
	id, mods := short, func(m []string) string { return cutModels(m, 40) }
	if wide {
		id, mods = cli.Printable, func(m []string) string { return ModelList(m, true) }
	}
	var head []string
	head = append(head, "SESSION", "AGENT")
	if hosts {
		head = append(head, "HOST")
	}
	head = append(head, "LAST ACTIVE", "TURNS")
	if wide {
		head = append(head, "MSGS U/A", "CALLS", "TOOLS/ERR", "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "TOTAL")
	} else {
		head = append(head, "CALLS", "TOKENS")
	}
	head = append(head, "COST USD", "MODELS")
	var lines [][]string
	line := func(first []string, s *index.Session, unpriced bool, m string) {
		cells := first
		cells = append(cells, strconv.FormatInt(s.Turns, 10))
		if wide {
			cells = append(cells, fmt.Sprintf("%d/%d", s.UserMessages, s.AssistantMessages), strconv.FormatInt(s.APICalls, 10),
				fmt.Sprintf("%d/%d", s.ToolCalls, s.ToolErrors), cli.Thousands(s.InputTokens), cli.Thousands(s.OutputTokens),
				cli.Thousands(s.CacheReadTokens), cli.Thousands(s.CacheWriteTokens), cli.Thousands(s.TotalTokens))
		} else {
			cells = append(cells, strconv.FormatInt(s.APICalls, 10), cli.Thousands(s.TotalTokens))
		}
		lines = append(lines, append(cells, cli.Dollars(s.CostUSD, unpriced), m))
	}
	var t index.Session
	var unpriced int64
	for i := range rows {
		s := &rows[i]
		first := []string{id(s.SessionID), cli.Printable(string(s.Format))}
		if hosts {
			first = append(first, short(s.Host))
		}
		first = append(first, day(s.LastTS))
		line(first, s, s.UnpricedCalls > 0, mods(s.Models))
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
	first := []string{fmt.Sprintf("TOTAL (%d)", len(rows)), ""}
	if hosts {
		first = append(first, "")
	}
	first = append(first, "")
	line(first, &t, unpriced > 0, "")
	// Without -wide the models get what is left of 120 columns.
	room := 1 << 30
	if !wide {
		room = 120 - 2 // the two spaces before the models
		for c := range len(head) - 1 {
			width := utf8.RuneCountInString(head[c])
			for _, l := range lines {
				width = max(width, utf8.RuneCountInString(l[c]))
			}
			room -= width + 2
		}
		room = max(room, 12)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(head[:len(head)-1], "\t")+"\t  "+head[len(head)-1])
	for _, l := range lines {
		m := l[len(l)-1]
		if head, cut := firstRunes(m, room); cut {
			head, _ = firstRunes(head, room-1)
			m = head + "…"
		}
		// The last cell is not padded: two spaces part it.
		fmt.Fprintln(tw, strings.Join(l[:len(l)-1], "\t")+"\t  "+m)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if unpriced > 0 {
		if _, err := fmt.Fprintf(w, "* %s of models without a price %s not in the cost (see unpriced_models in -json).\n", cli.Count(unpriced, "API call"), isAre(unpriced)); err != nil {
			return err
		}
	}
	if !wide {
		for _, s := range rows {
			if _, cut := firstRunes(s.SessionID, 13); cut {
				_, err := fmt.Fprintln(w, "Ids are cut to fit: -wide prints them whole, with every column.")
				return err
			}
		}
	}
	return nil
}

// cutModels returns the models joined, cut at n characters, made
// [cli.Printable].
func cutModels(m []string, n int) string {
	s := strings.Join(m, ",")
	if head, cut := firstRunes(s, n); cut {
		return cli.Printable(head) + "…"
	}
	return cli.Printable(s)
}

// short returns id, cut to its first 13 characters, made [cli.Printable].
func short(id string) string {
	if head, cut := firstRunes(id, 13); cut {
		return cli.Printable(head) + "…"
	}
	return cli.Printable(id)
}

// firstRunes returns the first n characters of s (a byte of invalid
// UTF-8 counts as one), and whether s is longer.
func firstRunes(s string, n int) (string, bool) {
	for i := range s {
		if n == 0 {
			return s[:i], true
		}
		n--
	}
	return s, false
}

func day(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04")
}

// models returns the models joined, cut at 40 characters, made
// [cli.Printable].
func models(m []string) string {
	s := strings.Join(m, ",")
	if head, cut := firstRunes(s, 40); cut {
		head, _ = firstRunes(head, 39)
		return cli.Printable(head) + "…"
	}
	return cli.Printable(s)
}

// WriteUsageTable prints usage rows as an aligned table with a total row.
// The keys are made [cli.Printable].
func WriteUsageTable(w io.Writer, by string, rows []index.UsageRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tCALLS\tINPUT\tOUTPUT\tCACHE READ\tCACHE WRITE\tTOTAL\tCOST USD\t\n", cli.Printable(strings.ToUpper(by)))
	var t index.UsageRow
	for _, r := range rows {
		key := cli.Printable(r.Key)
		if key == "" {
			key = "(none)"
		}
		cost := fmt.Sprintf("%.2f", r.CostUSD)
		if r.UnpricedCalls > 0 {
			cost += "*"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", key, cli.Thousands(r.Calls), cli.Thousands(r.InputTokens), cli.Thousands(r.OutputTokens),
			cli.Thousands(r.CacheReadTokens), cli.Thousands(r.CacheWriteTokens), cli.Thousands(r.TotalTokens), cost)
		t.Calls += r.Calls
		t.InputTokens += r.InputTokens
		t.OutputTokens += r.OutputTokens
		t.CacheReadTokens += r.CacheReadTokens
		t.CacheWriteTokens += r.CacheWriteTokens
		t.TotalTokens += r.TotalTokens
		t.CostUSD += r.CostUSD
		t.UnpricedCalls += r.UnpricedCalls
	}
	cost := fmt.Sprintf("%.2f", t.CostUSD)
	if t.UnpricedCalls > 0 {
		cost += "*"
	}
	fmt.Fprintf(tw, "TOTAL\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", cli.Thousands(t.Calls), cli.Thousands(t.InputTokens), cli.Thousands(t.OutputTokens),
		cli.Thousands(t.CacheReadTokens), cli.Thousands(t.CacheWriteTokens), cli.Thousands(t.TotalTokens), cost)
	if err := tw.Flush(); err != nil {
		return err
	}
	if t.UnpricedCalls > 0 {
		_, err := fmt.Fprintf(w, "* %s of models without a price %s not in the cost.\n", cli.Count(t.UnpricedCalls, "API call"), isAre(t.UnpricedCalls))
		return err
	}
	return nil
}

// WriteAlertsTable prints alerts, newest first, one per line, their
// values made [cli.Printable].
func WriteAlertsTable(w io.Writer, events []alert.Event) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tRULE\tSCOPE\tKEY\tMETRIC\tVALUE\tTHRESHOLD\tHOST")
	for _, e := range events {
		key := short(e.Key)
		if e.Scope == alert.ScopeSession && e.SessionID != "" {
			// The key is format/host/id: the host has its column.
			key = cli.Printable(string(e.Format)) + " " + short(e.SessionID)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.6g\t%.6g\t%s\n", day(e.Time), cli.Printable(e.Rule), cli.Printable(string(e.Scope)),
			key, cli.Printable(string(e.Metric)), e.Value, e.Threshold, cli.Printable(e.Host))
	}
	return tw.Flush()
}

// ModelList returns the models joined by commas, made [cli.Printable]; cut
// at 40 characters unless whole is set.
func ModelList(m []string, whole bool) string {
	if whole {
		return cli.Printable(strings.Join(m, ","))
	}
	return models(m)
}

func isAre(n int64) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
