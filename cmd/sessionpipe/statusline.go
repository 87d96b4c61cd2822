package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/sessionpipe/sessionpipe/cmd/internal/indexcmd"
	"github.com/sessionpipe/sessionpipe/cmd/internal/top"
	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/report"
	"github.com/sessionpipe/sessionpipe/schema"
)

const statuslineUsage = `Usage: sessionpipe statusline [flags]

Prints one line for Claude Code's status line: the model, what the
session, today and the current five-hour block have cost, the block's
time left and burn rate. Claude Code runs it with the session's details
as JSON on standard input; in ~/.claude/settings.json:

  "statusLine": {"type": "command", "command": "sessionpipe statusline"}

The figures come from the indexer when one answers at -api (within
-api-timeout; 'sessionpipe run' starts one), else from the transcripts:
the session's own file, and for today and the block the files of the
well-known locations written since the earlier of midnight and ten hours
ago. Both count as 'sessionpipe sessions' counts.

Example:
  echo '{"session_id":"…","transcript_path":"…/s.jsonl","model":{"display_name":"Opus"}}' | sessionpipe statusline

Flags:
`

// hookInput is what Claude Code passes to a status line command.
type hookInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Model          struct {
		ID          string `json:"id"`
		DisplayName string `json:"display_name"`
	} `json:"model"`
}

// statusFigures are what the status line shows.
type statusFigures struct {
	Source     string // "indexer" or "files"
	Session    *float64
	Today      float64
	Block      *report.Block
	Unpriced   bool
	SessionErr error
}

