package bus

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// run is the state of one [Consumer.Run].
type run struct {
	c      *Consumer
	h      Handler
	status chan nats.Status

	cons     jetstream.Consumer // nil: must (re)position before fetching
	epoch    uint64             // connection reconnect count when positioned
	lastDSeq uint64             // last consumer delivery sequence seen since positioning
	next     uint64             // next stream sequence to take
	gap      *Gap               // gap to report with the next batch
	// No stream message in (seenFrom, seen] is for this consumer (the
	// server's consumer considered them and delivered none); seenNow:
	// the server was asked since the last message taken (noteSeen).
	seenFrom, seen uint64
	seenNow        bool

	batch Batch
	last  jetstream.Msg // last message taken into the batch: its AckAll covers the batch

	positioned bool // position succeeded at least once
	progress   bool // a batch was delivered since the last positioning
	stalls     int  // positionings in a row without progress
	byteLimit  bool // pull requests may carry a byte limit (see fetch)

	held     jetstream.Msg // message taken from the fetch but kept for the next batch
	heldMeta *jetstream.MsgMetadata
	heldGap  *Gap // the gap that precedes held

	dec  EntryDecoder // keeps its scanner and intern table from batch to batch
	bdec BatchDecoder // keeps its zstd decoder and buffer likewise
}

// takeResult says what [run.check] decided about a message.
type takeResult int

const (
	takeOK   takeResult = iota // add it to the batch
	takeSkip                   // already taken: a redelivery the next ack covers
	takeCut                    // a gap precedes it: hand the batch over first
	takeLost                   // a delivery was lost: hand the batch over, then reposition
)

// loop positions the consumer and fetches until ctx ends.
func (r *run) loop(ctx context.Context) error {
	attempt := 0
	for {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if r.cons == nil || r.reconnected() {
			if r.positioned && !r.progress {
				// Positioned, and nothing came of it: do not spin while a
				// new consumer leader is elected or the server recovers.
				r.stalls++
				if !sleepCtx(ctx, backoff(r.stalls, 20*time.Millisecond, 2*time.Second)) {
					return context.Cause(ctx)
				}
			} else {
				r.stalls = 0
			}
			if !r.waitConnected(ctx) {
				return context.Cause(ctx)
			}
			pctx, cancel := context.WithTimeout(ctx, positionTimeout)
			err := r.position(pctx)
			cancel()
			if err != nil {
				if ctx.Err() != nil {
					return context.Cause(ctx)
				}
				if errors.Is(err, ErrStartAhead) {
					return err
				}
				attempt++
				wait := backoff(attempt, DefaultReconnectWait, DefaultMaxReconnectWait)
				if ok, n := r.c.warnLog.allow(time.Now()); ok {
					r.c.log.Warn("consumer cannot position; retrying", KeyAttempt, attempt,
						KeyNextRetry, wait.Round(time.Millisecond), KeyError, errText(err), KeySuppressed, n)
				}
				if !sleepCtx(ctx, wait) {
					return context.Cause(ctx)
				}
				continue
			}
			attempt = 0
		}
		if !r.yield(ctx) {
			return context.Cause(ctx)
		}
		if err := r.fetch(ctx); err != nil {
			return err
		}
	}
}

// yieldPoll is how often ConsumerConfig.Yield is asked again while the
// consumer waits.
const yieldPoll = 50 * time.Millisecond

// DefaultMaxYield is ConsumerConfig.MaxYield's default.
const DefaultMaxYield = 10 * time.Second

// yield waits while ConsumerConfig.Yield asks to, for at most MaxYield;
// it reports false when ctx ended.
func (r *run) yield(ctx context.Context) bool {
	y := r.c.cfg.Yield
	if y == nil {
		return true
	}
	limit := cmp.Or(r.c.cfg.MaxYield, DefaultMaxYield)
	for waited := time.Duration(0); waited < limit && y(); waited += yieldPoll {
		if !sleepCtx(ctx, yieldPoll) {
			return false
		}
	}
	return true
}

