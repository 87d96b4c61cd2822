package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Publisher defaults.
const (
	// DefaultMaxInFlight is how many messages may be published and not yet
	// completed before Publish blocks.
	DefaultMaxInFlight = 4096

	// DefaultMaxInFlightBytes is how many bytes of messages (subject,
	// headers and data) may be published and not yet completed before
	// Publish blocks: it bounds the publisher's memory when messages are
	// large (raw chunks, entries with long tool results), where the count
	// alone would let gigabytes wait for their acknowledgements.
	DefaultMaxInFlightBytes = 64 << 20

	// DefaultAckTimeout is how long a message waits for its
	// acknowledgement before it counts as failed and is re-sent.
	DefaultAckTimeout = 5 * time.Second

	// DefaultRetryMin and DefaultRetryMax bound the exponential backoff
	// between re-send rounds.
	DefaultRetryMin = 100 * time.Millisecond
	DefaultRetryMax = 5 * time.Second

	// pubLogInterval is the least time between two log lines about the
	// same kind of publish trouble.
	pubLogInterval = 10 * time.Second
)

// PublisherConfig configures [NewPublisher]. The zero value means every
// default.
type PublisherConfig struct {
	// MaxInFlight bounds the messages accepted by Publish and not yet
	// completed; Publish blocks while it is reached. Default
	// [DefaultMaxInFlight].
	MaxInFlight int

	// MaxInFlightBytes bounds the size of the messages accepted and not
	// yet completed (subject, headers and data); Publish blocks while a
	// message would exceed it, unless nothing else is in flight (a
	// message larger than the bound goes alone). Default
	// [DefaultMaxInFlightBytes].
	MaxInFlightBytes int64

	// AckTimeout is how long a sent message waits for its acknowledgement
	// before it counts as failed. Default [DefaultAckTimeout].
	AckTimeout time.Duration

	// RetryMin and RetryMax bound the backoff between re-send rounds while
	// publishing fails: RetryMin doubled per failed round up to RetryMax,
	// ±20% jitter. Defaults [DefaultRetryMin] and [DefaultRetryMax].
	RetryMin time.Duration
	RetryMax time.Duration

	// Logger receives outages (Warn, rate-limited), recoveries (Info) and
	// rejected or reordered messages (Warn, rate-limited). Nil discards.
	Logger *slog.Logger
}

// Validate reports the first invalid field as a *[ConfigError].
func (c PublisherConfig) Validate() error {
	switch {
	case c.MaxInFlight < 0:
		return invalid("max_in_flight", c.MaxInFlight, "must not be negative")
	case c.MaxInFlightBytes < 0:
		return invalid("max_in_flight_bytes", c.MaxInFlightBytes, "must not be negative")
	case c.AckTimeout < 0:
		return invalid("ack_timeout", c.AckTimeout, "must not be negative")
	case c.RetryMin < 0:
		return invalid("retry_min", c.RetryMin, "must not be negative")
	case c.RetryMax < 0:
		return invalid("retry_max", c.RetryMax, "must not be negative")
	case c.RetryMin > 0 && c.RetryMax > 0 && c.RetryMin > c.RetryMax:
		return invalid("retry_min", c.RetryMin, "must not exceed retry_max")
	}
	return nil
}

// withDefaults returns c with its zero fields set to the defaults.
func (c PublisherConfig) withDefaults() PublisherConfig {
	if c.MaxInFlight == 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	if c.MaxInFlightBytes == 0 {
		c.MaxInFlightBytes = DefaultMaxInFlightBytes
	}
	if c.AckTimeout == 0 {
		c.AckTimeout = DefaultAckTimeout
	}
	if c.RetryMin == 0 {
		c.RetryMin = DefaultRetryMin
		if c.RetryMax > 0 && c.RetryMax < c.RetryMin {
			c.RetryMin = c.RetryMax
		}
	}
	if c.RetryMax == 0 {
		c.RetryMax = max(DefaultRetryMax, c.RetryMin)
	}
	return c
}

// Stats are a publisher's counters since it was created.
type Stats struct {
	Published  uint64 // messages accepted by Publish
	Acked      uint64 // completed with nil: stored or dropped as duplicates
	Duplicates uint64 // of Acked, dropped by the duplicate window
	Retries    uint64 // re-sends of a message already sent once
	Errors     uint64 // failed attempts: send errors, error acks, ack timeouts, disconnects
	Failed     uint64 // completed with an error: rejected, context ended, abandoned
	Reordered  uint64 // acks whose stream sequence is below an earlier message's
	InFlight   int    // accepted and not yet completed
	// InFlightBytes is the size of the messages accepted and not yet
	// completed.
	InFlightBytes int64
}

