// Command indexer keeps live per-session aggregates of the entries that
// tailers publish to NATS JetStream, fires token-spend alerts, and serves
// them over HTTP; its query subcommands print what the API answers.
//
//	indexer serve [flags]            consume the stream, keep the state, serve the API
//	indexer sessions [flags]         list sessions (GET /api/sessions)
//	indexer session [flags] ID       one session with its turns (-format, -host when ids collide)
//	indexer usage [-by model] [flags] usage by host, format, model, project, day or hour
//	indexer alerts [flags]           recent alerts
//
// serve keeps its state in <data-dir>/indexer and resumes it after a
// restart; the first SIGINT or SIGTERM stops it gracefully (the state is
// committed), a second at once; SIGHUP reloads the alert rules.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sessionpipe/sessionpipe/cmd/internal/indexcmd"
	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/api"
)

const usage = `indexer keeps live per-session aggregates of a sessionpipe stream, fires
token-spend alerts, and serves them over HTTP.

Usage:
  indexer serve [flags]              consume the stream, keep the state, serve the API
  indexer sessions [flags]           list sessions, most recently active first
  indexer session [flags] ID         one session with its turns
  indexer usage [-by DIM] [flags]    usage by host, format, model, project, day or hour
  indexer alerts [flags]             recent alerts

Run 'indexer COMMAND -h' for the flags of a command.
`

const serveUsage = `Usage: indexer serve [flags]

Consumes the stream into per-session aggregates, rollups and turns kept
in -data-dir across restarts, evaluates the alert rules of -rules on
every change (reloaded on SIGHUP, sent to -webhook), and serves the API,
the dashboard and /metrics on -http.

Example:
  indexer serve -nats tls://nats.example.com:4222 -creds services.creds -replicas 3 -rules rules.yaml -http 127.0.0.1:7474

Flags:
`

func main() {
	cli.Main("indexer", func(ctx context.Context, args []string, env cli.Env) error {
		return run(ctx, args, env, os.Stdout, os.Stderr)
	})
}

// usageError is a command line mistake (exit code 2).
type usageError = cli.UsageError

func run(ctx context.Context, args []string, env cli.Env, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usageError{Msg: "no command given"}
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return serve(ctx, rest, env, stderr)
	case "sessions", "session", "usage", "alerts":
		return query(ctx, cmd, rest, env, stdout, stderr)
	case "version", "-version", "--version":
		_, err := fmt.Fprintln(stdout, cli.VersionLine("indexer"))
		return err
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return usageError{Msg: fmt.Sprintf("unknown command %q", cmd)}
}

func serve(ctx context.Context, args []string, env cli.Env, stderr io.Writer) error {
	var (
		d  cli.Daemon
		ix cli.Indexer
	)
	d.Usage = serveUsage
	if err := d.Parse("indexer serve", args, env, stderr, ix.Register, ""); err != nil {
		return err
	}
	b, err := d.Connect(ctx, "sessionpipe-indexer")
	if err != nil {
		return err
	}
	defer b.Close(context.WithoutCancel(ctx))
	ri, err := indexcmd.StartIndexer(&ix, &d.NATS, b, d.Log)
	if err != nil {
		return err
	}
	return ri.Run(ctx)
}