// waitConnected waits until the connection is up (a request sent while
// it reconnects would only time out) or ctx ends; it reports whether the
// connection is up.
func (r *run) waitConnected(ctx context.Context) bool {
	nc := r.c.nc
	if nc == nil || nc.IsConnected() {
		return true
	}
	ch := nc.StatusChanged(nats.CONNECTED, nats.CLOSED)
	defer nc.RemoveStatusListener(ch)
	for !nc.IsConnected() && !nc.IsClosed() {
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// reconnected reports whether the connection reconnected since the
// consumer was positioned: deliveries may have been lost in between.
func (r *run) reconnected() bool {
	return r.c.nc != nil && r.c.nc.Stats().Reconnects != r.epoch
}

// fetch runs one pull request: it hands what arrives to the handler in
// batches and acknowledges them. It returns nil to go on (the request
// ended, or r.cons is nil and the consumer must reposition), or the
// error that ends Run.
func (r *run) fetch(ctx context.Context) error {
	c := r.c
	fctx, cancel := context.WithTimeout(ctx, c.cfg.FetchWait)
	defer cancel()
	opts := []jetstream.FetchOpt{jetstream.FetchContext(fctx)}
	if r.byteLimit {
		// Not on a replicated consumer: nats-server 2.15 then sends the
		// "409 Batch Completed" that ends a pull request whose count is
		// reached ahead of the deliveries still waiting for replication,
		// so the client ends the request before they arrive, every time.
		opts = append(opts, jetstream.FetchMaxBytes(c.cfg.MaxBatchBytes))
	}
	mb, err := r.cons.Fetch(c.cfg.MaxBatch, opts...)
	if err != nil {
		c.log.Debug("pull request failed; repositioning", KeyError, err.Error())
		r.cons = nil
		return nil
	}
	msgs := mb.Messages()
	defer func() {
		cancel()
		for range msgs { // the fetch goroutine closes it once it sees cancel
		}
	}()
	for {
		r.batch.reset()
		var m jetstream.Msg
		var meta *jetstream.MsgMetadata
		if r.held != nil {
			m, meta, r.gap = r.held, r.heldMeta, r.heldGap
			r.held, r.heldMeta, r.heldGap = nil, nil, nil
		} else {
			var ok bool
			select {
			case m, ok = <-msgs:
			case <-r.status:
				cancel() // disconnected: deliveries may be lost from here on
				r.cons = nil
				continue
			case <-ctx.Done():
				return context.Cause(ctx)
			}
			if !ok {
				if err := mb.Error(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
					c.log.Debug("pull request ended with an error; repositioning", KeyError, err.Error())
					r.cons = nil // cancelled or failed: deliveries may be lost
					return nil
				}
				r.noteSeen(ctx)
				return nil
			}
			var res takeResult
			meta, res = r.check(ctx, m)
			switch res {
			case takeSkip:
				continue
			case takeLost:
				return nil
			}
		}
		r.add(m, meta)
		res := r.drain(ctx, msgs)
		if err := r.deliver(ctx); err != nil {
			return err
		}
		if res == takeLost || r.cons == nil {
			return nil
		}
	}
}

// noteSeen asks, once per idle spell, what the stream holds that this
// consumer was not given: with nothing pending for it and every delivery
// received, the messages up to the stream's last one are not for this
// consumer (other subjects: the original lines an entries consumer does
// not read, dead letters), so a stream whose first sequence later moves
// past them (its limits removing old messages, the exporter purging
// archived lines) has lost nothing of this consumer's. The stream's last
// sequence is read first, so that whatever it counts existed when the
// consumer said it had nothing pending. (A consumer that starts again
// cannot tell: the messages gone while it was stopped may have been its
// own, and are reported as a gap.)
func (r *run) noteSeen(ctx context.Context) {
	if r.seenNow || r.cons == nil || r.held != nil {
		return
	}
	s, err := r.c.js.Stream(ctx, r.c.cfg.Stream.Name)
	if err != nil {
		return // asked again at the next idle spell
	}
	last := s.CachedInfo().State.LastSeq
	info, err := r.cons.Info(ctx)
	if err != nil {
		return
	}
	r.seenNow = true
	if info.NumPending == 0 && info.NumAckPending == 0 && info.Delivered.Consumer == r.lastDSeq {
		r.noteConsidered(r.next-1, last)
	}
}

// noteConsidered records that no stream message in (from, to] is for
// this consumer.
func (r *run) noteConsidered(from, to uint64) {
	if to <= from {
		return
	}
	if r.seen > 0 && from <= r.seen && from >= r.seenFrom {
		from = r.seenFrom // it continues the range known
	}
	r.seenFrom, r.seen = from, to
	r.c.count(func(s *ConsumerStats) { s.SeenSeq = to })
}

// gapFrom returns the first stream sequence from next on that may have
// held a message for this consumer: past the range noteConsidered knows
// to hold none, when next falls in it.
func (r *run) gapFrom(next uint64) uint64 {
	if next > r.seenFrom && next <= r.seen+1 {
		return r.seen + 1
	}
	return next
}

// drain adds to the batch the messages already received, without
// waiting, up to MaxBatch. It stops early at a gap (the message is held
// for the next batch) or a lost delivery (r.cons is nil).
func (r *run) drain(ctx context.Context, msgs <-chan jetstream.Msg) takeResult {
	for r.batch.Len() < r.c.cfg.MaxBatch {
		var m jetstream.Msg
		var ok bool
		select {
		case m, ok = <-msgs:
		default:
			return takeOK
		}
		if !ok {
			return takeOK
		}
		meta, res := r.check(ctx, m)
		switch res {
		case takeSkip:
			continue
		case takeCut:
			r.held, r.heldMeta = m, meta
			return takeCut
		case takeLost:
			return takeLost
		}
		r.add(m, meta)
	}
	return takeOK
}

// check decides what to do with a delivered message. A consumer delivery
// sequence that does not follow the previous one means a delivery was
// lost (a disconnect, an abandoned pull request): the consumer must
// reposition, or it would skip that message. A stream sequence below the
// next one is a redelivery of a message already taken. One above it is
// normal when messages of other subjects lie between; if the stream's
// first sequence has moved past the next one meanwhile, a gap is
// recorded (and the batch cut when it is not empty).
func (r *run) check(ctx context.Context, m jetstream.Msg) (*jetstream.MsgMetadata, takeResult) {
	c := r.c
	meta, err := m.Metadata()
	if err != nil || meta.Sequence.Consumer != r.lastDSeq+1 {
		c.log.Debug("delivery lost; repositioning", KeySeq, r.next, "delivery_seq", r.lastDSeq+1)
		r.cons = nil
		return nil, takeLost
	}
	r.lastDSeq = meta.Sequence.Consumer
	seq := meta.Sequence.Stream
	if seq < r.next {
		c.count(func(s *ConsumerStats) { s.Dropped++ })
		return meta, takeSkip
	}
	if seq > r.next {
		s, err := c.js.Stream(ctx, c.cfg.Stream.Name)
		if err != nil {
			// Cannot tell: reposition, which checks the stream again.
			r.cons = nil
			return nil, takeLost
		}
		// Nothing of this consumer's was in the range noteSeen knows.
		if from := r.gapFrom(r.next); s.CachedInfo().State.FirstSeq > from {
			first := s.CachedInfo().State.FirstSeq
			g := &Gap{FirstMissing: from, FirstAvailable: min(first, seq)}
			if r.batch.Len() > 0 {
				r.heldGap = g
				return meta, takeCut
			}
			if r.gap == nil {
				r.gap = g
			} else {
				r.gap.FirstAvailable = g.FirstAvailable
			}
		}
	}
	return meta, takeOK
}

// add decodes m into the batch.
func (r *run) add(m jetstream.Msg, meta *jetstream.MsgMetadata) {
	c, b := r.c, &r.batch
	r.seenNow = false
	seq := meta.Sequence.Stream
	if b.Len() == 0 {
		b.First, b.Gap = seq, r.gap
	}
	b.Last, b.Pending = seq, meta.NumPending
	r.last, r.next = m, seq+1
	d := Delivery{
		Seq:          seq,
		Subject:      m.Subject(),
		NumDelivered: meta.NumDelivered,
		Redelivered:  meta.NumDelivered > 1 || seq <= c.handedMax,
		Stored:       meta.Timestamp,
	}
	var err error
	if c.cfg.DeadLetters {
		var dl DeadLetter
		if err = checkSchema(m.Headers()); err == nil {
			dl, err = DecodeDeadLetter(m.Data())
		}
		if err == nil {
			b.DeadLetters = append(b.DeadLetters, DeliveredDead{Delivery: d, Dead: dl})
		}
	} else if c.cfg.Raw && strings.HasPrefix(d.Subject, c.rawPrefix) {
		var rc RawChunk
		if rc, err = decodeRaw(m.Headers(), m.Data(), b.rawBytes); err == nil {
			b.Raw = append(b.Raw, DeliveredRaw{Delivery: d, Chunk: rc})
		}
	} else if IsBatch(m.Headers()) {
		err = r.addBatch(m.Headers(), m.Data(), d)
	} else {
		n := len(b.Entries)
		if n < cap(b.Entries) {
			b.Entries = b.Entries[:n+1]
		} else {
			b.Entries = append(b.Entries, DeliveredEntry{})
		}
		b.Entries[n].Delivery, b.Entries[n].Index = d, 0
		if err = checkSchema(m.Headers()); err == nil {
			r.dec.Lite = c.cfg.Lite
			err = r.dec.Decode(m.Data(), &b.Entries[n].Entry)
		}
		if err != nil {
			b.Entries = b.Entries[:n]
		}
	}
	if err != nil {
		r.undecodable(d, err)
	}
}

// undecodable lists a message (or one entry of a batch message) that
// could not be decoded in the batch, and logs it (rate-limited).
func (r *run) undecodable(d Delivery, err error) {
	c, b := r.c, &r.batch
	me := &MessageError{Stream: c.cfg.Stream.Name, Seq: d.Seq, Subject: d.Subject, Err: err}
	b.Undecodable = append(b.Undecodable, me)
	if ok, n := c.warnLog.allow(time.Now()); ok {
		c.log.Warn("undecodable message skipped", KeySeq, d.Seq, KeySubject, d.Subject, KeyError, err.Error(), KeySuppressed, n)
	}
}

// addBatch decodes the entries of batch message (h, data) into the
// batch, each with the message's delivery, and its raw chunk for a
// consumer of raw chunks. A message that fails adds nothing: its entries
// are taken back and the error lists it as undecodable.
func (r *run) addBatch(h nats.Header, data []byte, d Delivery) error {
	c, b := r.c, &r.batch
	n0, u0 := len(b.Entries), len(b.Undecodable)
	r.dec.Lite = c.cfg.Lite
	index := 0
	err := r.bdec.Entries(h, data, func(entry []byte) error {
		n := len(b.Entries)
		if n < cap(b.Entries) {
			b.Entries = b.Entries[:n+1]
		} else {
			b.Entries = append(b.Entries, DeliveredEntry{})
		}
		b.Entries[n].Delivery, b.Entries[n].Index = d, index
		index++
		if err := r.dec.Decode(entry, &b.Entries[n].Entry); err != nil {
			// One entry that does not decode (a newer producer's field
			// of another type) is listed alone; the batch's others go on.
			b.Entries = b.Entries[:n]
			r.undecodable(d, fmt.Errorf("entry %d of the batch: %w", index-1, err))
		}
		return nil
	})
	var rc RawChunk
	raw := false
	if err == nil && c.cfg.Raw {
		rc, raw, err = r.bdec.rawInto(h, data, b.rawBytes)
	}
	if err != nil {
		clear(b.Entries[n0:])
		b.Entries = b.Entries[:n0]
		clear(b.Undecodable[u0:])
		b.Undecodable = b.Undecodable[:u0]
		return err
	}
	if raw {
		b.Raw = append(b.Raw, DeliveredRaw{Delivery: d, Chunk: rc})
	}
	return nil
}

// checkSchema checks the Sessionpipe-Schema header of a message that is
// not a batch: a dead letter, a raw chunk, or one entry.
func checkSchema(h nats.Header) error {
	if v := h.Get(HeaderSchema); v != strconv.Itoa(SingleVersion) {
		return fmt.Errorf("%w: header %s=%q, want %d (one entry) or %d with %s: %s (a batch); a newer sessionpipe wrote it?",
			ErrSchemaVersion, HeaderSchema, v, SingleVersion, BatchVersion, HeaderEncoding, batchEncoding)
	}
	return nil
}

// deliver hands the batch to the handler until it accepts it, then
// acknowledges it. It returns the error that ends Run: the context's
// cause, or the handler's error wrapping ErrStopConsuming.
func (r *run) deliver(ctx context.Context) error {
	c, b := r.c, &r.batch
	if b.Len() == 0 {
		return nil
	}
	for attempt := 1; ; attempt++ {
		b.Attempt = attempt
		err := r.h(ctx, b)
		if err == nil {
			break
		}
		if errors.Is(err, ErrStopConsuming) {
			return err
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		c.count(func(s *ConsumerStats) { s.HandlerErrors++ })
		wait := backoff(attempt, c.cfg.RetryMin, c.cfg.RetryMax)
		if ok, n := c.warnLog.allow(time.Now()); ok {
			c.log.Warn("handler failed; retrying the same batch", "first_seq", b.First, "last_seq", b.Last,
				KeyAttempt, attempt, KeyNextRetry, wait.Round(time.Millisecond), KeyError, err.Error(), KeySuppressed, n)
		}
		markRedelivered(b)
		if !sleepCtx(ctx, wait) {
			return context.Cause(ctx)
		}
	}
	if b.Gap != nil {
		c.log.Warn("messages aged out of the stream before they were consumed",
			"first_missing", b.Gap.FirstMissing, "first_available", b.Gap.FirstAvailable)
	}
	redelivered := countRedelivered(b)
	actx, cancel := context.WithTimeout(ctx, ackTimeout)
	ackErr := r.last.DoubleAck(actx)
	cancel()
	r.progress = true
	c.mu.Lock()
	c.next = b.Last + 1
	c.explicit = true
	c.handedMax = max(c.handedMax, b.Last)
	s := &c.stats
	s.Batches++
	s.Entries += uint64(len(b.Entries) + len(b.DeadLetters))
	s.Raw += uint64(len(b.Raw))
	s.Undecodable += uint64(len(b.Undecodable))
	s.Redelivered += uint64(redelivered)
	s.Pending = b.Pending
	if b.Gap != nil {
		s.Gaps++
		s.GapMessages += b.Gap.FirstAvailable - b.Gap.FirstMissing
	}
	if ackErr == nil {
		s.AckedSeq = b.Last
	}
	c.mu.Unlock()
	r.gap, r.last = nil, nil
	if ackErr != nil {
		// Repositioning at the next sequence moves the server's ack floor
		// to b.Last: it acknowledges the batch.
		c.log.Debug("ack failed; repositioning", KeySeq, b.Last, KeyError, ackErr.Error())
		r.cons = nil
	}
	return nil
}

// markRedelivered marks every message of b as redelivered, before the
// handler sees b again.
func markRedelivered(b *Batch) {
	for i := range b.Entries {
		b.Entries[i].Redelivered = true
	}
	for i := range b.Raw {
		b.Raw[i].Redelivered = true
	}
	for i := range b.DeadLetters {
		b.DeadLetters[i].Redelivered = true
	}
}

// countRedelivered counts the messages of b marked redelivered.
func countRedelivered(b *Batch) int {
	n := 0
	for i := range b.Entries {
		if b.Entries[i].Redelivered {
			n++
		}
	}
	for i := range b.DeadLetters {
		if b.DeadLetters[i].Redelivered {
			n++
		}
	}
	for i := range b.Raw {
		if b.Raw[i].Redelivered {
			n++
		}
	}
	return n
}

// count updates the stats under the lock.
func (c *Consumer) count(f func(*ConsumerStats)) {
	c.mu.Lock()
	f(&c.stats)
	c.mu.Unlock()
}