// Publisher publishes messages to JetStream asynchronously, with a
// bounded in-flight window, completion callbacks in publish order and
// re-sends that never drop a message. See the package documentation for
// the delivery guarantees. Its methods are safe for concurrent use; the
// order of messages is the order in which Publish calls took them.
type Publisher struct {
	js      jetstream.JetStream
	nc      *nats.Conn
	cfg     PublisherConfig
	log     *slog.Logger
	pubOpts []jetstream.PublishOpt

	slots   chan struct{} // one token per accepted, uncompleted message
	bytes   byteBudget    // the size of the accepted, uncompleted messages
	sent    chan *item    // sent messages, in send order, for run to settle
	wake    chan struct{} // cap 1: run must look at failing
	closing chan struct{} // closed when Close begins
	stop    chan struct{} // closed when Close has drained everything
	abort   chan struct{} // closed when Close gives up
	done    chan struct{} // closed when run returns

	closeOnce, stopOnce, abortOnce sync.Once

	// mu orders sends: it is held from the failing check to the push on
	// sent, so that sends, the sent queue and seq agree.
	mu       sync.Mutex
	closed   bool
	failing  bool    // recovery owns sending: Publish only queues
	backlog  []*item // accepted while failing, in order
	epoch    uint64  // connection reconnect count of the in-flight run
	accepted uint64  // seq of the last accepted message

	unsettled atomic.Int64  // pushed on sent, not yet settled by run
	completed atomic.Uint64 // seq of the last completed message

	pmu          sync.Mutex
	progress     chan struct{} // closed and replaced when completed moves
	flushWaiters atomic.Int32

	// Owned by run.
	lastStream string
	lastSeq    uint64
	failLog    rateLimiter
	rejectLog  rateLimiter
	reorderLog rateLimiter

	stPublished, stAcked, stDuplicates, stRetries atomic.Uint64
	stErrors, stFailed, stReordered               atomic.Uint64
}

// itemState is where a message is in its life.
type itemState uint8

const (
	stateUnsent    itemState = iota // accepted, not (or no longer) sent
	stateSent                       // sent, waiting for its ack
	stateFailed                     // last attempt failed; re-send it
	stateAcked                      // acknowledged: stored or duplicate
	stateRejected                   // refused for good (ErrRejected)
	stateCancelled                  // the caller's context ended
	stateAbandoned                  // Close gave up on it
)

// item is one accepted message.
type item struct {
	seq   uint64
	size  int64 // msgSize, taken from the byte budget
	msg   *nats.Msg
	done  func(error)
	ctx   context.Context
	paf   jetstream.PubAckFuture
	state itemState
	sends int
	err   error
	ack   *jetstream.PubAck
}

// NewPublisher returns a publisher that sends through js's connection. It
// makes its own JetStream context on that connection (same domain or API
// prefix), so its acks, limits and timeouts do not mix with other users of
// js. It fails with a *[ConfigError] for an invalid cfg and with
// [ErrReconnectBuffer] when the connection buffers publishes while
// reconnecting. The caller must call [Publisher.Close].
func NewPublisher(js jetstream.JetStream, cfg PublisherConfig) (*Publisher, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	nc := js.Conn()
	if nc.Opts.ReconnectBufSize != -1 && nc.Opts.AllowReconnect {
		return nil, ErrReconnectBuffer
	}
	o := js.Options()
	opts := []jetstream.JetStreamOpt{
		// Twice the window: a message whose context ended stays pending in
		// the JetStream context until its ack or timeout, after its slot
		// was freed.
		jetstream.WithPublishAsyncMaxPending(2 * cfg.MaxInFlight),
		jetstream.WithPublishAsyncTimeout(cfg.AckTimeout),
	}
	if o.DefaultTimeout > 0 {
		opts = append(opts, jetstream.WithDefaultTimeout(o.DefaultTimeout))
	}
	if o.ClientTrace != nil {
		opts = append(opts, jetstream.WithClientTrace(o.ClientTrace))
	}
	var (
		pjs jetstream.JetStream
		err error
	)
	switch {
	case o.Domain != "":
		pjs, err = jetstream.NewWithDomain(nc, o.Domain, opts...)
	case o.APIPrefix != "":
		pjs, err = jetstream.NewWithAPIPrefix(nc, o.APIPrefix, opts...)
	default:
		pjs, err = jetstream.New(nc, opts...)
	}
	if err != nil {
		return nil, fmt.Errorf("create publisher jetstream context: %w", err)
	}
	p := &Publisher{
		js:  pjs,
		nc:  nc,
		cfg: cfg,
		log: discard(cfg.Logger).With(KeyComponent, "bus.publisher"),
		// No library retries on "no responders": they would re-send one
		// message while later ones go ahead.
		pubOpts:    []jetstream.PublishOpt{jetstream.WithRetryAttempts(0)},
		slots:      make(chan struct{}, cfg.MaxInFlight),
		bytes:      byteBudget{max: cfg.MaxInFlightBytes},
		sent:       make(chan *item, cfg.MaxInFlight),
		wake:       make(chan struct{}, 1),
		closing:    make(chan struct{}),
		stop:       make(chan struct{}),
		abort:      make(chan struct{}),
		done:       make(chan struct{}),
		progress:   make(chan struct{}),
		failLog:    rateLimiter{interval: pubLogInterval},
		rejectLog:  rateLimiter{interval: pubLogInterval},
		reorderLog: rateLimiter{interval: pubLogInterval},
	}
	go p.run()
	return p, nil
}

