package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sessionpipe/sessionpipe/schema"
)

// Consumer defaults.
const (
	// DefaultMaxBatch is the most messages one batch holds and one pull
	// request asks for.
	DefaultMaxBatch = 1000

	// DefaultMaxBatchBytes is the most bytes one pull request asks for. It
	// is raised to the server's largest payload when that is larger, so
	// that a message of any size the server accepts can be delivered.
	DefaultMaxBatchBytes = 16 << 20

	// DefaultAckWait is how long the server waits for an acknowledgement
	// before it redelivers a message.
	DefaultAckWait = 30 * time.Second

	// DefaultFetchWait is how long one pull request waits for messages on
	// a quiet stream before the consumer issues the next one.
	DefaultFetchWait = 2 * time.Second

	// DefaultHandlerRetryMin and DefaultHandlerRetryMax bound the
	// exponential backoff between two calls of a handler that failed.
	DefaultHandlerRetryMin = 100 * time.Millisecond
	DefaultHandlerRetryMax = 10 * time.Second

	// ackTimeout bounds one acknowledgement round trip.
	ackTimeout = 2 * time.Second

	// positionTimeout bounds one attempt to position the consumer: a
	// server that just restarted may drop API requests until JetStream
	// has recovered, and the next attempt should not wait long for them.
	positionTimeout = 2 * time.Second

	// consumerLogInterval is the least time between two log lines about
	// the same kind of consumer trouble.
	consumerLogInterval = 10 * time.Second
)

// ConsumerConfig configures [NewConsumer]. Name is required; everything
// else has a default.
type ConsumerConfig struct {
	// Yield, when set, is asked before each pull request: while it
	// returns true the consumer waits (asking again every 50 ms), for at
	// most MaxYield before it pulls once anyway, so that a consumer
	// sharing the process's CPU with more urgent work still progresses.
	Yield func() bool
	// MaxYield bounds one wait of Yield. Default 10 s.
	MaxYield time.Duration

	// Name is the durable consumer's name, e.g. "indexer" or "exporter":
	// its position is kept on the server under this name. Two processes
	// must not run one name at the same time (hold a [Lease] for it).
	Name string

	// Stream names the stream and the subject prefix; its zero fields
	// mean the defaults ([StreamConfig.WithDefaults]). Only Name and
	// Prefix are used: the consumer never creates or changes the stream,
	// it waits for it to exist.
	Stream StreamConfig

	// DeadLetters consumes the dead-letter subjects (<prefix>.dead.>)
	// instead of the entries (<prefix>.entries.>): batches then carry
	// [Batch.DeadLetters]. Use another Name than the entries consumer's.
	DeadLetters bool

	// Raw also consumes the raw chunks (<prefix>.raw.>), in stream order
	// with the entries: batches then carry [Batch.Raw] too. The exporter
	// archives them. Not with DeadLetters.
	Raw bool

	// Lite decodes entries without what counting does not read (see
	// [EntryDecoder].Lite): the indexer's choice. The exporter, which
	// writes every field, leaves it off.
	Lite bool

	// StartSeq is the stream sequence to deliver from: the caller's own
	// state holds the last sequence it applied, L, and passes L+1. Zero
	// resumes where the durable consumer's acknowledgements stopped, or,
	// for a new consumer, at the stream's first message.
	StartSeq uint64

	// MaxBatch and MaxBatchBytes bound one pull request and so one
	// batch: with MaxAckPending they bound what a consumer that falls
	// behind holds in memory (about two pull requests' worth). Defaults
	// [DefaultMaxBatch] and [DefaultMaxBatchBytes]. MaxBatchBytes applies
	// to streams with one replica only: on a replicated stream a pull
	// request with a byte limit loses its deliveries (nats-server 2.15
	// ends it before they arrive), so there the bound is MaxBatch times
	// the server's largest message.
	MaxBatch      int
	MaxBatchBytes int

	// MaxAckPending caps the messages delivered and not yet acknowledged;
	// the server stops delivering beyond it. At least MaxBatch. Default
	// 2*MaxBatch.
	MaxAckPending int

	// AckWait is how long the server waits for an acknowledgement before
	// it redelivers a message. A handler that takes longer gets the
	// messages again after it returns, and the consumer drops those
	// copies; the ack after the handler covers them. Default
	// [DefaultAckWait].
	AckWait time.Duration

	// FetchWait is how long one pull request waits on a quiet stream; it
	// bounds how late a reconnect is noticed when no status event comes.
	// Default [DefaultFetchWait].
	FetchWait time.Duration

	// RetryMin and RetryMax bound the backoff between two calls of a
	// handler that failed. Defaults [DefaultHandlerRetryMin] and
	// [DefaultHandlerRetryMax].
	RetryMin time.Duration
	RetryMax time.Duration

	// Logger receives repositioning, gaps, undecodable messages and
	// handler failures (Warn, rate-limited) and lifecycle (Info). Nil
	// discards them.
	Logger *slog.Logger
}

