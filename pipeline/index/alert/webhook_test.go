package alert

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/logtest"
	"github.com/sessionpipe/sessionpipe/internal/natstest"
)

// hook is a webhook endpoint whose answer to each request is scripted:
// "500", "hang" (until the client gives up), "400", "503"; past the script,
// 200. It records the events it accepted by idempotency key.
type hook struct {
	*httptest.Server

	mu       sync.Mutex
	script   []string
	keys     []string       // Idempotency-Key of every request
	accepted map[string]int // key → accepted count
	texts    []string       // text of accepted bodies, in order
}

func newHook(tb testing.TB, script ...string) *hook {
	tb.Helper()
	h := &hook{script: script, accepted: make(map[string]int)}
	h.Server = httptest.NewServer(http.HandlerFunc(h.serve))
	tb.Cleanup(h.Close)
	return h
}

func (h *hook) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	key := r.Header.Get("Idempotency-Key")
	h.mu.Lock()
	h.keys = append(h.keys, key)
	step := "200"
	if len(h.script) > 0 {
		step, h.script = h.script[0], h.script[1:]
	}
	h.mu.Unlock()
	switch step {
	case "hang":
		<-r.Context().Done() // the sender's timeout closes the connection
		return
	case "200":
		var b struct{ Text string }
		if err := json.Unmarshal(body, &b); err != nil || r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		h.accepted[key]++
		h.texts = append(h.texts, b.Text)
		h.mu.Unlock()
		w.WriteHeader(http.StatusOK)
		return
	case "503":
		w.Header().Set("Retry-After", "1")
	}
	var code int
	fmt.Sscan(step, &code)
	w.WriteHeader(code)
}

func (h *hook) state() (keys []string, accepted map[string]int, texts []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	accepted = make(map[string]int)
	for k, v := range h.accepted {
		accepted[k] = v
	}
	return append([]string(nil), h.keys...), accepted, append([]string(nil), h.texts...)
}

func testEvent(id string) Event {
	return Event{ID: id, Rule: "big-session", Kind: KindThreshold, Scope: ScopeSession, Metric: MetricTotalTokens,
		Key: "s-" + id, Value: 1_000_001, Threshold: 1_000_000, Time: at(10, 0), Host: "h1", SessionID: "s-" + id}
}

// runWebhook starts w.Run until the test ends, and returns a function
// that stops it and returns Run's error.
func runWebhook(tb testing.TB, w *Webhook) (stop func() error) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() { cancel(); err = <-done })
		return err
	}
	tb.Cleanup(func() { _ = stop() })
	return stop
}

func waitStats(tb testing.TB, w *Webhook, ok func(WebhookStats) bool) WebhookStats {
	tb.Helper()
	natstest.CheckFor(tb, 10*time.Second, 5*time.Millisecond, func() error {
		if s := w.Stats(); !ok(s) {
			return fmt.Errorf("stats %+v", s)
		}
		return nil
	})
	return w.Stats()
}

