package top

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
	"github.com/sessionpipe/sessionpipe/pipeline/index/api"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
)

// TestTop_ShowsWhatTheIndexerCounts runs a real indexer on entries of the
// current hour and renders the view from its API.
func TestTop_ShowsWhatTheIndexerCounts(t *testing.T) {
	now := time.Now().UTC()
	srv := natstest.RunServer(t)
	js := natstest.JetStream(t, natstest.Connect(t, srv.URL()))
	_, err := bus.EnsureStream(t.Context(), js, bus.StreamConfig{})
	require.NoError(t, err)
	p, err := bus.NewPublisher(js, bus.PublisherConfig{})
	require.NoError(t, err)
	for i := range 3 {
		sid := fmt.Sprintf("live-session-%d", i)
		user := schema.Entry{Format: schema.FormatClaudeCode, Host: "laptop", SessionID: sid, EntryID: sid + "-u", TS: now.Add(-time.Minute),
			Kind: schema.KindMessage, Role: schema.RoleUser, Text: "go", CWD: "/work/proj"}
		reply := schema.Entry{Format: schema.FormatClaudeCode, Host: "laptop", SessionID: sid, EntryID: sid + "-a", TS: now,
			Kind: schema.KindMessage, Role: schema.RoleAssistant, Model: "claude-sonnet-4-5", MessageID: sid + "-m",
			UsageKey: "claude:" + sid, Usage: &schema.Usage{Input: 1000, Output: 2_000_000}, CWD: "/work/proj"}
		for _, e := range []*schema.Entry{&user, &reply} {
			require.NoError(t, p.Publish(t.Context(), bus.EntryMsg(bus.DefaultPrefix, e, nil), nil))
		}
	}
	require.NoError(t, p.Close(t.Context()))
	rules, err := alert.Parse("r.yaml", []byte("rules:\n  - name: big\n    scope: session\n    metric: output_tokens\n    above: 1000000\n"))
	require.NoError(t, err)
	ix, err := index.NewIndexer(index.IndexerConfig{JS: js, Dir: t.TempDir(), Pricer: price.Default(), Rules: rules, CommitInterval: 10 * time.Millisecond})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { ix.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()
	web := httptest.NewServer(api.Handler(ix, api.Config{Token: "t"}))
	defer web.Close()

	cfg := Config{API: web.URL, Token: "t", Now: func() time.Time { return now }}
	var snap Snapshot
	natstest.CheckFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		snap = Fetch(t.Context(), cfg)
		if snap.Err != nil {
			return snap.Err
		}
		if len(snap.Active) != 3 || len(snap.Alerts) != 3 {
			return fmt.Errorf("%d sessions, %d alerts", len(snap.Active), len(snap.Alerts))
		}
		return nil
	})
	require.Equal(t, int64(3), snap.TodayCalls)
	require.Equal(t, int64(3*2_001_000), snap.TodayTokens)
	require.Positive(t, snap.TodayCost)
	require.Equal(t, snap.TodayCost, snap.HourCost)

	m := New(cfg)
	next, _ := m.Update(tea.WindowSizeMsg{Width: 140})
	next, cmd := next.Update(snapMsg(snap))
	require.NotNil(t, cmd, "a snapshot schedules the next refresh")
	view := next.View()
	for _, want := range []string{"sessionpipe top", "3 sessions active", "live-session-0", "/work/proj", "6,003,000 tokens", "alerts", "big"} {
		require.Contains(t, view, want)
	}
	_, cmd = next.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	require.NotNil(t, cmd)
	require.IsType(t, tea.QuitMsg{}, cmd())

	// The API gone: the view says so instead of failing.
	bad := Fetch(t.Context(), Config{API: "http://127.0.0.1:1"})
	require.Error(t, bad.Err)
	next, _ = m.Update(snapMsg(bad))
	require.Contains(t, next.View(), "cannot reach the indexer")
}

// A session id, host or path from a transcript holding terminal escapes
// (ESC, CR, NUL) is shown escaped, never sent to the terminal raw.
func TestTop_EscapesControlCharacters(t *testing.T) {
	now := time.Now().UTC()
	snap := Snapshot{At: now, Active: []index.Session{{
		SessionID: "evil\x1b[2J\r", Format: schema.FormatClaudeCode, Host: "h\x00st", CWD: "/w/\x1b]0;title\x07", LastTS: now,
	}}}
	m := New(Config{Now: func() time.Time { return now }})
	next, _ := m.Update(tea.WindowSizeMsg{Width: 140})
	next, _ = next.Update(snapMsg(snap))
	view := next.View()
	require.NotContains(t, view, "\x1b[2J")
	require.NotContains(t, view, "\x00")
	require.NotContains(t, view, "\x07")
	require.Contains(t, view, `evil\x1b[2J\r`)
	require.Contains(t, view, `h\x00st`)
}
