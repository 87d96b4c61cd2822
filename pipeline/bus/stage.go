package bus

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// DefaultStreamPoll is how often [WaitStream] (and a [Stage]) looks again
// for a stream that does not exist yet.
const DefaultStreamPoll = time.Second

// StageConfig configures a [Stage].
type StageConfig struct {
	// JS reaches the stream and the lease bucket; required.
	JS jetstream.JetStream

	// Stream names the stream and the subject prefix (zero fields:
	// defaults).
	Stream StreamConfig

	// Role names the stage ("indexer", "exporter") in its log lines;
	// required. The lease is taken on Role+"."+Consumer: one process per
	// durable consumer is active, the others stand by.
	Role string

	// Consumer is the stage's durable consumer name; required.
	Consumer string

	// LeaseTTL: see [LeaseConfig.TTL].
	LeaseTTL time.Duration

	// CommitInterval is the period of the commit ticker [Stage.Consume]
	// runs beside the consumer; required.
	CommitInterval time.Duration

	// StreamPoll is how often a missing stream is looked for again;
	// default [DefaultStreamPoll].
	StreamPoll time.Duration

	// GapMessage is the log line of a gap (messages aged out of the
	// stream before the stage took them), logged at GapLevel with the
	// first missing and first available sequences.
	GapMessage string
	GapLevel   slog.Level

	// Logger receives the stage's events (lease lost, waiting for the
	// stream, gaps, forged messages); nil discards them.
	Logger *slog.Logger
	// LeaseLogger receives the lease's (see [LeaseConfig.Logger]);
	// default Logger.
	LeaseLogger *slog.Logger
}

// Validate reports the first invalid field as a *[ConfigError].
func (c StageConfig) Validate() error {
	switch {
	case c.JS == nil:
		return invalid("js", nil, "required")
	case c.Role == "":
		return invalid("role", c.Role, "required")
	case c.Consumer == "":
		return invalid("consumer", c.Consumer, "required")
	case c.CommitInterval <= 0:
		return invalid("commit_interval", c.CommitInterval, "must be positive")
	case c.StreamPoll < 0:
		return invalid("stream_poll", c.StreamPoll, "must not be negative")
	}
	return c.Stream.Validate()
}

// Stage is the daemon shape both consumers of the stream share (the
// indexer and the exporter): what is theirs is how they apply a batch
// and commit it, the rest is here.
//
//   - [Stage.Run] takes the lease on the consumer (one active process per
//     durable consumer, the others stand by), runs the stage's active
//     function while it holds it, releases it when that returns (a
//     stand-by takes over at once), stands by again when the lease was
//     lost, and returns when its context ends.
//   - [Stage.WaitStream] waits for the stream (the first service or
//     tailer creates it), logging once, and checks that the state the
//     stage saved belongs to it ([StreamMismatchError] otherwise).
//   - [Stage.Consume] runs the consumer with the stage's handler and its
//     commit loop on the commit ticker, and stops both together.
//   - [Stage.Matches], [Stage.MatchesRaw] and [Stage.NoteGap] count and
//     log what the handler skips: messages whose body names another host
//     or format than their subject (forged or broken; the subject is what
//     the server's permissions checked), and gaps.
//
// A Stage is safe for concurrent use; Run must not be called twice at
// the same time.
type Stage struct {
	cfg StageConfig
	log *slog.Logger

	active atomic.Bool
	forged atomic.Uint64
	gaps   atomic.Uint64
}

// NewStage checks cfg and returns a stage. It does not talk to the
// server: [Stage.Run] and [Stage.WaitStream] do.
func NewStage(cfg StageConfig) (*Stage, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Stream = cfg.Stream.WithDefaults()
	if cfg.StreamPoll == 0 {
		cfg.StreamPoll = DefaultStreamPoll
	}
	if cfg.LeaseLogger == nil {
		cfg.LeaseLogger = cfg.Logger
	}
	return &Stage{cfg: cfg, log: discard(cfg.Logger)}, nil
}

// StandByError, returned by a stage's active function through
// [StandBy], makes [Stage.Run] release the lease, run Then (when set),
// and compete for the lease again instead of returning: the active run
// ended for a reason its next run repairs (a corrupt state rebuilt,
// another writer's commit reread).
type StandByError struct {
	Err  error        // why the active run ended
	Then func() error // run once the lease is released; its error ends Run
}