// Validate reports the first invalid field as a *[ConfigError].
func (c ConsumerConfig) Validate() error {
	batch := c.MaxBatch
	if batch == 0 {
		batch = DefaultMaxBatch
	}
	switch {
	case c.Name == "" || !validStreamName(c.Name):
		return invalid("consumer", c.Name, "required, without '.', '*', '>', '/', '\\' or whitespace")
	case c.DeadLetters && c.Raw:
		return invalid("raw", c.Raw, "a dead-letter consumer cannot take raw chunks")
	case c.MaxBatch < 0:
		return invalid("max_batch", c.MaxBatch, "must not be negative")
	case c.MaxBatchBytes < 0:
		return invalid("max_batch_bytes", c.MaxBatchBytes, "must not be negative")
	case c.MaxAckPending < 0:
		return invalid("max_ack_pending", c.MaxAckPending, "must not be negative")
	case c.MaxAckPending > 0 && c.MaxAckPending < batch:
		return invalid("max_ack_pending", c.MaxAckPending, "must be at least max_batch")
	case c.AckWait < 0:
		return invalid("ack_wait", c.AckWait, "must not be negative")
	case c.AckWait > 0 && c.AckWait < time.Second:
		return invalid("ack_wait", c.AckWait, "must be at least 1s")
	case c.FetchWait < 0:
		return invalid("fetch_wait", c.FetchWait, "must not be negative")
	case c.FetchWait > 0 && c.FetchWait < 10*time.Millisecond:
		return invalid("fetch_wait", c.FetchWait, "must be at least 10ms")
	case c.RetryMin < 0 || c.RetryMax < 0:
		return invalid("retry", c.RetryMin, "must not be negative")
	}
	return c.Stream.Validate()
}

