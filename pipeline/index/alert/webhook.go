package alert

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// Defaults of [WebhookConfig].
const (
	DefaultWebhookTimeout     = 10 * time.Second
	DefaultWebhookAttempts    = 6
	DefaultWebhookMaxElapsed  = 2 * time.Minute
	DefaultWebhookMinBackoff  = time.Second
	DefaultWebhookMaxBackoff  = 30 * time.Second
	DefaultWebhookQueueSize   = 1024
	webhookUserAgent          = "sessionpipe-alert/1"
	webhookIdempotencyHeader  = "Idempotency-Key"
	webhookEventIDHeader      = "X-Sessionpipe-Event-Id"
	maxWebhookResponseDrained = 64 << 10
)

// WebhookConfig configures a [Webhook].
type WebhookConfig struct {
	// URL receives a POST per event (required, http or https).
	URL string
	// Timeout bounds one attempt, from connecting to reading the status
	// (default [DefaultWebhookTimeout]).
	Timeout time.Duration
	// MaxAttempts bounds the attempts per event (default
	// [DefaultWebhookAttempts]), and MaxElapsed the time from the first
	// attempt to the start of the last (default [DefaultWebhookMaxElapsed]):
	// after either the event is given up, counted and logged.
	MaxAttempts int
	MaxElapsed  time.Duration
	// MinBackoff and MaxBackoff bound the wait between attempts: it
	// doubles from MinBackoff up to MaxBackoff, with ±20% jitter; a
	// Retry-After of a 429 or 503 is followed up to MaxBackoff (defaults
	// [DefaultWebhookMinBackoff], [DefaultWebhookMaxBackoff]).
	MinBackoff time.Duration
	MaxBackoff time.Duration
	// QueueSize bounds the events waiting (default
	// [DefaultWebhookQueueSize]). When it is full, [Webhook.Send] drops the
	// oldest waiting event, counts it and logs it.
	QueueSize int
	// Header is added to every request (e.g. Authorization).
	Header http.Header
	// Client sends the requests (default: a new http.Client; Timeout
	// applies on top of the client's own).
	Client *http.Client
	// Logger receives failed attempts, given-up and dropped events (nil:
	// discard).
	Logger *slog.Logger
}

// Validate checks the configuration.
func (c WebhookConfig) Validate() error {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &ConfigError{Field: "url", Value: c.URL, Err: fmt.Errorf("%w: want an http or https URL", ErrInvalidConfig)}
	}
	for name, v := range map[string]time.Duration{"timeout": c.Timeout, "max_elapsed": c.MaxElapsed,
		"min_backoff": c.MinBackoff, "max_backoff": c.MaxBackoff} {
		if v < 0 {
			return &ConfigError{Field: name, Value: v, Err: ErrInvalidConfig}
		}
	}
	if c.MaxAttempts < 0 {
		return &ConfigError{Field: "max_attempts", Value: c.MaxAttempts, Err: ErrInvalidConfig}
	}
	if c.QueueSize < 0 {
		return &ConfigError{Field: "queue_size", Value: c.QueueSize, Err: ErrInvalidConfig}
	}
	return nil
}

// WebhookStats counts what a [Webhook] did.
type WebhookStats struct {
	Queued   int    // events waiting now
	Sent     uint64 // events the endpoint accepted (2xx)
	Failed   uint64 // events given up after their attempts, or refused for good
	Dropped  uint64 // events dropped from a full queue
	Attempts uint64 // requests made
}

// Webhook posts events to a URL in Slack's incoming-webhook shape
// ([Event.WebhookBody]), one at a time in the order sent, retrying with
// exponential backoff. Every request of an event carries the event id in an
// Idempotency-Key header (and X-Sessionpipe-Event-Id), so a receiver that
// saw an attempt the sender timed out on can drop the retry.
//
// [Webhook.Send] never blocks: events wait in a bounded queue that
// [Webhook.Run] drains. Events still waiting when Run returns are not sent
// (the alert subject holds them all).
type Webhook struct {
	cfg    WebhookConfig
	client *http.Client
	log    *slog.Logger

	mu      sync.Mutex
	queue   []Event // FIFO: queue[0] is the oldest
	stats   WebhookStats
	wake    chan struct{}
	running bool
}

// NewWebhook returns a webhook sender; call [Webhook.Run] to deliver.
func NewWebhook(cfg WebhookConfig) (*Webhook, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Timeout = cmp.Or(cfg.Timeout, DefaultWebhookTimeout)
	cfg.MaxAttempts = cmp.Or(cfg.MaxAttempts, DefaultWebhookAttempts)
	cfg.MaxElapsed = cmp.Or(cfg.MaxElapsed, DefaultWebhookMaxElapsed)
	cfg.MinBackoff = cmp.Or(cfg.MinBackoff, DefaultWebhookMinBackoff)
	cfg.MaxBackoff = max(cmp.Or(cfg.MaxBackoff, DefaultWebhookMaxBackoff), cfg.MinBackoff)
	cfg.QueueSize = cmp.Or(cfg.QueueSize, DefaultWebhookQueueSize)
	w := &Webhook{cfg: cfg, client: cfg.Client, log: cfg.Logger, wake: make(chan struct{}, 1)}
	if w.client == nil {
		w.client = &http.Client{}
	}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	w.log = w.log.With(KeyComponent, "alert.webhook")
	return w, nil
}

