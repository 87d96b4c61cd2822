package api_test

import (
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/testutil/indextest"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/browsertest"
	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
	"github.com/sessionpipe/sessionpipe/pipeline/index/api"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/pipeline/tail"
)

// The dashboard in a real headless Chromium (Debian's chromium, driven by
// chromedp). Without chromium in PATH these tests fail, unless
// SESSIONPIPE_NO_BROWSER=1 says to skip them. Screenshots of every view
// go to $SESSIONPIPE_SCREENSHOTS (default: the test's temporary
// directory, logged). The page holds an event stream open, so nothing
// waits for the network to be idle: every wait is on the page's content,
// polled, with a generous ceiling.

// browserCeiling bounds each wait on the page (a loaded 2-core CI box).
const browserCeiling = 60 * time.Second

// The 100,000-session overview is usable within dashboardGoal of the
// navigation's start at best of dashboardRuns navigations, and within
// dashboardCeiling at their median (room for a loaded 2-core CI box:
// quiet and loaded medians in benchmarks/RESULTS.md).
const (
	dashboardRuns    = 5
	dashboardGoal    = time.Second
	dashboardCeiling = 3 * time.Second
)

// newBrowser starts a headless Chromium and returns a tab's context.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	path := browsertest.Chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.WindowSize(1400, 1000), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelA := chromedp.NewExecAllocator(t.Context(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelB(); cancelA() })
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("about:blank")), "start chromium")
	return ctx
}

// screenshotDir is where the views' screenshots go.
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SESSIONPIPE_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	file := filepath.Join(dir, name+".png")
	require.NoError(t, os.WriteFile(file, png, 0o644))
	t.Logf("screenshot: %s", file)
}

