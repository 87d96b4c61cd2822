package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/export"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/tail"
)

// runStatus shows, on one terminal line redrawn every second, what
// `sessionpipe run` does: while the tailer has a backlog, the backfill's
// progress; then the live status: entries per second, sessions active
// today, spend today, alerts fired, Parquet rows written. It returns when
// ctx ends, clearing the line.
func runStatus(ctx context.Context, w io.Writer, tl *tail.Tailer, ix *index.Indexer, ex *export.Exporter) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	start := time.Now()
	var last, lastLag int64
	lastAt := start
	backfill, still := true, 0
	for {
		select {
		case <-ctx.Done():
			fmt.Fprint(w, "\r\033[K")
			return
		case now := <-tick.C:
			s := tl.Metrics().Snapshot()
			rate := float64(s.AckedEntries-last) / now.Sub(lastAt).Seconds()
			// Lag counts a last line still being written, and files
			// whose format the tailer waits to tell, too: the backfill
			// is over when nothing moved for two seconds.
			if s.AckedEntries == last && s.LagBytes == lastLag {
				still++
			} else {
				still = 0
			}
			last, lastAt, lastLag = s.AckedEntries, now, s.LagBytes
			if backfill && s.LagBytes > 0 && !tl.Idle() && still < 2 {
				secs := now.Sub(start).Seconds()
				fmt.Fprintf(w, "\r\033[Kbackfill: %s, %s read, %s entries published (%s/s), %s to go",
					cli.Count(s.Files, "file"), cli.HumanBytes(s.Bytes), cli.Thousands(s.AckedEntries), cli.Thousands(int64(float64(s.AckedEntries)/secs)), cli.HumanBytes(s.LagBytes))
				continue
			}
			if backfill {
				backfill = false
				fmt.Fprintf(w, "\r\033[Kbackfill done: %s, %s, %s entries in %s\n",
					cli.Count(s.Files, "file"), cli.HumanBytes(s.Bytes), cli.Thousands(s.AckedEntries), now.Sub(start).Round(time.Second))
			}
			fmt.Fprintf(w, "\r\033[K%s", liveLine(now, rate, ix, ex))
		}
	}
}

// liveLine is the live status: entries/s, sessions and spend of today
// (UTC), alerts fired since start, Parquet rows committed.
func liveLine(now time.Time, rate float64, ix *index.Indexer, ex *export.Exporter) string {
	today := now.UTC().Truncate(24 * time.Hour)
	sessions := "?"
	if page, next, err := ix.Query(index.SessionQuery{Since: today, Limit: index.MaxLimit}); err == nil {
		sessions = cli.Thousands(int64(len(page)))
		if next != "" {
			sessions += "+"
		}
	}
	spend := 0.0
	if rows, err := ix.Usage(index.UsageQuery{GroupBy: index.ByDay, Since: today}); err == nil {
		for _, r := range rows {
			spend += r.CostUSD
		}
	}
	st, es := ix.Stats(), ex.Stats()
	return fmt.Sprintf("live: %s entries/s · %s sessions today · $%.2f today · %d alerts · %s rows in Parquet",
		cli.Thousands(int64(rate+0.5)), sessions, spend, st.Alerts, cli.Thousands(es.Rows))
}