// withDefaults returns c with its zero fields set to the defaults.
func (c ConsumerConfig) withDefaults() ConsumerConfig {
	c.Stream = c.Stream.WithDefaults()
	if c.MaxBatch == 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	if c.MaxBatchBytes == 0 {
		c.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if c.MaxAckPending == 0 {
		c.MaxAckPending = 2 * c.MaxBatch
	}
	if c.AckWait == 0 {
		c.AckWait = DefaultAckWait
	}
	if c.FetchWait == 0 {
		c.FetchWait = DefaultFetchWait
	}
	if c.RetryMin == 0 {
		c.RetryMin = DefaultHandlerRetryMin
	}
	if c.RetryMax == 0 {
		c.RetryMax = DefaultHandlerRetryMax
	}
	c.RetryMax = max(c.RetryMax, c.RetryMin)
	return c
}

// filters returns the subject filters of the consumer.
func (c ConsumerConfig) filters() []string {
	switch {
	case c.DeadLetters:
		return []string{DeadFilter(c.Stream.Prefix)}
	case c.Raw:
		return []string{EntriesFilter(c.Stream.Prefix), RawFilter(c.Stream.Prefix)}
	}
	return []string{EntriesFilter(c.Stream.Prefix)}
}

// Handler applies one batch. It returns nil once the batch is applied
// (and, for the exactly-once effects the caller wants, recorded with
// b.Last): only then is the batch acknowledged. Any other error leaves
// the batch unacknowledged and the consumer calls the handler again with
// the same batch after a backoff, with [Batch.Attempt] incremented and
// every message marked redelivered; an error wrapping [ErrStopConsuming]
// instead makes [Consumer.Run] return it at once, without acknowledging.
//
// The context is Run's. The batch and everything it holds are valid only
// during the call: the consumer reuses them. Entries may be copied out.
type Handler func(ctx context.Context, b *Batch) error

// Batch is a run of consecutive messages of the consumer's subjects, in
// stream order. First and Last are the stream sequences of its first and
// last message; messages of other subjects (dead letters, for the
// entries consumer) may lie between them. Every message from First to
// Last that matches the filter is in Entries (or DeadLetters), or in
// Undecodable.
type Batch struct {
	First, Last uint64

	// Entries are the decoded entries, for an entries consumer.
	Entries []DeliveredEntry

	// DeadLetters are the decoded dead letters, for a dead-letter
	// consumer.
	DeadLetters []DeliveredDead

	// Raw are the decoded raw chunks, for a consumer with
	// [ConsumerConfig.Raw]. Their Data is valid only during the call.
	Raw []DeliveredRaw

	// Undecodable lists the messages that could not be decoded (another
	// schema version, a body that is not an entry). They are acknowledged
	// with the batch: the caller should count or dead-letter them.
	Undecodable []*MessageError

	// Gap, when not nil, reports that messages before First aged out of
	// the stream (or were purged) before this consumer read them: the
	// caller decides whether to rebuild or to accept the loss.
	Gap *Gap

	// rawBuf holds the original lines of Raw's chunks (see rawBytes),
	// rawFull the buffers it filled before in this batch, rawFree those
	// kept from earlier batches for the next ones.
	rawBuf  []byte
	rawFull [][]byte
	rawFree [][]byte

	// Attempt is 1 on the first call of the handler with this batch, and
	// counts the calls after a handler error.
	Attempt int

	// Pending is the number of messages matching the filter after Last
	// that the consumer has not yet received: the consumer's lag.
	Pending uint64
}

// Len returns the number of messages in b, undecodable ones included.
func (b *Batch) Len() int {
	return len(b.Entries) + len(b.DeadLetters) + len(b.Raw) + len(b.Undecodable)
}

// reset empties b for reuse, dropping references to the previous
// messages.
func (b *Batch) reset() {
	clear(b.Entries)
	clear(b.DeadLetters)
	clear(b.Raw)
	clear(b.Undecodable)
	if len(b.rawFull) == 0 {
		// The batch's lines fitted one buffer (a live session's few, or
		// none): the kept ones serve backfills only.
		clear(b.rawFree)
		b.rawFree = b.rawFree[:0]
	}
	for _, r := range b.rawFull {
		if cap(r) == rawBlock && len(b.rawFree) < rawKept {
			b.rawFree = append(b.rawFree, r[:0])
		}
	}
	clear(b.rawFull)
	*b = Batch{Entries: b.Entries[:0], DeadLetters: b.DeadLetters[:0], Raw: b.Raw[:0], Undecodable: b.Undecodable[:0],
		rawBuf: b.rawBuf[:0], rawFull: b.rawFull[:0], rawFree: b.rawFree}
}

// rawBlock is the least the buffer of a batch's original lines grows by;
// rawKept is how many such buffers a Batch keeps for its next batches
// (with the one in use, a pull request's worth, DefaultMaxBatchBytes),
// as long as batches fill more than one: they were allocated anew for
// each batch of a backfill (in `sessionpipe run`, 4% of the bytes
// allocated, fresh memory faulted in page by page).
const (
	rawBlock = 4 << 20
	rawKept  = 3
)

// rawBytes returns n bytes for the original lines of one raw chunk of
// the batch, from a buffer reused from batch to batch (their Data is valid
// only during the handler's call). When the buffer is full another is
// started, one kept from an earlier batch when there is one; the full
// ones are kept until the batch is done, then for the next batches.
func (b *Batch) rawBytes(n int) []byte {
	if cap(b.rawBuf)-len(b.rawBuf) < n {
		if len(b.rawBuf) > 0 {
			b.rawFull = append(b.rawFull, b.rawBuf)
		}
		if k := len(b.rawFree); k > 0 && n <= rawBlock {
			b.rawBuf = b.rawFree[k-1]
			b.rawFree[k-1] = nil
			b.rawFree = b.rawFree[:k-1]
		} else {
			b.rawBuf = make([]byte, 0, max(n, rawBlock))
		}
	}
	at := len(b.rawBuf)
	b.rawBuf = b.rawBuf[:at+n]
	return b.rawBuf[at : at+n : at+n]
}

// Delivery describes one delivered message.
type Delivery struct {
	Seq     uint64 // stream sequence
	Subject string // message subject

	// NumDelivered is the server's delivery count: more than 1 when the
	// message was delivered before (a failed or unacknowledged earlier
	// attempt). After the consumer repositions, the server counts anew.
	NumDelivered uint64

	// Redelivered is true when this message may have been handed to a
	// handler before: NumDelivered > 1, a handler retry, or a message at
	// or below the highest sequence this Consumer handed out before it
	// repositioned.
	Redelivered bool

	// Stored is when the stream stored the message (its publication,
	// by the server's clock).
	Stored time.Time
}

// DeliveredEntry is one decoded entry with its delivery. The entries of
// a batch message share its delivery, in order, Index counting them.
type DeliveredEntry struct {
	Delivery
	Index int // position of the entry in its message: 0 for a message of one entry
	Entry schema.Entry
}

// DeliveredRaw is one decoded raw chunk with its delivery.
type DeliveredRaw struct {
	Delivery
	Chunk RawChunk
}

// DeliveredDead is one decoded dead letter with its delivery.
type DeliveredDead struct {
	Delivery
	Dead DeadLetter
}

// Gap reports stream sequences the consumer should have delivered but
// could not, because they were removed from the stream (age or size
// limits, a purge) first. Some of them may have been messages of other
// subjects: the stream does not say.
type Gap struct {
	FirstMissing   uint64 // first sequence that was wanted and is gone
	FirstAvailable uint64 // first sequence available after it
}

// Error formats the gap; a *Gap is an error so that a handler can return
// it wrapped with [ErrStopConsuming].
func (g *Gap) Error() string {
	return fmt.Sprintf("bus: stream sequences %d to %d are gone from the stream", g.FirstMissing, g.FirstAvailable-1)
}

// Unwrap returns [ErrGap].
func (g *Gap) Unwrap() error { return ErrGap }

// MessageError reports a message that could not be decoded, located by
// stream sequence and subject.
type MessageError struct {
	Stream  string
	Seq     uint64
	Subject string
	Err     error // wraps ErrSchemaVersion or a JSON error
}

// Error formats the error as "stream S seq N subject X: reason".
func (e *MessageError) Error() string {
	return fmt.Sprintf("stream %s seq %d subject %s: %v", e.Stream, e.Seq, e.Subject, e.Err)
}

// Unwrap returns the decoding error.
func (e *MessageError) Unwrap() error { return e.Err }

// ConsumerStats are a consumer's counters since [NewConsumer], for
// metrics.
type ConsumerStats struct {
	Batches       uint64 // batches acknowledged
	Entries       uint64 // entries (or dead letters) handed to the handler and acknowledged
	Raw           uint64 // raw chunks handed to the handler and acknowledged
	Undecodable   uint64 // messages skipped as undecodable
	HandlerErrors uint64 // handler calls that failed
	Redelivered   uint64 // messages handed out more than once
	Dropped       uint64 // server redeliveries dropped as already handed out
	Gaps          uint64 // gaps reported
	GapMessages   uint64 // stream sequences reported missing by gaps
	Repositions   uint64 // times the consumer was reset to its position
	AckedSeq      uint64 // last stream sequence acknowledged
	Pending       uint64 // messages matching the filter not yet received (lag), as of the last batch
	// SeenSeq: every stream message up to it was handed over or is not
	// for this consumer (another subject), as the server's consumer last
	// said when it had nothing more to deliver. A stream whose first
	// sequence moves past it with nothing for the consumer in between is
	// not a gap (see Gap).
	SeenSeq uint64
}

// Consumer delivers a stream's entries (or dead letters) in batches to a
// handler, through a durable pull consumer, at least once and in stream
// order; see the package documentation, "Consuming". Create it with
// [NewConsumer] and call [Consumer.Run]. Stats is safe for concurrent
// use; Run must not be called twice at the same time.
type Consumer struct {
	js  jetstream.JetStream
	nc  *nats.Conn
	cfg ConsumerConfig
	log *slog.Logger

	rawPrefix string // <prefix>.raw.: the subjects of raw chunks

	running atomic.Bool

	// Position, owned by Run.
	next      uint64 // next stream sequence to take; 0 before the first positioning
	explicit  bool   // next comes from the caller (StartSeq) or a previous run
	handedMax uint64 // highest sequence ever handed to the handler

	warnLog *rateLimiter

	mu    sync.Mutex
	stats ConsumerStats
}

// NewConsumer checks cfg and returns a consumer on js. It does not talk
// to the server: [Consumer.Run] creates or binds the durable consumer.
func NewConsumer(js jetstream.JetStream, cfg ConsumerConfig) (*Consumer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if nc := js.Conn(); nc != nil {
		// A pull request whose byte limit is below the next message's size
		// never delivers it: the stream would stall.
		cfg.MaxBatchBytes = max(cfg.MaxBatchBytes, int(nc.MaxPayload())+64<<10)
	}
	c := &Consumer{
		js:        js,
		nc:        js.Conn(),
		cfg:       cfg,
		rawPrefix: strings.TrimSuffix(RawFilter(cfg.Stream.Prefix), ">"),
		log:       discard(cfg.Logger).With(KeyComponent, "bus.consumer", KeyConsumer, cfg.Name),
		next:      cfg.StartSeq,
		explicit:  cfg.StartSeq > 0,
		warnLog:   &rateLimiter{interval: consumerLogInterval},
	}
	return c, nil
}

// Stats returns a snapshot of the counters.
func (c *Consumer) Stats() ConsumerStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// Next returns the stream sequence the consumer delivers from next: the
// sequence after the last message it took, or the start position before
// Run. Run calls after the first resume there.
func (c *Consumer) Next() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.next
}

