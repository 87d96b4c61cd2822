package bus

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// position makes the durable consumer deliver from the next sequence:
// Consumer.next, the sequence after the last batch acknowledged (or the
// start position). It creates or binds the durable consumer and resets
// it to that sequence, which drops whatever the server had delivered and
// not yet seen acknowledged, so that delivery resumes at once and in
// order, and moves the server's ack floor to the sequence before it.
//
// That is safe because the caller's state is the truth: everything
// before the next sequence was applied (by this run, or by the state the
// caller restored, whose last sequence it passed as StartSeq), and
// everything from it on is delivered again, whatever the durable
// consumer remembered. Only one process runs a durable consumer at a
// time (a [Lease]), so no one else's position is overwritten.
func (r *run) position(ctx context.Context) error {
	c := r.c
	drainStatus(r.status)
	var epoch uint64
	if c.nc != nil {
		epoch = c.nc.Stats().Reconnects
	}
	s, err := c.js.Stream(ctx, c.cfg.Stream.Name)
	if err != nil {
		return fmt.Errorf("stream %s: %w", c.cfg.Stream.Name, err)
	}
	info := s.CachedInfo()
	st := info.State

	c.mu.Lock()
	next, explicit := c.next, c.explicit
	c.mu.Unlock()
	if next == 0 {
		// Resume where the durable's acknowledgements stopped.
		next = 1
		ci, err := s.Consumer(ctx, c.cfg.Name)
		switch {
		case err == nil:
			if floor := ci.CachedInfo().AckFloor.Stream; floor > 0 {
				next, explicit = floor+1, true
			}
		case !errors.Is(err, jetstream.ErrConsumerNotFound):
			return fmt.Errorf("consumer %s: %w", c.cfg.Name, err)
		}
	}
	if next > st.LastSeq+1 {
		return fmt.Errorf("%w: start sequence %d, stream %s ends at %d", ErrStartAhead, next, c.cfg.Stream.Name, st.LastSeq)
	}
	var gap *Gap
	if next < st.FirstSeq {
		if from := r.gapFrom(next); explicit && st.FirstSeq > from {
			gap = &Gap{FirstMissing: from, FirstAvailable: st.FirstSeq}
		}
		next = st.FirstSeq
	}
	cons, err := r.bind(ctx, s, next)
	if err != nil {
		return err
	}
	r.cons, r.epoch, r.lastDSeq, r.next = cons, epoch, 0, next
	r.positioned, r.progress, r.byteLimit = true, false, info.Config.Replicas <= 1
	r.held, r.heldMeta, r.heldGap = nil, nil, nil
	if gap != nil {
		if r.gap == nil {
			r.gap = gap
		} else {
			r.gap.FirstAvailable = gap.FirstAvailable
		}
	}
	c.mu.Lock()
	c.stats.Repositions++
	if next > 1 {
		c.stats.AckedSeq = next - 1
	}
	c.mu.Unlock()
	c.log.Debug("consumer positioned", KeySeq, next)
	return nil
}

// bind creates or updates the durable consumer and resets it to deliver
// from next. A consumer whose configuration cannot be updated in place
// (another deliver or ack policy), or a server that refuses the reset,
// gets the consumer deleted and created again at next.
func (r *run) bind(ctx context.Context, s jetstream.Stream, next uint64) (jetstream.Consumer, error) {
	c := r.c
	cfg := jetstream.ConsumerConfig{
		Durable:        c.cfg.Name,
		Description:    "sessionpipe consumer",
		DeliverPolicy:  jetstream.DeliverAllPolicy,
		AckPolicy:      jetstream.AckAllPolicy,
		AckWait:        c.cfg.AckWait,
		MaxDeliver:     -1,
		FilterSubjects: c.cfg.filters(),
		ReplayPolicy:   jetstream.ReplayInstantPolicy,
		MaxAckPending:  c.cfg.MaxAckPending,
	}
	cons, err := s.CreateOrUpdateConsumer(ctx, cfg)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		c.log.Info("recreating consumer that cannot be updated", KeyError, err.Error())
		if cons, err = r.recreate(ctx, s, cfg); err != nil {
			return nil, err
		}
	}
	if _, err := s.ResetConsumerToSequence(ctx, c.cfg.Name, next); err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		c.log.Info("consumer reset refused; recreating it at the sequence", KeySeq, next, KeyError, err.Error())
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, next
		return r.recreate(ctx, s, cfg)
	}
	return cons, nil
}

// recreate deletes the durable consumer, if any, and creates it with cfg.
func (r *run) recreate(ctx context.Context, s jetstream.Stream, cfg jetstream.ConsumerConfig) (jetstream.Consumer, error) {
	if err := s.DeleteConsumer(ctx, cfg.Durable); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return nil, fmt.Errorf("delete consumer %s: %w", cfg.Durable, err)
	}
	cons, err := s.CreateConsumer(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("create consumer %s: %w", cfg.Durable, err)
	}
	return cons, nil
}

// drainStatus empties the status channel: events before positioning are
// dealt with by positioning.
func drainStatus(ch chan nats.Status) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}
