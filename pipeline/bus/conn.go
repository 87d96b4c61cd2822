package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sessionpipe/sessionpipe/pipeline/internal/retry"
)

// Connection defaults.
const (
	// DefaultURL is the server Connect dials when ConnConfig.URL is empty.
	DefaultURL = nats.DefaultURL

	// DefaultConnName is the client name servers show for sessionpipe.
	DefaultConnName = "sessionpipe"

	// DefaultReconnectWait is the first reconnect delay; it doubles per
	// failed round up to DefaultMaxReconnectWait, with ±20% jitter.
	DefaultReconnectWait = 100 * time.Millisecond

	// DefaultMaxReconnectWait caps the reconnect delay.
	DefaultMaxReconnectWait = 5 * time.Second

	// connLogInterval is the least time between two log lines about the
	// same kind of connection trouble.
	connLogInterval = 10 * time.Second
)

// ConnConfig configures [Connect]. Only URL is commonly set; the zero
// value connects to [DefaultURL] without authentication.
type ConnConfig struct {
	// URL is one server URL or a comma-separated list (a cluster's seed
	// servers). Default [DefaultURL].
	URL string

	// CredsFile is a NATS credentials file (user JWT and nkey seed).
	CredsFile string

	// TLSCert and TLSKey are the client certificate and key files, for
	// servers that verify clients; both or neither.
	TLSCert string
	TLSKey  string

	// TLSCA is the CA bundle that verifies the server; setting it requires
	// TLS.
	TLSCA string

	// Name is the client name shown by the server. Default
	// [DefaultConnName].
	Name string

	// InboxPrefix replaces "_INBOX" as the prefix of the reply subjects
	// (JetStream acknowledgements come back on them). A locked-down
	// identity that may subscribe only to its own inbox, such as a
	// tailer's (`_INBOX.tailer.<host>`), needs it. Default "_INBOX".
	InboxPrefix string

	// ReconnectWait and MaxReconnectWait bound the exponential reconnect
	// backoff. Defaults [DefaultReconnectWait] and
	// [DefaultMaxReconnectWait].
	ReconnectWait    time.Duration
	MaxReconnectWait time.Duration

	// Logger receives connection events: disconnects and failed
	// reconnects (Warn, at most one line per 10s per kind), reconnects and
	// close (Info), asynchronous errors such as permission violations
	// (Error, rate-limited). Nil discards them.
	Logger *slog.Logger
}

// Validate reports the first invalid field as a *[ConfigError].
func (c ConnConfig) Validate() error {
	switch {
	case (c.TLSCert == "") != (c.TLSKey == ""):
		return invalid("tls_cert", c.TLSCert, "tls_cert and tls_key must be set together")
	case c.InboxPrefix != "" && (!validSubject(c.InboxPrefix) || strings.HasPrefix(c.InboxPrefix, "$")):
		return invalid("inbox_prefix", c.InboxPrefix, "must be dot-separated subject tokens without wildcards")
	case c.ReconnectWait < 0:
		return invalid("reconnect_wait", c.ReconnectWait, "must not be negative")
	case c.MaxReconnectWait < 0:
		return invalid("max_reconnect_wait", c.MaxReconnectWait, "must not be negative")
	case c.ReconnectWait > 0 && c.MaxReconnectWait > 0 && c.ReconnectWait > c.MaxReconnectWait:
		return invalid("reconnect_wait", c.ReconnectWait, "must not exceed max_reconnect_wait")
	}
	return nil
}