func TestWebhook_FailsHangsThenRecovers(t *testing.T) {
	h := newHook(t, "500", "500", "hang")
	var logs logtest.Buffer
	w, err := NewWebhook(WebhookConfig{URL: h.URL, Timeout: 200 * time.Millisecond, MinBackoff: 5 * time.Millisecond,
		MaxBackoff: 20 * time.Millisecond, MaxAttempts: 10, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	stop := runWebhook(t, w)

	w.Send(testEvent("ev1"))
	st := waitStats(t, w, func(s WebhookStats) bool { return s.Sent == 1 })
	require.Equal(t, WebhookStats{Sent: 1, Attempts: 4}, st)
	keys, accepted, texts := h.state()
	require.Equal(t, []string{"ev1", "ev1", "ev1", "ev1"}, keys, "every attempt carries the event id")
	require.Equal(t, map[string]int{"ev1": 1}, accepted, "arrives exactly once")
	require.Equal(t, []string{":rotating_light: big-session: session s-ev1 total_tokens 1,000,001 > 1,000,000 (host h1)"}, texts)

	// Recovered: the next event goes through at the first attempt.
	w.Send(testEvent("ev2"))
	st = waitStats(t, w, func(s WebhookStats) bool { return s.Sent == 2 })
	require.Equal(t, uint64(5), st.Attempts)
	_, accepted, _ = h.state()
	require.Equal(t, map[string]int{"ev1": 1, "ev2": 1}, accepted)

	require.ErrorIs(t, stop(), context.Canceled)
	log := logs.String()
	require.Contains(t, log, `msg="alert: webhook attempt failed" component=alert.webhook event_id=ev1 rule=big-session attempt=1 error="status 500 Internal Server Error"`)
	require.Contains(t, log, `attempt=3 error="post: Post \"`+h.URL+`\": context deadline exceeded"`)
	require.Contains(t, log, `msg="alert: webhook delivered after retries" component=alert.webhook event_id=ev1 attempt=4`)
}

func TestWebhook_GivesUp(t *testing.T) {
	h := newHook(t, "400", "503", "503", "503", "503")
	var logs logtest.Buffer
	w, err := NewWebhook(WebhookConfig{URL: h.URL, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond,
		MaxAttempts: 3, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	runWebhook(t, w)

	w.Send(testEvent("refused"))   // 400: not retried
	w.Send(testEvent("exhausted")) // 503 three times: given up
	w.Send(testEvent("fine"))      // one more 503, then accepted
	st := waitStats(t, w, func(s WebhookStats) bool { return s.Sent+s.Failed == 3 })
	require.Equal(t, WebhookStats{Sent: 1, Failed: 2, Attempts: 6}, st)
	keys, accepted, _ := h.state()
	require.Equal(t, []string{"refused", "exhausted", "exhausted", "exhausted", "fine", "fine"}, keys)
	require.Equal(t, map[string]int{"fine": 1}, accepted)
	require.Contains(t, logs.String(), `level=ERROR msg="alert: webhook gave up on an event" component=alert.webhook event_id=refused rule=big-session attempt=1 error="alert: webhook refused the event: status 400 Bad Request"`)
	require.Contains(t, logs.String(), `event_id=exhausted rule=big-session attempt=3 error="status 503 Service Unavailable"`)
}

func TestWebhook_MaxElapsed(t *testing.T) {
	h := newHook(t, "500", "500", "500", "500", "500", "500")
	w, err := NewWebhook(WebhookConfig{URL: h.URL, MinBackoff: 20 * time.Millisecond, MaxBackoff: 20 * time.Millisecond,
		MaxAttempts: 100, MaxElapsed: 30 * time.Millisecond})
	require.NoError(t, err)
	runWebhook(t, w)
	w.Send(testEvent("slow"))
	st := waitStats(t, w, func(s WebhookStats) bool { return s.Failed == 1 })
	require.LessOrEqual(t, st.Attempts, uint64(2), "a second wait of 16-24ms would end past 30ms")
}

func TestWebhook_QueueFullDropsOldest(t *testing.T) {
	h := newHook(t)
	var logs logtest.Buffer
	w, err := NewWebhook(WebhookConfig{URL: h.URL, QueueSize: 2, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	for _, id := range []string{"e1", "e2", "e3"} {
		w.Send(testEvent(id)) // Run not started: nothing is taken out
	}
	require.Equal(t, WebhookStats{Queued: 2, Dropped: 1}, w.Stats())
	require.Contains(t, logs.String(), `level=WARN msg="alert: webhook queue full: dropped the oldest event" component=alert.webhook event_id=e1 rule=big-session dropped=1`)

	runWebhook(t, w)
	waitStats(t, w, func(s WebhookStats) bool { return s.Sent == 2 })
	keys, _, _ := h.state()
	require.Equal(t, []string{"e2", "e3"}, keys, "in order, the oldest dropped")
}

func TestWebhook_StopPutsEventBack(t *testing.T) {
	h := newHook(t, "hang", "hang", "hang")
	w, err := NewWebhook(WebhookConfig{URL: h.URL, Timeout: time.Minute})
	require.NoError(t, err)
	stop := runWebhook(t, w)
	w.Send(testEvent("inflight"))
	waitStats(t, w, func(s WebhookStats) bool { return s.Attempts == 1 })
	require.ErrorIs(t, w.Run(context.Background()), ErrWebhookRunning)
	require.ErrorIs(t, stop(), context.Canceled)
	require.Equal(t, WebhookStats{Queued: 1, Attempts: 1}, w.Stats(), "not sent, not lost")

	// A new Run delivers it.
	h.mu.Lock()
	h.script = nil
	h.mu.Unlock()
	runWebhook(t, w)
	waitStats(t, w, func(s WebhookStats) bool { return s.Sent == 1 })
}

func TestWebhookConfig_Validate(t *testing.T) {
	for _, c := range []WebhookConfig{{}, {URL: "ftp://x"}, {URL: "http://"}, {URL: "http://x", Timeout: -1}, {URL: "http://x", QueueSize: -1}} {
		_, err := NewWebhook(c)
		require.ErrorIs(t, err, ErrInvalidConfig, "NewWebhook(%+v)", c)
	}
}