// waitFor polls a JavaScript condition on the page until it holds; it
// returns how long that took.
func waitFor(t *testing.T, ctx context.Context, what, expr string) time.Duration {
	t.Helper()
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, browserCeiling)
	defer cancel()
	var err error
	for {
		_, err = chromedp.Run(wctx, chromedp.Poll[bool]("Boolean("+expr+")", chromedp.WithPollingInterval(10*time.Millisecond)))
		// A document replacing another (a navigation's commit) destroys
		// the execution context a poll runs in: poll again in the new one.
		if err == nil || wctx.Err() != nil || !contextReplaced(err) {
			break
		}
	}
	if err != nil {
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText.slice(0, 2000)`))
		t.Fatalf("waiting for %s (%s): %v; the page says:\n%s", what, expr, err, body)
	}
	return time.Since(start)
}

// contextReplaced reports the errors of an evaluation whose JavaScript
// context went away with its document.
func contextReplaced(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Cannot find context with specified id") || strings.Contains(msg, "Execution context was destroyed")
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(t, err, expr)
	return v
}

// click clicks the first element selector matches, from the page itself:
// the page re-renders its lists at each refresh, and a node DevTools found
// in one call may be gone by the next (chromedp.Click: "Could not find
// node with given id", seen in CI). The click runs after the evaluation
// has answered, in case it leaves the document.
func click(t *testing.T, ctx context.Context, selector string) {
	t.Helper()
	found := eval[bool](t, ctx, `((el) => { if (!el) return false; setTimeout(() => el.click(), 0); return true })(document.querySelector(`+strconv.Quote(selector)+`))`)
	require.True(t, found, "no element matches %s", selector)
}

// usdText is the page's rendering of a cost: cents with thousands
// separators, four places below half a cent.
func usdText(v float64) string {
	switch {
	case v == 0:
		return "$0.00"
	case v > 0 && v < 0.005:
		return "$" + strconv.FormatFloat(v, 'f', 4, 64)
	}
	s := strconv.FormatFloat(v, 'f', 2, 64)
	whole, frac, _ := strings.Cut(s, ".")
	return "$" + thousands(whole) + "." + frac
}

func thousands(s string) string {
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

type usageAnswer struct {
	Rows  []index.UsageRow `json:"rows"`
	Total index.UsageRow   `json:"total"`
}

type sessionsAnswer struct {
	Sessions []index.Session `json:"sessions"`
	Total    *int            `json:"total"`
}

// TestDashboard_Browser runs the shipped samples through a tailer, JetStream
// and an indexer, and checks the page against the API: the totals equal
// the API's to the cent, a line appended to a transcript shows (measured;
// the goal is 2 s), an alert appears, the session view shows the session.
func TestDashboard_Browser(t *testing.T) {
	ctx := newBrowser(t)
	shots := screenshotDir(t)

	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS("../../../testdata/corpus")))
	// What the page must come to: the samples read offline.
	mem := indextest.MustNew(t, index.Config{Pricer: price.Default()})
	var wantTokens int64
	var maxTokens int64
	for _, f := range indextest.ReadFiles(t, dir) {
		for i := range f {
			mem.Add(&f[i])
		}
	}
	for _, s := range mem.Sessions() {
		wantTokens += s.TotalTokens
		maxTokens = max(maxTokens, s.TotalTokens)
	}
	require.Positive(t, wantTokens)
	// A rule that only the appended line makes fire.
	rules, err := alert.Parse("rules.yaml", fmt.Appendf(nil, "rules:\n  - name: big-session\n    scope: session\n    metric: total_tokens\n    above: %d\n", maxTokens))
	require.NoError(t, err)

	js := indextest.NewStream(t, bus.StreamConfig{})
	pub, err := bus.NewPublisher(js, bus.PublisherConfig{})
	require.NoError(t, err)
	tl, err := tail.New(tail.Config{Watch: []string{dir}, StateDir: t.TempDir(), Host: "h", Publisher: pub, Text: true})
	require.NoError(t, err)
	tctx, stopTail := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = tl.Run(tctx) })
	t.Cleanup(func() { stopTail(); wg.Wait(); _ = pub.Close(context.Background()) })
	ix, _ := indextest.RunIndexer(t, index.IndexerConfig{JS: js, Dir: t.TempDir(), Pricer: price.Default(), CommitInterval: 10 * time.Millisecond,
		Rules: rules, AlertMaxLag: -1})
	srv := httptest.NewServer(api.Handler(ix, api.Config{}))
	t.Cleanup(srv.Close)
	api := func(path string, v any) {
		t.Helper()
		require.Equal(t, 200, indextest.GetJSON(t, srv, path, "", v), path)
	}
	natstest.CheckFor(t, 2*time.Minute, 20*time.Millisecond, func() error {
		var u usageAnswer
		api("/api/usage?group_by=model", &u)
		if u.Total.TotalTokens != wantTokens {
			return fmt.Errorf("the indexer has %d tokens of %d", u.Total.TotalTokens, wantTokens)
		}
		return nil
	})

	const tz = "America/New_York"
	require.NoError(t, chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: tz})
		return err
	})))
	loaded := `document.body.dataset.loadedUsage && document.body.dataset.loadedSessions && document.body.dataset.loadedAlerts`
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")))
	took := waitFor(t, ctx, "the overview", loaded)
	t.Logf("overview loaded in %s", took.Round(time.Millisecond))
	waitFor(t, ctx, "live events", `document.getElementById('conn').dataset.state === 'live'`)

	// The samples are older than a week: the page opens on all of them,
	// in the browser's time zone, and says so in its address.
	require.Equal(t, "?range=all", eval[string](t, ctx, `location.search`), "opens on the range where the data is")
	require.Equal(t, "times in "+tz, eval[string](t, ctx, `document.getElementById('tz-note').textContent`))

	// totalsDiffer compares the cards and the first page of sessions with
	// the API's answers for the same range, to the cent, and says where
	// they differ. The page refreshes its parts with requests of their
	// own, so right after a change one may show it before another.
	totalsDiffer := func() error {
		var u usageAnswer
		api("/api/usage?group_by=model&bucket=day&tz="+url.QueryEscape(tz), &u)
		var sum float64
		for _, r := range u.Rows {
			sum += r.CostUSD
		}
		if math.Abs(u.Total.CostUSD-sum) > 1e-6 {
			return fmt.Errorf("the chart's rows sum to %v, the total is %v", sum, u.Total.CostUSD)
		}
		for _, c := range []struct{ what, want, js string }{
			{"spend", usdText(u.Total.CostUSD), `document.getElementById('spend').textContent`},
			{"tokens", thousands(strconv.FormatInt(u.Total.TotalTokens, 10)) + " tokens", `document.getElementById('tokens').title`},
			{"API calls", thousands(strconv.FormatInt(u.Total.Calls, 10)), `document.getElementById('calls').textContent`},
		} {
			if got := eval[string](t, ctx, c.js); got != c.want {
				return fmt.Errorf("%s: the page shows %q, the API %q", c.what, got, c.want)
			}
		}
		var page sessionsAnswer
		api("/api/sessions?limit=25&tz="+url.QueryEscape(tz), &page)
		if page.Total == nil {
			return fmt.Errorf("the API's first page has no total")
		}
		if got, want := eval[string](t, ctx, `document.getElementById('sessions-count').textContent`), thousands(strconv.Itoa(*page.Total)); got != want {
			return fmt.Errorf("sessions: the page shows %q, the API %q", got, want)
		}
		cells := eval[[]string](t, ctx, `[...document.querySelectorAll('#sessions tbody tr')].map((tr) => tr.cells[8].textContent)`)
		if len(cells) != len(page.Sessions) {
			return fmt.Errorf("the page lists %d sessions, the API's page %d", len(cells), len(page.Sessions))
		}
		for i, s := range page.Sessions {
			if s.UnpricedCalls == 0 && cells[i] != usdText(s.CostUSD) {
				return fmt.Errorf("session %s: the page shows %s, the API %s", s.SessionID, cells[i], usdText(s.CostUSD))
			}
			if s.UnpricedCalls != 0 && !strings.Contains(cells[i], "unpriced") {
				return fmt.Errorf("session %s: the page shows %q, the API has unpriced calls", s.SessionID, cells[i])
			}
		}
		return nil
	}
	// checkTotals waits until the page shows the API's figures: a part
	// of the page whose request is still on its way shows the previous
	// range's or state's.
	checkTotals := func() {
		t.Helper()
		natstest.CheckFor(t, browserCeiling, 20*time.Millisecond, totalsDiffer)
	}
	checkTotals()
	screenshot(t, ctx, shots, "overview")

	t.Run("StackedByHost", func(t *testing.T) {
		n := eval[string](t, ctx, `document.body.dataset.loadedUsage`)
		require.NoError(t, chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#by"), "host"),
			chromedp.Evaluate[chromedp.Void](`document.getElementById('by').dispatchEvent(new Event('change'))`)))
		waitFor(t, ctx, "the chart by host", `document.body.dataset.loadedUsage !== '`+n+`'`)
		require.Contains(t, eval[string](t, ctx, `location.search`), "by=host")
		require.Equal(t, []string{"h"}, eval[[]string](t, ctx, `[...document.querySelectorAll('#chart .u-series th .u-label')].map((e) => e.textContent).filter((l) => l !== 'day')`))
		screenshot(t, ctx, shots, "chart-by-host")
	})

	t.Run("AppendedLineShows", func(t *testing.T) {
		before := eval[string](t, ctx, `document.getElementById('spend').textContent`)
		file := filepath.Join(dir, "claude-code", "claude-code-transcripts", "sample_session.jsonl")
		line := fmt.Sprintf(`{"type":"assistant","timestamp":%q,"sessionId":"test-session-id","cwd":"/tmp/live","uuid":"live-1","requestId":"req_live_1",`+
			`"message":{"id":"msg_live_1","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"live"}],`+
			`"usage":{"input_tokens":%d,"output_tokens":1000}}}`+"\n", time.Now().UTC().Format(time.RFC3339Nano), maxTokens+1000)
		f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		start := time.Now()
		_, err = f.WriteString(line)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		waitFor(t, ctx, "the appended line", `document.getElementById('spend').textContent !== '`+before+`'`)
		shown := time.Since(start)
		t.Logf("MEASURED: an appended line showed on the page %s after it was written (goal 2 s)", shown.Round(time.Millisecond))
		require.Less(t, shown, browserCeiling)
		// The page refreshes at most once a second, each part with its
		// own request: let the last refreshes land, then every figure is
		// the API's again (the cards, the list, each session's cost).
		natstest.CheckFor(t, browserCeiling, 20*time.Millisecond, totalsDiffer)

		took := waitFor(t, ctx, "the alert", `[...document.querySelectorAll('#alerts tbody td')].some((td) => td.textContent === 'big-session')`)
		t.Logf("MEASURED: the alert showed %s after the line was shown", took.Round(time.Millisecond))
		require.Equal(t, "1", eval[string](t, ctx, `document.getElementById('alerts-today').textContent`))
		screenshot(t, ctx, shots, "overview-live")
	})

	t.Run("SessionView", func(t *testing.T) {
		var d struct {
			Session index.Session `json:"session"`
			Turns   []index.Turn  `json:"turns"`
		}
		api("/api/sessions/test-session-id?format=claude-code&host=h", &d)
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/sessions/test-session-id?format=claude-code&host=h&tz="+url.QueryEscape(tz))))
		waitFor(t, ctx, "the session", `document.body.dataset.loadedDetail`)
		require.False(t, eval[bool](t, ctx, `document.getElementById('detail').hidden`))
		require.True(t, eval[bool](t, ctx, `document.getElementById('overview').hidden`))
		require.Len(t, eval[[]string](t, ctx, `[...document.querySelectorAll('#turns tbody tr')].map((tr) => tr.textContent)`), max(len(d.Turns), 1))
		fields := eval[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll('#detail-fields dt')].map((dt) => [dt.textContent, dt.nextElementSibling.textContent]))`)
		require.Equal(t, usdText(d.Session.CostUSD), fields["Cost"])
		require.Equal(t, "test-session-id", fields["Session"])
		screenshot(t, ctx, shots, "session")

		// Back to the overview by its link, with the range kept.
		click(t, ctx, "#back")
		waitFor(t, ctx, "the overview again", `!document.getElementById('overview').hidden && document.querySelectorAll('#sessions tbody a').length > 0`)
		require.Equal(t, "/", eval[string](t, ctx, `location.pathname`))
	})

	t.Run("SearchPagesAndLinks", func(t *testing.T) {
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/?range=all&q=test-session")))
		waitFor(t, ctx, "the search", `document.body.dataset.loadedSessions && document.querySelectorAll('#sessions tbody a').length === 1`)
		require.Equal(t, "1", eval[string](t, ctx, `document.getElementById('sessions-count').textContent`))
		require.Equal(t, "test-session-id", eval[string](t, ctx, `document.querySelector('#sessions tbody a').parentElement.title`))
		click(t, ctx, "#sessions tbody a")
		waitFor(t, ctx, "the session by its link", `document.body.dataset.loadedDetail && location.pathname === '/sessions/test-session-id'`)
		require.Contains(t, eval[string](t, ctx, `location.search`), "q=test-session", "the view's parameters travel with it")
	})
}

// TestDashboard_Browser100k opens the page on a state of 100,000 sessions
// and measures how long until it is usable: the totals, the chart and the
// first page of sessions shown with their count (the goal is 1 s).
func TestDashboard_Browser100k(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the 100,000-session state takes a while to build")
	}
	ctx := newBrowser(t)
	shots := screenshotDir(t)
	const n = 100_000
	dir := t.TempDir()
	start := time.Now()
	indextest.BuildState(t, dir, n, time.Now())
	t.Logf("built a state of %d sessions in %s", n, time.Since(start).Round(time.Millisecond))
	js := indextest.NewStream(t, bus.StreamConfig{})
	start = time.Now()
	ix, _ := indextest.RunIndexer(t, index.IndexerConfig{JS: js, Dir: dir, Pricer: price.Default(), CommitInterval: 10 * time.Millisecond})
	t.Logf("the indexer opened it (listing built) in %s", time.Since(start).Round(time.Millisecond))
	srv := httptest.NewServer(api.Handler(ix, api.Config{}))
	t.Cleanup(srv.Close)
	// The browser is started and has a renderer for the origin (a page of
	// it drawn once, /healthz): what is measured is the dashboard, not
	// Chromium starting a process.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/healthz")))

	// Usable: the totals, the chart and the first page of sessions with
	// their count shown. The page says when, in milliseconds since the
	// navigation started (performance.now() when it rendered the last of
	// them: data-usable-ms); the first navigation loads the chart library,
	// the next ones have it cached, as a user coming back has.
	usable := `document.body.dataset.usableMs && document.body.dataset.loadedUsage && document.body.dataset.loadedSessions && document.getElementById('sessions-count').textContent === '` +
		thousands(strconv.Itoa(n)) + `' && document.querySelectorAll('#sessions tbody a').length === 25 && document.querySelector('#chart canvas')`
	var took []time.Duration
	for i := range dashboardRuns {
		if i > 0 {
			require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/healthz")))
		}
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/?range=all")))
		waitFor(t, ctx, "the 100,000-session overview", usable)
		ms, err := strconv.Atoi(eval[string](t, ctx, `document.body.dataset.usableMs`))
		require.NoError(t, err)
		took = append(took, time.Duration(ms)*time.Millisecond)
		t.Logf("run %d: its requests (name, start, duration in ms): %s; the page (response end, DOM interactive, DOM loaded, in ms): %s", i+1, eval[string](t, ctx,
			`JSON.stringify(performance.getEntriesByType('resource').map((e) => [e.name.replace(location.origin, ''), Math.round(e.startTime), Math.round(e.duration)]))`),
			eval[string](t, ctx, `JSON.stringify(performance.getEntriesByType('navigation').map((e) => [Math.round(e.responseEnd), Math.round(e.domInteractive), Math.round(e.domContentLoadedEventEnd)]))`))
	}
	sorted := slices.Clone(took)
	slices.Sort(sorted)
	median := sorted[len(sorted)/2]
	t.Logf("MEASURED: the 100,000-session overview was usable %s after the navigation started, median of %d (%v; goal 1 s)", median, len(took), took)
	require.LessOrEqual(t, sorted[0], dashboardGoal, "the best of %d navigations (%v) meets the goal", len(took), took)
	require.LessOrEqual(t, median, dashboardCeiling, "the median of %d navigations (%v), within the ceiling of a loaded machine", len(took), took)

	// Without a range in its address the page opens on the last 7 days,
	// which have usage here (the state ends now).
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")))
	waitFor(t, ctx, "the overview of the last 7 days", `document.body.dataset.loadedUsage && document.body.dataset.loadedSessions`)
	require.Equal(t, "", eval[string](t, ctx, `location.search`), "opens on the last 7 days")
	require.Equal(t, "true", eval[string](t, ctx, `document.querySelector('#range button[data-range="7d"]').getAttribute('aria-pressed')`))
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/?range=all")))
	waitFor(t, ctx, "the 100,000-session overview", usable)

	var u usageAnswer
	require.Equal(t, 200, indextest.GetJSON(t, srv, "/api/usage?group_by=model&bucket=day&tz=UTC", "", &u))
	require.Equal(t, usdText(u.Total.CostUSD), eval[string](t, ctx, `document.getElementById('spend').textContent`))
	screenshot(t, ctx, shots, "overview-100k")

	// A search over the 100,000 (typed: the page waits 300 ms for the
	// typing to stop, included). On a loaded machine the typing can pause
	// longer than that, and the page then searches for what was typed so
	// far first: the search is shown when the page shows the API's count
	// for the whole text.
	var page sessionsAnswer
	require.Equal(t, 200, indextest.GetJSON(t, srv, "/api/sessions?limit=25&range=all&q=project-17&tz=UTC", "", &page))
	require.Positive(t, *page.Total)
	require.Less(t, *page.Total, n)
	n0 := eval[string](t, ctx, `document.body.dataset.loadedSessions`)
	start = time.Now()
	require.NoError(t, chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#q"), "project-17")))
	typed := time.Since(start)
	waitFor(t, ctx, "the search", `document.body.dataset.loadedSessions !== '`+n0+`' && location.search.includes('q=project-17') && document.getElementById('sessions-count').textContent === '`+
		thousands(strconv.Itoa(*page.Total))+`'`)
	t.Logf("MEASURED: a search of the 100,000 sessions showed %s after the typing ended (300 ms of it the pause the page waits for; typing took %s)",
		(time.Since(start) - typed).Round(time.Millisecond), typed.Round(time.Millisecond))
	require.Equal(t, thousands(strconv.Itoa(*page.Total)), eval[string](t, ctx, `document.getElementById('sessions-count').textContent`))
	screenshot(t, ctx, shots, "search-100k")
}