// Connect connects to NATS and keeps the connection up for good: it
// reconnects forever with exponential backoff, and publishes made while
// disconnected fail at once rather than being buffered (the ordering
// guarantee of [Publisher] needs that).
//
// If no server is reachable, Connect keeps trying until one is or ctx
// ends; it then returns context.Cause(ctx). It fails at once on an
// invalid config or an unreadable credentials or TLS file. The caller
// owns the connection and closes it (Drain, then Close).
func Connect(ctx context.Context, cfg ConnConfig) (*nats.Conn, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	url := cfg.URL
	if url == "" {
		url = DefaultURL
	}
	var lastErr atomic.Pointer[error] // the last failed attempt, for the error if none succeeds
	opts := connOptions(cfg.Name, cfg.ReconnectWait, cfg.MaxReconnectWait, cfg.Logger, func(err error) { lastErr.Store(&err) })
	opts = append(opts, nats.RetryOnFailedConnect(true))
	if cfg.CredsFile != "" {
		opts = append(opts, nats.UserCredentials(cfg.CredsFile))
	}
	if cfg.TLSCert != "" {
		opts = append(opts, nats.ClientCert(cfg.TLSCert, cfg.TLSKey))
	}
	if cfg.TLSCA != "" {
		opts = append(opts, nats.RootCAs(cfg.TLSCA))
	}
	if cfg.InboxPrefix != "" {
		opts = append(opts, nats.CustomInboxPrefix(cfg.InboxPrefix))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", url, err)
	}
	if err := waitConnected(ctx, nc); err != nil {
		nc.Close()
		if last := lastErr.Load(); last != nil && ctx.Err() != nil {
			// Say why no server answered (refused, TLS, authorization…),
			// not only that the wait ended.
			return nil, fmt.Errorf("connect to %s: %w (last attempt: %v)", url, err, *last)
		}
		return nil, err
	}
	return nc, nil
}

// waitConnected waits until nc is connected, closed, or ctx ends.
func waitConnected(ctx context.Context, nc *nats.Conn) error {
	ch := nc.StatusChanged(nats.CONNECTED, nats.CLOSED)
	defer nc.RemoveStatusListener(ch)
	for {
		switch nc.Status() {
		case nats.CONNECTED:
			return nil
		case nats.CLOSED:
			if err := nc.LastError(); err != nil {
				return fmt.Errorf("connect: %w", err)
			}
			return errors.New("bus: connection closed while connecting")
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// connOptions returns the options every sessionpipe connection shares:
// name, infinite reconnects with jittered exponential backoff, no
// reconnect buffer, fast dead-peer detection and slog event handlers.
//
// onReconnectErr, when not nil, is told every failed connection attempt.
func connOptions(name string, minWait, maxWait time.Duration, logger *slog.Logger, onReconnectErr func(error)) []nats.Option {
	if name == "" {
		name = DefaultConnName
	}
	if minWait == 0 {
		minWait = DefaultReconnectWait
	}
	if maxWait == 0 {
		maxWait = DefaultMaxReconnectWait
	}
	log := discard(logger).With(KeyComponent, "bus.conn")
	disc := &rateLimiter{interval: connLogInterval}
	rerr := &rateLimiter{interval: connLogInterval}
	aerr := &rateLimiter{interval: connLogInterval}
	return []nats.Option{
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectBufSize(-1),
		nats.CustomReconnectDelay(func(attempts int) time.Duration {
			return backoff(attempts, minWait, maxWait)
		}),
		nats.Timeout(5 * time.Second),
		nats.PingInterval(10 * time.Second),
		nats.MaxPingsOutstanding(3),
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			if err == nil && nc.IsClosed() {
				return // our own Close or Drain: reported as closed
			}
			if ok, n := disc.allow(time.Now()); ok {
				log.Warn("nats disconnected", KeyError, errText(err), KeySuppressed, n)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("nats reconnected", KeyURL, nc.ConnectedUrlRedacted(), KeyServer, nc.ConnectedServerName())
		}),
		nats.ReconnectErrHandler(func(nc *nats.Conn, err error) {
			if onReconnectErr != nil {
				onReconnectErr(err)
			}
			if ok, n := rerr.allow(time.Now()); ok {
				log.Warn("nats reconnect failed, retrying", KeyError, errText(err), KeySuppressed, n)
			}
		}),
		nats.ClosedHandler(func(nc *nats.Conn) {
			log.Info("nats connection closed")
		}),
		nats.ErrorHandler(func(nc *nats.Conn, sub *nats.Subscription, err error) {
			if ok, n := aerr.allow(time.Now()); ok {
				subj := ""
				if sub != nil {
					subj = sub.Subject
				}
				log.Error("nats asynchronous error", KeySubject, subj, KeyError, errText(err), KeySuppressed, n)
			}
		}),
	}
}

// backoff returns the delay before attempt n (1-based): minWait doubled
// per attempt, capped at maxWait, with ±20% jitter so that a fleet of
// tailers does not reconnect in lockstep.
func backoff(n int, minWait, maxWait time.Duration) time.Duration {
	return retry.Jitter(retry.Delay(n, minWait, maxWait))
}

// errText renders a possibly nil error for a log attribute.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