// Error returns the reason's text.
func (e *StandByError) Error() string { return "stand by: " + e.Err.Error() }

// Unwrap returns the reason.
func (e *StandByError) Unwrap() error { return e.Err }

// StandBy wraps err into a *[StandByError] with then.
func StandBy(err error, then func() error) error { return &StandByError{Err: err, Then: then} }

// Run competes for the lease on the stage's consumer until ctx ends, and
// runs active each time it holds it, with a context that ends when the
// lease is lost or ctx ends. When active returns, the lease is released;
// then:
//
//   - a *[StandByError]: its Then runs and Run competes again (or
//     returns nil when ctx ended);
//   - ctx ended: Run returns active's error (nil for a clean stop);
//   - the lease was lost and active returned nil: Run logs it and stands
//     by for the lease again;
//   - otherwise Run returns active's error joined with the release's.
//
// Run returns nil when ctx ends while it stands by, and the lease's
// error when it cannot compete (an invalid role, see [LeaseConfig]).
func (s *Stage) Run(ctx context.Context, active func(ctx context.Context) error) error {
	lease, err := NewLease(s.cfg.JS, LeaseConfig{Role: s.cfg.Role + "." + s.cfg.Consumer, TTL: s.cfg.LeaseTTL, Logger: s.cfg.LeaseLogger})
	if err != nil {
		return err
	}
	for {
		held, err := lease.Acquire(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		s.active.Store(true)
		err = active(held)
		s.active.Store(false)
		rerr := lease.Release(context.WithoutCancel(ctx))
		var standBy *StandByError
		switch {
		case errors.As(err, &standBy):
			if standBy.Then != nil {
				if err := standBy.Then(); err != nil {
					return errors.Join(err, rerr)
				}
			}
			if ctx.Err() != nil {
				return nil
			}
			continue
		case ctx.Err() != nil:
			return err
		case err == nil && errors.Is(context.Cause(held), ErrLeaseLost):
			s.log.Warn(s.cfg.Role+" lease lost; standing by", KeyConsumer, s.cfg.Consumer)
			continue
		}
		return errors.Join(err, rerr)
	}
}

// Active reports whether the stage holds its lease and runs (false
// while it stands by).
func (s *Stage) Active() bool { return s.active.Load() }

// WaitStream waits until the stage's stream exists and returns its
// identity. When saved is not zero (the identity recorded with the
// stage's state) and differs, it returns the current identity with a
// *[StreamMismatchError]: the state belongs to another incarnation of
// the stream (or another stream), and must be rebuilt or refused, never
// applied to. It returns context.Cause(ctx) when ctx ends first, and
// other errors of [Identity] as they are.
func (s *Stage) WaitStream(ctx context.Context, saved StreamIdentity) (StreamIdentity, error) {
	cur, err := WaitStream(ctx, s.cfg.JS, s.cfg.Stream.Name, StreamWait{
		Poll: s.cfg.StreamPoll, Logger: s.log, Message: "waiting for the stream: the first service or tailer creates it"})
	if err != nil {
		return cur, err
	}
	if saved.IsZero() || saved.Equal(cur) {
		return cur, nil
	}
	return cur, &StreamMismatchError{Saved: saved, Current: cur}
}

// StreamWait says how [WaitStream] waits.
type StreamWait struct {
	// Poll is how often the stream is looked for again; default
	// [DefaultStreamPoll].
	Poll time.Duration
	// Logger is told once, at Warn, that the stream is awaited; nil:
	// nothing is logged.
	Logger *slog.Logger
	// Message is that line; default "waiting for the stream".
	Message string
}

// WaitStream waits until the stream named name (the default stream when
// empty) exists, and returns its identity. It returns context.Cause(ctx)
// when ctx ends first, and the errors of [Identity] other than
// jetstream.ErrStreamNotFound at once.
func WaitStream(ctx context.Context, js jetstream.JetStream, name string, w StreamWait) (StreamIdentity, error) {
	if w.Poll <= 0 {
		w.Poll = DefaultStreamPoll
	}
	if w.Message == "" {
		w.Message = "waiting for the stream"
	}
	if name == "" {
		name = DefaultStream
	}
	t := time.NewTimer(w.Poll)
	defer t.Stop()
	for logged := false; ; {
		id, err := Identity(ctx, js, name)
		if !errors.Is(err, jetstream.ErrStreamNotFound) {
			return id, err
		}
		if !logged && w.Logger != nil {
			w.Logger.Warn(w.Message, KeyStream, name)
			logged = true
		}
		t.Reset(w.Poll)
		select {
		case <-ctx.Done():
			return StreamIdentity{}, context.Cause(ctx)
		case <-t.C:
		}
	}
}

// Consume runs c with apply, and commit beside it, until ctx ends, c
// stops (apply's error wrapping [ErrStopConsuming], or a failure of its
// own), or commit returns; then it stops the other and waits for both
// and for side, which run beside them with the same context (e.g. a
// webhook sender). commit receives the ticks of the stage's commit
// interval: it commits what the last batches applied when no new batch
// comes to do it, and returns when its context ends (or earlier, to stop
// the run: a state it cannot commit to).
//
// Consume returns c.Run's error, and nil when that is ctx's end (a stop,
// a lost lease).
func (s *Stage) Consume(ctx context.Context, c *Consumer, apply Handler, commit func(ctx context.Context, tick <-chan time.Time), side ...func(ctx context.Context)) error {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	t := time.NewTicker(s.cfg.CommitInterval)
	defer t.Stop()
	var wg sync.WaitGroup
	wg.Go(func() {
		commit(runCtx, t.C)
		cancel()
	})
	for _, f := range side {
		wg.Go(func() { f(runCtx) })
	}
	err := c.Run(runCtx, apply)
	cancel()
	wg.Wait()
	if ctx.Err() != nil && errors.Is(err, context.Cause(ctx)) {
		return nil
	}
	return err
}

// Matches reports whether the body of d names the host and format of its
// subject. A message whose body names others is forged or broken (a
// tailer's identity may publish only its own host's subjects): it is
// counted ([Stage.Forged]) and logged (the first, then every 1000th),
// and the caller skips it.
func (s *Stage) Matches(d *DeliveredEntry) bool {
	if SubjectMatches(s.cfg.Stream.Prefix, d.Subject, &d.Entry) {
		return true
	}
	s.noteForged(d.Seq, d.Subject, d.Entry.Host, string(d.Entry.Format))
	return false
}

// MatchesRaw is [Stage.Matches] for a raw chunk: it travels on the raw
// subject of its host, or in a batch message on the entry subject of its
// host and format.
func (s *Stage) MatchesRaw(d *DeliveredRaw) bool {
	p := s.cfg.Stream.Prefix
	if d.Subject == RawSubject(p, d.Chunk.Host) || d.Subject == EntrySubject(p, d.Chunk.Host, d.Chunk.Format) {
		return true
	}
	s.noteForged(d.Seq, d.Subject, d.Chunk.Host, d.Chunk.Format)
	return false
}

func (s *Stage) noteForged(seq uint64, subject, host, format string) {
	if n := s.forged.Add(1); n == 1 || n%1000 == 0 {
		s.log.Warn("message skipped: its body names another host or format than its subject", KeySeq, seq,
			KeySubject, subject, "host", host, "format", format, "skipped", n)
	}
}

// NoteGap counts the messages g reports gone from the stream before the
// stage took them ([Stage.GapMessages]) and logs them with the stage's
// GapMessage; a nil g is nothing.
func (s *Stage) NoteGap(g *Gap) {
	if g == nil {
		return
	}
	s.gaps.Add(g.FirstAvailable - g.FirstMissing)
	s.log.Log(context.Background(), s.cfg.GapLevel, s.cfg.GapMessage,
		"first_missing", g.FirstMissing, "first_available", g.FirstAvailable)
}

// Forged returns the messages skipped by [Stage.Matches] and
// [Stage.MatchesRaw] since [NewStage].
func (s *Stage) Forged() uint64 { return s.forged.Load() }

// GapMessages returns the stream sequences reported gone by
// [Stage.NoteGap] since [NewStage].
func (s *Stage) GapMessages() uint64 { return s.gaps.Load() }