// Send queues an event for delivery and returns at once. When the queue is
// full the oldest waiting event is dropped (counted in
// [WebhookStats].Dropped and logged with its id).
func (w *Webhook) Send(ev Event) {
	w.mu.Lock()
	if len(w.queue) >= w.cfg.QueueSize {
		old := w.queue[0]
		w.queue = w.queue[1:]
		w.stats.Dropped++
		w.log.Warn("alert: webhook queue full: dropped the oldest event", KeyEventID, old.ID, KeyRule, old.Rule,
			KeyDropped, w.stats.Dropped)
	}
	w.queue = append(w.queue, ev)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Stats returns the sender's counters.
func (w *Webhook) Stats() WebhookStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.stats
	s.Queued = len(w.queue)
	return s
}

// Run delivers queued events until ctx ends, then returns
// context.Cause(ctx). An attempt in flight is abandoned and its event
// is put back first in the queue. A second Run while one is delivering
// returns [ErrWebhookRunning].
func (w *Webhook) Run(ctx context.Context) error {
	w.mu.Lock()
	if w.running {
		w.mu.Unlock()
		return ErrWebhookRunning
	}
	w.running = true
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.running = false
		n := len(w.queue)
		w.mu.Unlock()
		if n > 0 {
			w.log.Info("alert: webhook stopped with events not sent", KeyPending, n)
		}
	}()
	for {
		ev, ok := w.next()
		if !ok {
			select {
			case <-ctx.Done():
				return context.Cause(ctx)
			case <-w.wake:
				continue
			}
		}
		if err := w.deliver(ctx, ev); err != nil {
			w.mu.Lock()
			w.queue = append([]Event{ev}, w.queue...) // not sent: first again
			w.mu.Unlock()
			return err
		}
	}
}

// next takes the oldest waiting event out of the queue.
func (w *Webhook) next() (Event, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.queue) == 0 {
		return Event{}, false
	}
	ev := w.queue[0]
	w.queue[0] = Event{}
	w.queue = w.queue[1:]
	return ev, true
}

// deliver posts one event with retries. It returns nil when the event was
// accepted or given up (both counted), and ctx's error when ctx ended.
func (w *Webhook) deliver(ctx context.Context, ev Event) error {
	body, err := ev.WebhookBody()
	if err != nil {
		w.giveUp(ev, 0, fmt.Errorf("encode body: %w", err))
		return nil
	}
	start := time.Now()
	for attempt := 1; ; attempt++ {
		retryAfter, err := w.post(ctx, ev, body)
		if err == nil {
			w.mu.Lock()
			w.stats.Sent++
			w.mu.Unlock()
			if attempt > 1 {
				w.log.Info("alert: webhook delivered after retries", KeyEventID, ev.ID, KeyAttempt, attempt)
			}
			return nil
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if errors.Is(err, ErrWebhookPermanent) {
			w.giveUp(ev, attempt, err)
			return nil
		}
		wait := w.backoff(attempt, retryAfter)
		if attempt >= w.cfg.MaxAttempts || time.Since(start)+wait > w.cfg.MaxElapsed {
			w.giveUp(ev, attempt, err)
			return nil
		}
		w.log.Warn("alert: webhook attempt failed", KeyEventID, ev.ID, KeyRule, ev.Rule, KeyAttempt, attempt,
			KeyError, err, KeyNextRetry, wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return context.Cause(ctx)
		case <-t.C:
		}
	}
}

func (w *Webhook) giveUp(ev Event, attempts int, err error) {
	w.mu.Lock()
	w.stats.Failed++
	w.mu.Unlock()
	w.log.Error("alert: webhook gave up on an event", KeyEventID, ev.ID, KeyRule, ev.Rule, KeyAttempt, attempts, KeyError, err)
}

// post makes one attempt. It returns the wait a Retry-After header asked
// for (0 if none) and an error for anything but a 2xx status.
func (w *Webhook) post(ctx context.Context, ev Event, body []byte) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, w.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrWebhookPermanent, err)
	}
	for k, vs := range w.cfg.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", webhookUserAgent)
	req.Header.Set(webhookIdempotencyHeader, ev.ID)
	req.Header.Set(webhookEventIDHeader, ev.ID)
	w.mu.Lock()
	w.stats.Attempts++
	w.mu.Unlock()
	resp, err := w.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("post: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxWebhookResponseDrained)) // reuse the connection
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return 0, nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
		return retryAfter(resp.Header.Get("Retry-After")), fmt.Errorf("status %s", resp.Status)
	case resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode >= 500:
		return 0, fmt.Errorf("status %s", resp.Status)
	}
	return 0, fmt.Errorf("%w: status %s", ErrWebhookPermanent, resp.Status)
}

// retryAfter reads a Retry-After header given in seconds (an HTTP date is
// not followed: the backoff applies).
func retryAfter(h string) time.Duration {
	n, err := strconv.Atoi(h)
	if err != nil || n < 0 {
		return 0
	}
	return time.Duration(n) * time.Second
}

// backoff returns the wait before the attempt after attempt.
func (w *Webhook) backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, w.cfg.MaxBackoff)
	}
	d := w.cfg.MinBackoff << min(attempt-1, 30)
	if d <= 0 || d > w.cfg.MaxBackoff {
		d = w.cfg.MaxBackoff
	}
	jitter := 0.8 + 0.4*rand.Float64()
	return time.Duration(float64(d) * jitter)
}
