package alert

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/internal/retry"
)

// Defaults of [WebhookConfig].
const (
	DefaultWebhookTimeout     = 10 * time.Second
	DefaultWebhookMinBackoff  = time.Second
	DefaultWebhookMaxBackoff  = 30 * time.Second
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
	// MinBackoff and MaxBackoff bound the wait between attempts: it
	// doubles from MinBackoff up to MaxBackoff, with ±20% jitter; a
	// Retry-After of a 429 or 503 is followed up to MaxBackoff (defaults
	// [DefaultWebhookMinBackoff], [DefaultWebhookMaxBackoff]). A failing
	// endpoint is therefore tried every MaxBackoff for as long as it fails.
	MinBackoff time.Duration
	MaxBackoff time.Duration
	// Header is added to every request (e.g. Authorization).
	Header http.Header
	// Client sends the requests (default: a new http.Client; Timeout
	// applies on top of the client's own).
	Client *http.Client
	// Logger receives failed attempts (nil: discard).
	Logger *slog.Logger
}

// Validate checks the configuration.
func (c WebhookConfig) Validate() error {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &ConfigError{Field: "url", Value: c.URL, Err: fmt.Errorf("%w: want an http or https URL", ErrInvalidConfig)}
	}
	for name, v := range map[string]time.Duration{"timeout": c.Timeout, "min_backoff": c.MinBackoff, "max_backoff": c.MaxBackoff} {
		if v < 0 {
			return &ConfigError{Field: name, Value: v, Err: ErrInvalidConfig}
		}
	}
	return nil
}

// WebhookStats counts what a [Webhook] did.
type WebhookStats struct {
	Sent     uint64 // events the endpoint accepted (2xx)
	Failed   uint64 // events refused for good (a 4xx other than 408 and 429)
	Attempts uint64 // requests made
}

// Webhook posts events to a URL in Slack's incoming-webhook shape
// ([Event.WebhookBody]), retrying with exponential backoff. Every request
// of an event carries the event id in an Idempotency-Key header (and
// X-Sessionpipe-Event-Id), so a receiver that saw an attempt the sender
// timed out on, or an event sent again after a restart, can drop the copy.
//
// A Webhook keeps no queue: [Webhook.Deliver] sends one event and returns
// once it is accepted, refused for good or its context ends, and the
// caller keeps what is not delivered yet (the indexer reads the events
// from a durable JetStream consumer and acknowledges each only once
// Deliver returned for good). Deliver is safe for concurrent use; the
// indexer calls it for one event at a time, in order.
type Webhook struct {
	cfg    WebhookConfig
	client *http.Client
	log    *slog.Logger

	mu    sync.Mutex
	stats WebhookStats
}

// NewWebhook returns a webhook sender.
func NewWebhook(cfg WebhookConfig) (*Webhook, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Timeout = cmp.Or(cfg.Timeout, DefaultWebhookTimeout)
	cfg.MinBackoff = cmp.Or(cfg.MinBackoff, DefaultWebhookMinBackoff)
	cfg.MaxBackoff = max(cmp.Or(cfg.MaxBackoff, DefaultWebhookMaxBackoff), cfg.MinBackoff)
	w := &Webhook{cfg: cfg, client: cfg.Client, log: cfg.Logger}
	if w.client == nil {
		w.client = &http.Client{}
	}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	w.log = w.log.With(KeyComponent, "alert.webhook")
	return w, nil
}

// Stats returns the sender's counters.
func (w *Webhook) Stats() WebhookStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stats
}

// Deliver posts ev, retrying every failure that may pass (a network
// error, a timeout, 408, 429, 5xx) with backoff for as long as it takes:
// a transient failure never drops an event. It returns
//
//   - nil once the endpoint accepted the event (a 2xx): do not send it
//     again;
//   - an error wrapping [ErrWebhookPermanent] when the endpoint refused it
//     for good (a 4xx other than 408 and 429) or it cannot be encoded:
//     sending it again cannot help;
//   - context.Cause(ctx) when ctx ended first (an attempt in flight is
//     abandoned): the event is not known delivered; send it again later.
//
// Failed attempts are logged at Warn with the wait before the next.
func (w *Webhook) Deliver(ctx context.Context, ev Event) error {
	body, err := ev.WebhookBody()
	if err != nil {
		w.failed()
		return fmt.Errorf("%w: encode body: %v", ErrWebhookPermanent, err)
	}
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
			w.failed()
			return err
		}
		wait := w.backoff(attempt, retryAfter)
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

func (w *Webhook) failed() {
	w.mu.Lock()
	w.stats.Failed++
	w.mu.Unlock()
}

// post makes one attempt. It returns the wait a Retry-After header asked
// for (0 if none) and an error for anything but a 2xx status.
func (w *Webhook) post(ctx context.Context, ev Event, body []byte) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, w.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrWebhookPermanent, err)
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
	return retry.Jitter(retry.Delay(attempt, w.cfg.MinBackoff, w.cfg.MaxBackoff))
}
