// Package top is `sessionpipe top`: a live terminal view of an indexer for
// a person watching spend: the sessions active now, the burn rate, the
// spend today and the latest alerts, refreshed every few seconds from the
// indexer's HTTP API. It is a bubbletea program; the model is testable
// without a terminal.
package top

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
	"github.com/sessionpipe/sessionpipe/pipeline/index/api"
)

// Config configures the view.
type Config struct {
	API      string        // the indexer's API, e.g. http://127.0.0.1:7474
	Token    string        // bearer token, if the API wants one
	Interval time.Duration // refresh period; default 2s
	Active   time.Duration // a session active within this is "active now"; default 15m
	Now      func() time.Time
	Client   *http.Client
}

// Snapshot is what one refresh read from the API.
type Snapshot struct {
	At          time.Time
	Active      []index.Session // most recently active first
	TodayCost   float64
	TodayTokens int64
	TodayCalls  int64
	HourCost    float64 // spend in the current UTC hour
	HourTokens  int64
	Alerts      []alert.Event
	Err         error
}

// Fetch reads a snapshot from the API.
func Fetch(ctx context.Context, cfg Config) Snapshot {
	cfg = cfg.withDefaults()
	c := cfg.client()
	now := cfg.Now().UTC()
	s := Snapshot{At: now}
	day := now.Truncate(24 * time.Hour)
	sessions, err := c.Sessions(ctx, url.Values{"since": {now.Add(-cfg.Active).Format(time.RFC3339)}, "limit": {"50"}})
	if err != nil {
		s.Err = err
		return s
	}
	usage, err := c.Usage(ctx, url.Values{"group_by": {"hour"}, "since": {day.Format(time.RFC3339)}})
	if err != nil {
		s.Err = err
		return s
	}
	alerts, err := c.Alerts(ctx, url.Values{"limit": {"5"}})
	if err != nil {
		s.Err = err
		return s
	}
	s.Active, s.Alerts = sessions.Sessions, alerts.Alerts
	hour := now.Truncate(time.Hour).Format("2006-01-02T15Z")
	for _, r := range usage.Rows {
		s.TodayCost += r.CostUSD
		s.TodayTokens += r.TotalTokens
		s.TodayCalls += r.Calls
		if r.Key == hour {
			s.HourCost, s.HourTokens = r.CostUSD, r.TotalTokens
		}
	}
	return s
}

func (c Config) withDefaults() Config {
	if c.Interval <= 0 {
		c.Interval = 2 * time.Second
	}
	if c.Active <= 0 {
		c.Active = 15 * time.Minute
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Client == nil {
		c.Client = &http.Client{Timeout: 10 * time.Second}
	}
	c.API = strings.TrimRight(c.API, "/")
	return c
}

// client is the API's client of c (withDefaults applied).
func (c Config) client() *api.Client { return &api.Client{URL: c.API, Token: c.Token, HTTP: c.Client} }

// Get asks the indexer's API at cfg.API for path with the query v and
// decodes the JSON answer into out; a status other than 200 is an error
// that quotes the API's message (an *api.Error).
func Get(ctx context.Context, cfg Config, path string, v url.Values, out any) error {
	return cfg.withDefaults().client().Get(ctx, path, v, out)
}

// Model is the bubbletea model of the view.
type Model struct {
	cfg   Config
	snap  Snapshot
	width int
}

// New returns the model for cfg.
func New(cfg Config) Model { return Model{cfg: cfg.withDefaults(), width: 120} }

type snapMsg Snapshot
type tickMsg struct{}

// SnapshotMsg makes a snapshot a message for [Model.Update], for a
// one-shot view without a program.
func SnapshotMsg(s Snapshot) tea.Msg { return snapMsg(s) }

func (m Model) fetch() tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), m.cfg.Interval*4)
		defer cancel()
		return snapMsg(Fetch(ctx, m.cfg))
	}
}

// Init starts the first fetch.
func (m Model) Init() tea.Cmd { return m.fetch() }

// Update handles keys, window sizes, refresh ticks and fetched snapshots.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		switch msg.String() {
		case "q", "ctrl+c", "esc":
			return m, tea.Quit
		case "r":
			return m, m.fetch()
		}
	case tea.WindowSizeMsg:
		m.width = msg.Width
	case snapMsg:
		m.snap = Snapshot(msg)
		return m, tea.Tick(m.cfg.Interval, func(time.Time) tea.Msg { return tickMsg{} })
	case tickMsg:
		return m, m.fetch()
	}
	return m, nil
}

var (
	title = lipgloss.NewStyle().Bold(true)
	dim   = lipgloss.NewStyle().Faint(true)
	warn  = lipgloss.NewStyle().Foreground(lipgloss.Color("9")).Bold(true)
)

// View renders the current snapshot.
func (m Model) View() string {
	var b strings.Builder
	s := m.snap
	b.WriteString(title.Render("sessionpipe top") + dim.Render("  "+m.cfg.API+"  ") + s.At.Format("15:04:05 UTC") + "\n")
	if s.Err != nil {
		b.WriteString(warn.Render("error: "+s.Err.Error()) + "\n" + dim.Render("q quit · r refresh") + "\n")
		return b.String()
	}
	minutes := float64(s.At.Sub(s.At.Truncate(time.Hour))) / float64(time.Minute)
	burn := 0.0
	if minutes >= 1 {
		burn = s.HourCost / minutes * 60
	}
	fmt.Fprintf(&b, "today $%.2f · %s tokens · %s   burn $%.2f/h (this hour)   %s active\n\n",
		s.TodayCost, cli.Thousands(s.TodayTokens), cli.Count(s.TodayCalls, "call"), burn, cli.Count(len(s.Active), "session"))
	if len(s.Alerts) > 0 {
		b.WriteString(warn.Render("alerts") + "\n")
		for _, a := range s.Alerts {
			fmt.Fprintf(&b, "  %s  %s  %s=%s  %.6g > %.6g\n", a.Time.UTC().Format("15:04"), cli.Printable(a.Rule), cli.Printable(string(a.Scope)), shorten(a.Key, 24), a.Value, a.Threshold)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%-16s %-11s %-12s %-5s %6s %12s %9s  %s\n", "SESSION", "FORMAT", "HOST", "LAST", "TURNS", "TOKENS", "COST", "PROJECT")
	for _, x := range s.Active {
		fmt.Fprintf(&b, "%-16s %-11s %-12s %-5s %6d %12s %9s  %s\n", shorten(x.SessionID, 16), cli.Printable(string(x.Format)), shorten(x.Host, 12),
			x.LastTS.UTC().Format("15:04"), x.Turns, cli.Thousands(x.TotalTokens), fmt.Sprintf("$%.2f", x.CostUSD), shorten(x.CWD, max(m.width-80, 10)))
	}
	if len(s.Active) == 0 {
		b.WriteString(dim.Render("  no session active in the last "+m.cfg.Active.String()) + "\n")
	}
	b.WriteString("\n" + dim.Render("q quit · r refresh") + "\n")
	return b.String()
}

// shorten returns s with its control characters escaped (a transcript's
// session id or path may hold ESC, CR or NUL: see cli.Printable), cut to
// at most n characters, whole ones.
func shorten(s string, n int) string {
	r := []rune(cli.Printable(s))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n-1]) + "…"
}

// Run runs the view on the terminal until the user quits or ctx ends.
func Run(ctx context.Context, cfg Config, in io.Reader, out io.Writer) error {
	p := tea.NewProgram(New(cfg), tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out), tea.WithAltScreen())
	_, err := p.Run()
	if ctx.Err() != nil {
		return nil
	}
	return err
}