// Publish takes msg for publishing and returns at once, unless the
// in-flight window is full: then it blocks until a message completes, ctx
// ends or Close begins. msg must have a subject bound to a stream, a
// Nats-Msg-Id header holding the stable key of its content (see
// [EntryMsg]), and no reply subject; the publisher keeps msg, including
// its Data, until done runs, and the caller must not change it meanwhile.
//
// If Publish returns nil, done is called exactly once, in publish order:
// with nil once JetStream acknowledged the message (stored, or dropped as
// a duplicate of an earlier copy); with an error wrapping [ErrRejected]
// if the server refused it for good; with context.Cause(ctx) if ctx ended
// first; with [ErrAbandoned] if Close gave up first. Every other failure
// is retried, never reported. If Publish returns an error
// (context.Cause(ctx), [ErrClosed], [ErrInvalidMessage]), the message was
// not taken and done is never called.
//
// done runs on the publisher's own goroutine: it must return quickly and
// must not call Publish, Flush or Close, which could wait for it. A nil
// done is allowed. A message whose ctx ended is reported once all earlier
// messages are, so with one context per source file (or one for the whole
// tailer) cancellation reports promptly.
func (p *Publisher) Publish(ctx context.Context, msg *nats.Msg, done func(error)) error {
	if err := checkMsg(msg); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	select {
	case p.slots <- struct{}{}:
	default:
		select {
		case p.slots <- struct{}{}:
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-p.closing:
			return ErrClosed
		}
	}
	size := msgSize(msg)
	if err := p.bytes.acquire(ctx, p.closing, size); err != nil {
		<-p.slots
		return err
	}
	it := &item{msg: msg, done: done, ctx: ctx, size: size}

	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.bytes.release(size)
		<-p.slots
		return ErrClosed
	}
	p.accepted++
	it.seq = p.accepted
	p.stPublished.Add(1)
	if p.failing {
		p.backlog = append(p.backlog, it)
		p.mu.Unlock()
		return nil
	}
	// A reconnect since the unsettled messages were sent may have lost
	// some of them: sending this one on the new connection could store it
	// ahead of them. Hold it until they settle, as after a failed send.
	epoch := p.nc.Stats().Reconnects
	if p.unsettled.Load() == 0 {
		p.epoch = epoch
	}
	if epoch != p.epoch || !p.sendLocked(it) {
		p.failing = true
		p.backlog = append(p.backlog, it)
		p.mu.Unlock()
		p.poke()
		return nil
	}
	p.mu.Unlock()
	return nil
}

// sendLocked sends it and queues it on sent for run to settle; p.mu must
// be held. A message that is refused for good, or whose context ended, is
// queued too, already finished, so that it completes in order. On a
// transient send error it returns false with it marked failed and not
// queued: the caller must put it on the backlog and set failing.
func (p *Publisher) sendLocked(it *item) bool {
	if it.ctx.Err() != nil {
		it.state, it.err = stateCancelled, context.Cause(it.ctx)
	} else if paf, err := p.js.PublishMsgAsync(it.msg, p.pubOpts...); err != nil {
		p.fail(it, err)
		if it.state == stateFailed {
			return false
		}
	} else {
		if it.sends > 0 {
			p.stRetries.Add(1)
		}
		it.paf, it.state = paf, stateSent
		it.sends++
	}
	p.unsettled.Add(1)
	p.sent <- it
	return true
}

// msgSize is what a message weighs in the byte budget: its subject,
// headers and data.
func msgSize(msg *nats.Msg) int64 {
	n := len(msg.Subject) + len(msg.Data)
	for k, vs := range msg.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4 // "k: v\r\n"
		}
	}
	return int64(n)
}

// byteBudget bounds the bytes in flight. Release wakes the waiters.
type byteBudget struct {
	max     int64
	mu      sync.Mutex
	used    int64
	waiting int
	freed   chan struct{} // closed at a release while someone waits
}

