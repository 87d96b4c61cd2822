package bus

import (
	"context"
	"fmt"
	"time"
)

// run is the publisher's goroutine. It settles sent messages in send
// order, completes them (calls done, frees their window slot) and, when a
// send fails, takes over sending until the failure is repaired.
func (p *Publisher) run() {
	defer close(p.done)
	for {
		select {
		case it := <-p.sent:
			p.settle(it)
			switch it.state {
			case stateFailed:
				p.setFailing(it)
				p.unsettled.Add(-1)
				if !p.recover([]*item{it}) {
					return
				}
			case stateAbandoned:
				p.unsettled.Add(-1)
				p.abandon([]*item{it})
				return
			default:
				p.unsettled.Add(-1)
				p.complete(it)
			}
		case <-p.wake:
			p.mu.Lock()
			failing := p.failing
			p.mu.Unlock()
			if failing && !p.recover(nil) {
				return
			}
		case <-p.stop:
			return
		case <-p.abort:
			p.abandon(nil)
			return
		}
	}
}

// setFailing stops Publish from sending after it failed.
func (p *Publisher) setFailing(it *item) {
	p.mu.Lock()
	p.failing = true
	p.mu.Unlock()
	if ok, n := p.failLog.allow(time.Now()); ok {
		p.log.Warn("publish failed; holding new messages and re-sending in order",
			KeySubject, it.msg.Subject, KeyMsgID, it.msg.Header.Get(HeaderMsgID),
			KeyError, errText(it.err), KeySuppressed, n)
	}
}

// recover repairs a failure. q holds the failed messages seen so far, in
// order. While p.failing is set, Publish only queues messages on the
// backlog; recover settles what is still in flight (all older than the
// backlog), then in rounds: completes the finished prefix, waits a backoff
// if the last round failed, re-sends the first message not acknowledged
// and waits for it, then re-sends all the others, in order, and settles
// them. When nothing is left it sends the backlog and clears p.failing
// ([Publisher.resume]). It returns false if Close gave up meanwhile:
// everything was abandoned.
func (p *Publisher) recover(q []*item) bool {
	start := time.Now()
	attempt := 0
	for {
		for p.unsettled.Load() > 0 {
			var it *item
			select {
			case it = <-p.sent:
			case <-p.abort:
				p.abandon(q)
				return false
			}
			p.settle(it)
			p.unsettled.Add(-1)
			q = append(q, it)
		}
		p.mu.Lock()
		q = append(q, p.backlog...)
		clear(p.backlog)
		p.backlog = p.backlog[:0]
		p.mu.Unlock()

		q = p.completeReady(q)
		if len(q) == 0 {
			if !p.resume() {
				continue
			}
			if attempt > 0 {
				p.log.Info("publishing resumed", KeyOutage, time.Since(start).Round(time.Millisecond), KeyAttempt, attempt)
			}
			return true
		}
		if hasState(q, stateAbandoned) {
			p.abandon(q)
			return false
		}
		if hasState(q, stateFailed) {
			wait := backoff(attempt+1, p.cfg.RetryMin, p.cfg.RetryMax)
			if ok, n := p.failLog.allow(time.Now()); ok {
				p.log.Warn("publishing still failing; retrying",
					KeyAttempt, attempt+1, KeyPending, len(q), KeyOutage, time.Since(start).Round(time.Millisecond),
					KeyNextRetry, wait.Round(time.Millisecond), KeyError, errText(firstErr(q)), KeySuppressed, n)
			}
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-q[0].ctx.Done():
				t.Stop()
				continue // complete it and whatever follows it
			case <-p.abort:
				t.Stop()
				p.abandon(q)
				return false
			}
			attempt++
		}
		// Probe with the first message alone: the rest go out only once
		// the server takes messages again. Were they pipelined while it
		// was coming back (a stream being created, a leader being
		// elected), the early ones could be refused and the later ones
		// stored.
		if probe := p.resend(q, 1); probe != nil {
			p.settle(probe)
			if probe.state != stateAcked && probe.state != stateRejected {
				continue
			}
		}
		p.resend(q, len(q))
		for _, it := range q {
			p.settle(it)
		}
	}
}

// resume ends recovery once everything sent before has completed: it
// sends the backlog as Publish would, in order, and clears p.failing, so
// that a publisher under load goes back to pipelining at once. If a send
// fails, or the connection reconnects meanwhile, it keeps the rest on the
// backlog, stays failing and returns false: recovery goes on.
func (p *Publisher) resume() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.epoch = p.nc.Stats().Reconnects // nothing is unsettled
	for i, it := range p.backlog {
		if p.nc.Stats().Reconnects != p.epoch || !p.sendLocked(it) {
			n := copy(p.backlog, p.backlog[i:])
			clear(p.backlog[n:])
			p.backlog = p.backlog[:n]
			return false
		}
	}
	clear(p.backlog)
	p.backlog = p.backlog[:0]
	p.failing = false
	return true
}

// resend sends up to limit messages of q that are not finished, in
// order, and returns the last one sent (nil if none). It stops at the
// first transient send error, or when the connection reconnected since
// the call began (the rest would go on a connection on which the earlier
// ones may have been lost); the rest wait for the next round.
func (p *Publisher) resend(q []*item, limit int) *item {
	var last *item
	epoch := p.nc.Stats().Reconnects
	for _, it := range q {
		if limit == 0 {
			break
		}
		if it.state != stateFailed && it.state != stateUnsent {
			continue
		}
		if it.ctx.Err() != nil {
			it.state, it.err = stateCancelled, context.Cause(it.ctx)
			continue
		}
		if p.nc.Stats().Reconnects != epoch {
			break
		}
		paf, err := p.js.PublishMsgAsync(it.msg, p.pubOpts...)
		if err != nil {
			p.fail(it, err)
			if it.state == stateFailed {
				break
			}
			continue
		}
		if it.sends > 0 {
			p.stRetries.Add(1)
		}
		it.paf, it.state = paf, stateSent
		it.sends++
		last = it
		limit--
	}
	return last
}