// Run delivers batches to h until ctx ends, the handler returns an error
// wrapping [ErrStopConsuming], or the stream's state shows that the start
// position cannot be served ([ErrStartAhead]). It returns
// context.Cause(ctx) when ctx ends, after the batch in progress (if any)
// was handed over and acknowledged or abandoned; abandoned messages are
// redelivered to the next Run.
//
// Run waits for the stream to exist and rides out disconnects and
// server restarts: it repositions the durable consumer at the next
// sequence whenever a delivery may have been lost, so nothing is skipped
// and nothing is delivered out of order.
func (c *Consumer) Run(ctx context.Context, h Handler) error {
	if !c.running.CompareAndSwap(false, true) {
		return errors.New("bus: Consumer.Run called while running")
	}
	defer c.running.Store(false)
	c.log.Info("consumer starting", KeyStream, c.cfg.Stream.Name, KeySubject, strings.Join(c.cfg.filters(), " "), KeySeq, c.next)

	var status chan nats.Status
	if c.nc != nil {
		status = c.nc.StatusChanged(nats.DISCONNECTED, nats.RECONNECTING)
		defer c.nc.RemoveStatusListener(status)
	}
	r := &run{c: c, h: h, status: status}
	return r.loop(ctx)
}

// sleepCtx waits d or until ctx ends; it reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