// acquire takes n bytes, waiting while they would exceed the budget and
// something else is in flight, until ctx ends (its cause) or closing is
// closed ([ErrClosed]).
func (b *byteBudget) acquire(ctx context.Context, closing <-chan struct{}, n int64) error {
	b.mu.Lock()
	for b.used > 0 && b.used+n > b.max {
		if b.freed == nil {
			b.freed = make(chan struct{})
		}
		ch := b.freed
		b.waiting++
		b.mu.Unlock()
		var err error
		select {
		case <-ch:
		case <-ctx.Done():
			err = context.Cause(ctx)
		case <-closing:
			err = ErrClosed
		}
		b.mu.Lock()
		b.waiting--
		if err != nil {
			b.mu.Unlock()
			return err
		}
	}
	b.used += n
	b.mu.Unlock()
	return nil
}

// release gives back n bytes.
func (b *byteBudget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	if b.waiting > 0 && b.freed != nil {
		close(b.freed)
		b.freed = nil
	}
	b.mu.Unlock()
}

// inUse returns the bytes in flight.
func (b *byteBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// checkMsg rejects a message Publish cannot send safely.
func checkMsg(msg *nats.Msg) error {
	switch {
	case msg == nil:
		return fmt.Errorf("%w: nil message", ErrInvalidMessage)
	case msg.Subject == "":
		return fmt.Errorf("%w: no subject", ErrInvalidMessage)
	case msg.Reply != "":
		return fmt.Errorf("%w: reply subject %q set", ErrInvalidMessage, msg.Reply)
	case msg.Header.Get(HeaderMsgID) == "":
		return fmt.Errorf("%w: no %s header on %s", ErrInvalidMessage, HeaderMsgID, msg.Subject)
	}
	return nil
}

// poke wakes run to look at the failing flag.
func (p *Publisher) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Flush waits until every message accepted before the call has completed
// (its done ran, with nil or an error), or ctx ends: then it returns
// context.Cause(ctx). While the server is unreachable it waits, since
// messages are retried, not dropped.
func (p *Publisher) Flush(ctx context.Context) error {
	p.mu.Lock()
	target := p.accepted
	p.mu.Unlock()
	return p.waitCompleted(ctx, target)
}

// waitCompleted waits until the message with seq target has completed.
func (p *Publisher) waitCompleted(ctx context.Context, target uint64) error {
	p.flushWaiters.Add(1)
	defer p.flushWaiters.Add(-1)
	for {
		p.pmu.Lock()
		ch := p.progress
		p.pmu.Unlock()
		if p.completed.Load() >= target {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-p.done:
			if p.completed.Load() >= target {
				return nil
			}
			return ErrClosed
		}
	}
}

// Close stops the publisher in two phases. Soft: Publish refuses new
// messages with [ErrClosed] and Close waits until every accepted message
// has completed, retrying through outages as usual. Hard, if ctx ends
// first: every message not yet acknowledged completes with
// [ErrAbandoned], in order, and Close returns context.Cause(ctx). Close
// returns once the publisher's goroutine has exited; calling it again
// waits for that and returns nil. It does not close the connection.
func (p *Publisher) Close(ctx context.Context) error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		close(p.closing)
		p.mu.Unlock()
	})
	p.mu.Lock()
	target := p.accepted
	p.mu.Unlock()
	err := p.waitCompleted(ctx, target)
	if err != nil && !errors.Is(err, ErrClosed) {
		p.abortOnce.Do(func() { close(p.abort) })
		<-p.done
		return err
	}
	p.stopOnce.Do(func() { close(p.stop) })
	<-p.done
	return nil
}

// Stats returns a snapshot of the publisher's counters.
func (p *Publisher) Stats() Stats {
	p.mu.Lock()
	accepted := p.accepted
	p.mu.Unlock()
	return Stats{
		Published:     p.stPublished.Load(),
		Acked:         p.stAcked.Load(),
		Duplicates:    p.stDuplicates.Load(),
		Retries:       p.stRetries.Load(),
		Errors:        p.stErrors.Load(),
		Failed:        p.stFailed.Load(),
		Reordered:     p.stReordered.Load(),
		InFlight:      int(accepted - min(p.completed.Load(), accepted)),
		InFlightBytes: p.bytes.inUse(),
	}
}

// permanent reports whether err means that re-sending the same message
// cannot succeed: the client refused it (too large, bad subject, no
// header support) or JetStream answered 400 Bad Request (message larger
// than the stream allows, invalid TTL). Everything else (no responders,
// timeouts, disconnects, 503s while a leader is elected) is transient.
func permanent(err error) bool {
	if errors.Is(err, nats.ErrMaxPayload) || errors.Is(err, nats.ErrBadSubject) ||
		errors.Is(err, nats.ErrHeadersNotSupported) {
		return true
	}
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.Code == 400
}