// query prints what the API of a running indexer answers.
func query(ctx context.Context, cmd string, args []string, env cli.Env, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("indexer "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	apiURL := fs.String("api", orDefault(env("SESSIONPIPE_API"), "http://"+cli.DefaultHTTPAddr), "the indexer's API (env SESSIONPIPE_API)")
	token := fs.String("token", env("SESSIONPIPE_TOKEN"), "bearer token (env SESSIONPIPE_TOKEN)")
	asJSON := fs.Bool("json", false, "print the API's JSON")
	wide := fs.Bool("wide", false, "every column and whole ids (sessions; the table fits 120 columns without it)")
	v := url.Values{}
	str := func(name, help string) { fs.Func(name, help, func(s string) error { v.Set(name, s); return nil }) }
	var by *string
	switch cmd {
	case "sessions":
		for _, f := range []string{"host", "format", "model", "project"} {
			str(f, "only sessions of this "+f)
		}
		str("since", "only sessions active at or after this time (RFC 3339 or YYYY-MM-DD)")
		str("until", "only sessions active at or before this time")
		str("sort", "last_ts (default), first_ts, cost_usd or total_tokens")
		str("limit", "sessions at most (default 100, at most 1000)")
		str("cursor", "continue after the page that printed this cursor")
	case "session":
		// Ids are unique only within an agent, and within a host for
		// some: the API answers 409, listing the candidates, when a bare
		// id names several sessions.
		str("format", "the session's format (agent), when several sessions have the id")
		str("host", "the session's host, when several sessions have the id")
	case "usage":
		by = fs.String("by", "day", "host, format, model, project, day, hour or label:NAME")
		for _, f := range []string{"host", "format", "model", "project"} {
			str(f, "only calls of this "+f)
		}
		str("since", "only calls at or after this time (RFC 3339 or YYYY-MM-DD)")
		str("until", "only calls before this time")
	case "alerts":
		str("limit", "alerts at most, newest first")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	id := ""
	switch {
	case cmd == "session" && fs.NArg() == 1:
		id = fs.Arg(0)
	case cmd == "session":
		return usageError{Msg: "indexer session: give one session id"}
	case fs.NArg() > 0:
		return usageError{Msg: fmt.Sprintf("unexpected arguments %q", fs.Args())}
	}
	if by != nil {
		if _, err := index.ParseGroupBy(*by); err != nil {
			return usageError{Msg: fmt.Sprintf("indexer usage: -by %q: want host, format, model, project, day, hour or label:NAME", *by)}
		}
		v.Set("group_by", *by)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c := &api.Client{URL: *apiURL, Token: *token}
	err := ask(ctx, c, cmd, id, v, *asJSON, *wide, stdout)
	if err != nil {
		err = apiError(err)
		if cmd == "session" && errors.Is(err, errAmbiguous) {
			return fmt.Errorf("%w\nname one with -format and -host", err)
		}
	}
	return err
}

// ask asks the API for what cmd prints (the session id, for session)
// and prints it: the API's JSON with asJSON, else a table.
func ask(ctx context.Context, c *api.Client, cmd, id string, v url.Values, asJSON, wide bool, stdout io.Writer) error {
	if asJSON {
		path := "/api/" + cmd
		if cmd == "session" {
			path = "/api/sessions/" + url.PathEscape(id)
		}
		body, err := c.Raw(ctx, path, v)
		if err != nil {
			return err
		}
		_, err = stdout.Write(body)
		return err
	}
	switch cmd {
	case "sessions":
		page, err := c.Sessions(ctx, v)
		if err != nil {
			return err
		}
		if err := indexcmd.WriteSessionsTable(stdout, page.Sessions, wide); err != nil {
			return err
		}
		if page.NextCursor != "" {
			fmt.Fprintf(stdout, "more: -cursor %s\n", cli.Printable(page.NextCursor))
		}
	case "session":
		s, err := c.Session(ctx, id, v)
		if err != nil {
			return err
		}
		if err := indexcmd.WriteSessionsTable(stdout, []index.Session{s.Session}, true); err != nil {
			return err
		}
		fmt.Fprintln(stdout)
		return writeTurns(stdout, s.Turns)
	case "usage":
		u, err := c.Usage(ctx, v)
		if err != nil {
			return err
		}
		return indexcmd.WriteUsageTable(stdout, string(u.GroupBy), u.Rows)
	case "alerts":
		a, err := c.Alerts(ctx, v)
		if err != nil {
			return err
		}
		return indexcmd.WriteAlertsTable(stdout, a.Alerts)
	}
	return nil
}

// errAmbiguous is a session id the API found several sessions of.
var errAmbiguous = errors.New("ambiguous session id")

// apiError is an error answer of the API as the subcommands print it:
// its status and message, made [cli.Printable] (the message may quote an
// id holding any character).
func apiError(err error) error {
	var e *api.Error
	switch {
	case !errors.As(err, &e):
		return err
	case e.Message == "":
		return fmt.Errorf("%s", cli.Printable(e.Status))
	case e.Code == http.StatusConflict && len(e.Candidates) > 0:
		return fmt.Errorf("%w: %s: %s", errAmbiguous, e.Status, cli.Printable(e.Message))
	}
	return fmt.Errorf("%s: %s", e.Status, cli.Printable(e.Message))
}

// writeTurns prints a session's turns, each prompt on one line, cut at
// 72 characters and made [cli.Printable].
func writeTurns(w io.Writer, turns []index.Turn) error {
	for i, t := range turns {
		prompt := strings.Join(strings.Fields(t.Prompt), " ")
		if prompt == "" {
			prompt = "(no prompt)"
		}
		prompt = cli.Printable(cut(prompt, 72))
		fmt.Fprintf(w, "%3d  %s  %s  %s tokens  $%s  %s\n", i+1, t.Start.UTC().Format("2006-01-02 15:04:05"),
			cli.Count(t.APICalls, "call"), cli.Thousands(t.TotalTokens), cli.Dollars(t.CostUSD, false), prompt)
	}
	return nil
}

// cut returns s, or its first n-1 characters and "…" when it has more
// than n (a byte of invalid UTF-8 counts as one, and is kept).
func cut(s string, n int) string {
	chars := 0
	for i := range s {
		if chars == n-1 {
			if utf8.RuneCountInString(s[i:]) > 1 {
				return s[:i] + "…"
			}
			return s
		}
		chars++
	}
	return s
}

func orDefault(v, def string) string {
	if v != "" {
		return v
	}
	return def
}