func runStatusline(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("statusline", statuslineUsage, stderr)
	api := fs.String("api", envOr("SESSIONPIPE_API", "http://"+cli.DefaultHTTPAddr), "the indexer's API (env SESSIONPIPE_API); empty: read the files")
	token := fs.String("token", os.Getenv("SESSIONPIPE_TOKEN"), "bearer token (env SESSIONPIPE_TOKEN)")
	apiTimeout := fs.Duration("api-timeout", 50*time.Millisecond, "how long to wait for the indexer before reading the files")
	timezone := fs.String("timezone", "", "time zone of \"today\" (default: this machine's, $TZ)")
	prices := fs.String("prices", "", "LiteLLM-shaped price file overriding the embedded prices (files only)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("statusline: unexpected arguments %q", fs.Args())}
	}
	loc := time.Local
	if *timezone != "" {
		var err error
		if loc, err = time.LoadLocation(*timezone); err != nil {
			return usageError{fmt.Sprintf("statusline: -timezone %s: %v", *timezone, err)}
		}
	}
	var in hookInput
	data, err := io.ReadAll(io.LimitReader(stdin, 1<<20))
	if err != nil {
		return fmt.Errorf("statusline: read standard input: %w", err)
	}
	if len(strings.TrimSpace(string(data))) > 0 {
		if err := json.Unmarshal(data, &in); err != nil {
			return fmt.Errorf("statusline: standard input is not the status line hook's JSON: %w", err)
		}
	}
	now := time.Now()
	var fig statusFigures
	if *api != "" {
		fig, err = statusFromIndexer(ctx, top.Config{API: *api, Token: *token, Client: &http.Client{Timeout: *apiTimeout}}, in, now, loc)
	}
	if *api == "" || err != nil {
		table, err := indexcmd.LoadPrices(*prices)
		if err != nil {
			return err
		}
		if fig, err = statusFromFiles(ctx, in, now, loc, table, os.Getenv); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintln(stdout, statusLine(in, fig, now))
	return err
}

// statusLine formats the figures: "Opus · session $0.23 · today $1.23 ·
// block $0.45 (2h45m left, $0.12/h)".
func statusLine(in hookInput, f statusFigures, now time.Time) string {
	var parts []string
	if m := cmp.Or(in.Model.DisplayName, in.Model.ID); m != "" {
		parts = append(parts, cli.Printable(m))
	}
	star := ""
	if f.Unpriced {
		star = "*"
	}
	if f.Session != nil {
		parts = append(parts, "session $"+money(*f.Session))
	}
	parts = append(parts, "today $"+money(f.Today)+star)
	if b := f.Block; b != nil {
		s := fmt.Sprintf("block $%s (%s left", money(b.CostUSD), b.End.Sub(now).Truncate(time.Minute))
		if b.BurnRate != nil {
			s += fmt.Sprintf(", $%s/h", money(b.BurnRate.CostPerHour))
		}
		parts = append(parts, s+")")
	} else {
		parts = append(parts, "no active block")
	}
	return strings.Join(parts, " · ")
}

func money(v float64) string { return cli.Dollars(v, false) }

// statusFromIndexer asks the indexer: the session's cost, and today's and
// the last ten hours' usage hour by hour (a block is then known to the
// hour).
func statusFromIndexer(ctx context.Context, cfg top.Config, in hookInput, now time.Time, loc *time.Location) (statusFigures, error) {
	f := statusFigures{Source: "indexer"}
	day := startOfDay(now, loc)
	from := earlier(day, now.Add(-2*report.BlockLength)).UTC().Truncate(time.Hour)
	var usage struct{ Rows []index.UsageRow }
	if err := top.Get(ctx, cfg, "/api/usage", url.Values{"group_by": {"hour"}, "since": {from.Format(time.RFC3339)}}, &usage); err != nil {
		return f, err
	}
	var calls []report.Call
	for _, r := range usage.Rows {
		if r.Key == "unknown" { // calls without a timestamp
			continue
		}
		h, err := time.Parse("2006-01-02T15Z", r.Key)
		if err != nil {
			return f, fmt.Errorf("indexer usage row %q: %w", r.Key, err)
		}
		if !h.Before(day.Truncate(time.Hour)) {
			f.Today += r.CostUSD
			f.Unpriced = f.Unpriced || r.UnpricedCalls > 0
		}
		// One call per hour cell, at the hour, carrying the cell's sums:
		// enough to place blocks to the hour.
		calls = append(calls, report.Call{TS: h, Tokens: schema.Usage{Input: r.InputTokens, Output: r.OutputTokens,
			CacheRead: r.CacheReadTokens, CacheWrite: r.CacheWriteTokens}, CostNanos: int64(r.CostUSD*1e9 + 0.5)})
	}
	f.Block = activeBlock(calls, now)
	if in.SessionID != "" {
		// The id with its agent finds the session unless another host has
		// one of the same id (409): then this host's.
		var s struct{ Session index.Session }
		path, q := "/api/sessions/"+url.PathEscape(in.SessionID), url.Values{"format": {string(schema.FormatClaudeCode)}}
		err := top.Get(ctx, cfg, path, q, &s)
		if err != nil && strings.Contains(err.Error(), "409") {
			q.Set("host", cli.Hostname(""))
			err = top.Get(ctx, cfg, path, q, &s)
		}
		if err == nil {
			f.Session = &s.Session.CostUSD
		} else {
			f.SessionErr = err
		}
	}
	return f, nil
}

func activeBlock(calls []report.Call, now time.Time) *report.Block {
	blocks := report.Blocks(calls, report.BlockLength, now)
	if n := len(blocks); n > 0 && blocks[n-1].Active {
		return &blocks[n-1]
	}
	return nil
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func startOfDay(t time.Time, loc *time.Location) time.Time {
	y, m, d := t.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, loc)
}

// statusFromFiles counts the session's transcript (and its subagents')
// whole, and the files of the well-known locations written since the
// earlier of midnight and two block lengths ago: a file not written since
// holds no call of today or of the current block.
func statusFromFiles(ctx context.Context, in hookInput, now time.Time, loc *time.Location, table index.Pricer, env cli.Env) (statusFigures, error) {
	f := statusFigures{Source: "files"}
	day := startOfDay(now, loc)
	since := earlier(day, now.Add(-2*report.BlockLength))
	var paths []string
	seen := make(map[string]bool)
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	if in.TranscriptPath != "" {
		if _, err := os.Stat(in.TranscriptPath); err == nil {
			add(in.TranscriptPath)
			sub, _ := filepath.Glob(filepath.Join(strings.TrimSuffix(in.TranscriptPath, ".jsonl"), "subagents", "*.jsonl"))
			for _, p := range sub {
				add(p)
			}
		}
	}
	if globs, _, err := cli.Watches(nil, nil, env); err == nil {
		for _, g := range globs {
			matches, _ := doublestar.FilepathGlob(g, doublestar.WithFilesOnly())
			for _, m := range matches {
				if info, err := os.Stat(m); err == nil && !info.ModTime().Before(since) {
					add(m)
				}
			}
		}
	}
	var col report.Collector
	agg, err := index.New(index.Config{Pricer: table, OnUsage: col.Add})
	if err != nil {
		return f, err
	}
	if len(paths) > 0 {
		fr, err := formats.NewFileReader(formats.FileReaderConfig{
			Config:      parse.Config{Host: cli.Hostname("")},
			OnLineError: func(error) {}, // counted by the reader; a status line has no room for them
			OnFileError: func(error) {},
		})
		if err != nil {
			return f, err
		}
		err = fr.Read(ctx, paths, func(entries []schema.Entry) {
			for i := range entries {
				agg.Add(&entries[i])
			}
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return f, err
		}
	}
	sessions := agg.Sessions()
	var recent []report.Call
	var todayNanos int64
	for _, c := range col.Calls() {
		if c.TS.Before(since) {
			continue
		}
		recent = append(recent, c)
		if !c.TS.Before(day) {
			todayNanos += c.CostNanos
			f.Unpriced = f.Unpriced || c.Unpriced
		}
	}
	f.Today = report.USD(todayNanos)
	f.Block = activeBlock(recent, now)
	if in.SessionID != "" {
		for _, s := range sessions {
			if s.SessionID == in.SessionID && s.Format == schema.FormatClaudeCode {
				cost := s.CostUSD
				f.Session = &cost
			}
		}
	}
	return f, nil
}
