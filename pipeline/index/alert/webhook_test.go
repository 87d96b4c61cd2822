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

	"github.com/sessionpipe/sessionpipe/internal/testutil/logtest"
	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
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

// deliverAsync runs w.Deliver(ctx, ev) in a goroutine; the channel gets
// its result.
func deliverAsync(ctx context.Context, w *Webhook, ev Event) <-chan error {
	done := make(chan error, 1)
	go func() { done <- w.Deliver(ctx, ev) }()
	return done
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
		MaxBackoff: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)

	require.NoError(t, w.Deliver(t.Context(), testEvent("ev1")))
	require.Equal(t, WebhookStats{Sent: 1, Attempts: 4}, w.Stats())
	keys, accepted, texts := h.state()
	require.Equal(t, []string{"ev1", "ev1", "ev1", "ev1"}, keys, "every attempt carries the event id")
	require.Equal(t, map[string]int{"ev1": 1}, accepted, "arrives exactly once")
	require.Equal(t, []string{":rotating_light: big-session: session s-ev1 total_tokens 1,000,001 > 1,000,000 (host h1)"}, texts)

	// Recovered: the next event goes through at the first attempt.
	require.NoError(t, w.Deliver(t.Context(), testEvent("ev2")))
	require.Equal(t, WebhookStats{Sent: 2, Attempts: 5}, w.Stats())
	_, accepted, _ = h.state()
	require.Equal(t, map[string]int{"ev1": 1, "ev2": 1}, accepted)

	log := logs.String()
	require.Contains(t, log, `msg="alert: webhook attempt failed" component=alert.webhook event_id=ev1 rule=big-session attempt=1 error="status 500 Internal Server Error"`)
	require.Contains(t, log, `attempt=3 error="post: Post \"`+h.URL+`\": context deadline exceeded"`)
	require.Contains(t, log, `msg="alert: webhook delivered after retries" component=alert.webhook event_id=ev1 attempt=4`)
}

// A 4xx other than 408 and 429 gives the event up at once; 408, 429 and
// 5xx are retried.
func TestWebhook_RefusedForGood(t *testing.T) {
	h := newHook(t, "400", "408", "429", "503", "500")
	w, err := NewWebhook(WebhookConfig{URL: h.URL, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	require.NoError(t, err)

	err = w.Deliver(t.Context(), testEvent("refused"))
	require.ErrorIs(t, err, ErrWebhookPermanent)
	require.EqualError(t, err, "alert: webhook refused the event: status 400 Bad Request")
	require.NoError(t, w.Deliver(t.Context(), testEvent("fine")))
	require.Equal(t, WebhookStats{Sent: 1, Failed: 1, Attempts: 6}, w.Stats())
	keys, accepted, _ := h.state()
	require.Equal(t, []string{"refused", "fine", "fine", "fine", "fine", "fine"}, keys)
	require.Equal(t, map[string]int{"fine": 1}, accepted)
}

// A transient failure never gives an event up: Deliver retries until the
// endpoint takes it or its context ends, and then says the event is not
// delivered (the caller keeps it).
func TestWebhook_RetriesUntilStopped(t *testing.T) {
	h := newHook(t, "503", "503", "503", "503", "503", "503", "503", "503", "503", "503", "hang")
	w, err := NewWebhook(WebhookConfig{URL: h.URL, Timeout: time.Minute, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := deliverAsync(ctx, w, testEvent("inflight"))
	waitStats(t, w, func(s WebhookStats) bool { return s.Attempts == 11 }) // the hanging attempt
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	require.Equal(t, WebhookStats{Attempts: 11}, w.Stats(), "neither sent nor given up")

	// Delivered again later, it goes through.
	require.NoError(t, w.Deliver(t.Context(), testEvent("inflight")))
	_, accepted, _ := h.state()
	require.Equal(t, map[string]int{"inflight": 1}, accepted)
}

func TestWebhookConfig_Validate(t *testing.T) {
	for _, c := range []WebhookConfig{{}, {URL: "ftp://x"}, {URL: "http://"}, {URL: "http://x", Timeout: -1}, {URL: "http://x", MaxBackoff: -1}} {
		_, err := NewWebhook(c)
		require.ErrorIs(t, err, ErrInvalidConfig, "NewWebhook(%+v)", c)
	}
}