// settle waits for the outcome of a sent message: its ack, its error, its
// context's end or Close giving up. An ack that is already there wins over
// the other two.
func (p *Publisher) settle(it *item) {
	if it.state != stateSent {
		return
	}
	okCh, errCh := it.paf.Ok(), it.paf.Err()
	select {
	case ack := <-okCh:
		it.state, it.ack = stateAcked, ack
	case err := <-errCh:
		p.fail(it, err)
	case <-it.ctx.Done():
		select {
		case ack := <-okCh:
			it.state, it.ack = stateAcked, ack
		default:
			it.state, it.err = stateCancelled, context.Cause(it.ctx)
		}
	case <-p.abort:
		select {
		case ack := <-okCh:
			it.state, it.ack = stateAcked, ack
		default:
			it.state = stateAbandoned
		}
	}
}

// fail records a failed attempt: permanent errors reject the message,
// others mark it for a re-send.
func (p *Publisher) fail(it *item, err error) {
	p.stErrors.Add(1)
	it.err = err
	if permanent(err) {
		it.state = stateRejected
	} else {
		it.state = stateFailed
	}
}

// completeReady marks the messages of q whose context ended as cancelled,
// completes the finished prefix of q and returns the rest.
func (p *Publisher) completeReady(q []*item) []*item {
	for _, it := range q {
		if (it.state == stateFailed || it.state == stateUnsent) && it.ctx.Err() != nil {
			it.state, it.err = stateCancelled, context.Cause(it.ctx)
		}
	}
	n := 0
	for n < len(q) && finished(q[n].state) {
		p.complete(q[n])
		n++
	}
	m := copy(q, q[n:])
	clear(q[m:])
	return q[:m]
}

// abandon completes, in order, q, everything still in flight and the
// backlog: acknowledged messages with nil, the others with ErrAbandoned.
// Only Close's hard phase gets here, so no new message is accepted.
func (p *Publisher) abandon(q []*item) {
	for _, it := range q {
		p.abandonOne(it)
	}
	for p.unsettled.Load() > 0 {
		it := <-p.sent
		p.unsettled.Add(-1)
		p.abandonOne(it)
	}
	p.mu.Lock()
	backlog := p.backlog
	p.backlog = nil
	p.mu.Unlock()
	for _, it := range backlog {
		p.abandonOne(it)
	}
}

// abandonOne completes it, with nil if its ack is already there.
func (p *Publisher) abandonOne(it *item) {
	if it.state == stateSent {
		select {
		case ack := <-it.paf.Ok():
			it.state, it.ack = stateAcked, ack
		default:
		}
	}
	if !finished(it.state) {
		it.state = stateAbandoned
	}
	p.complete(it)
}

// complete calls the message's done with its outcome, frees its window
// slot and records progress. Only run calls it, in publish order.
func (p *Publisher) complete(it *item) {
	var err error
	switch it.state {
	case stateAcked:
		p.stAcked.Add(1)
		if it.ack.Duplicate {
			p.stDuplicates.Add(1)
		} else {
			p.checkOrder(it)
		}
	case stateRejected:
		p.stFailed.Add(1)
		err = fmt.Errorf("%w: %s %s: %w", ErrRejected, it.msg.Subject, it.msg.Header.Get(HeaderMsgID), it.err)
		if ok, n := p.rejectLog.allow(time.Now()); ok {
			p.log.Warn("message rejected by the server", KeySubject, it.msg.Subject,
				KeyMsgID, it.msg.Header.Get(HeaderMsgID), KeyError, errText(it.err), KeySuppressed, n)
		}
	case stateCancelled:
		p.stFailed.Add(1)
		err = it.err
	default:
		p.stFailed.Add(1)
		err = ErrAbandoned
	}
	if it.done != nil {
		it.done(err)
	}
	seq, size := it.seq, it.size
	*it = item{} // drop references to the caller's message and context
	p.bytes.release(size)
	<-p.slots
	p.completed.Store(seq)
	if p.flushWaiters.Load() > 0 {
		p.pmu.Lock()
		close(p.progress)
		p.progress = make(chan struct{})
		p.pmu.Unlock()
	}
}

// checkOrder counts a newly stored message whose stream sequence is below
// that of an earlier message of this publisher: the server stored it
// before an earlier one that it had lost (a stream leader change).
func (p *Publisher) checkOrder(it *item) {
	a := it.ack
	if a.Stream == p.lastStream && a.Sequence < p.lastSeq {
		p.stReordered.Add(1)
		if ok, n := p.reorderLog.allow(time.Now()); ok {
			p.log.Warn("message stored out of order after a failure", KeyStream, a.Stream,
				KeySubject, it.msg.Subject, KeyMsgID, it.msg.Header.Get(HeaderMsgID),
				"seq", a.Sequence, "after_seq", p.lastSeq, KeySuppressed, n)
		}
		return
	}
	p.lastStream, p.lastSeq = a.Stream, a.Sequence
}

// finished reports whether a message in state s is ready to complete.
func finished(s itemState) bool {
	return s == stateAcked || s == stateRejected || s == stateCancelled || s == stateAbandoned
}

// hasState reports whether any message of q is in state s.
func hasState(q []*item, s itemState) bool {
	for _, it := range q {
		if it.state == s {
			return true
		}
	}
	return false
}

// firstErr returns the error of the first failed message of q.
func firstErr(q []*item) error {
	for _, it := range q {
		if it.state == stateFailed {
			return it.err
		}
	}
	return nil
}
