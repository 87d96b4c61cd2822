package bus_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/schema"
)

const (
	waitLong = 15 * time.Second
	waitPoll = 10 * time.Millisecond
)

// publishEntries publishes entries from..to-1 synchronously and returns
// their stream sequences.
func publishEntries(tb testing.TB, js jetstream.JetStream, from, to int) []uint64 {
	tb.Helper()
	seqs := make([]uint64, 0, to-from)
	for i := from; i < to; i++ {
		// Retried while a restarted server recovers; the message id
		// makes a retry of a stored message a duplicate.
		natstest.CheckFor(tb, waitLong, waitPoll, func() error {
			ack, err := js.PublishMsg(tb.Context(), bus.EntryMsg(bus.DefaultPrefix, testEntry(i), nil))
			if err != nil {
				return err
			}
			seqs = append(seqs, ack.Sequence)
			return nil
		})
	}
	return seqs
}

// publishDead publishes a dead letter and returns its sequence.
func publishDead(tb testing.TB, js jetstream.JetStream, offset int64) uint64 {
	tb.Helper()
	ack, err := js.PublishMsg(tb.Context(), bus.DeadMsg(bus.DefaultPrefix, &bus.DeadLetter{
		Host: "host-1", Path: "/x.jsonl", Line: offset + 1, Offset: offset, Error: "invalid JSON", Head: []byte("{oops"),
	}))
	require.NoError(tb, err)
	return ack.Sequence
}

// sink records what a handler was given.
type sink struct {
	mu      sync.Mutex
	batches []batchCopy
	seen    map[uint64]int // stream sequence → times handed over
	entries []uint64       // sequences of decoded entries, in hand-over order
	fail    func(b *bus.Batch) error
}

// batchCopy is what a test keeps of a batch.
type batchCopy struct {
	first, last uint64
	attempt     int
	n           int
	gap         *bus.Gap
	undecodable []*bus.MessageError
	redelivered []bool
	pending     uint64
}

func newSink() *sink { return &sink{seen: map[uint64]int{}} }

func (s *sink) handle(ctx context.Context, b *bus.Batch) error {
	s.mu.Lock()
	bc := batchCopy{first: b.First, last: b.Last, attempt: b.Attempt, n: b.Len(), pending: b.Pending}
	if b.Gap != nil {
		g := *b.Gap
		bc.gap = &g
	}
	bc.undecodable = append(bc.undecodable, b.Undecodable...)
	for _, e := range b.Entries {
		bc.redelivered = append(bc.redelivered, e.Redelivered)
	}
	s.batches = append(s.batches, bc)
	fail := s.fail
	s.mu.Unlock()
	if fail != nil {
		if err := fail(b); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range b.Entries {
		s.seen[e.Seq]++
		s.entries = append(s.entries, e.Seq)
	}
	for _, d := range b.DeadLetters {
		s.seen[d.Seq]++
		s.entries = append(s.entries, d.Seq)
	}
	return nil
}

func (s *sink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

func (s *sink) snapshot() ([]uint64, []batchCopy) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]uint64(nil), s.entries...), append([]batchCopy(nil), s.batches...)
}

// runConsumer runs c in the background until the test ends (or stop is
// called) and returns stop, which cancels Run and returns its error.
func runConsumer(tb testing.TB, c *bus.Consumer, h bus.Handler) (stop func() error) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.WithoutCancel(tb.Context()))
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, h) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(waitLong):
				err = errors.New("Run did not return")
			}
		})
		return err
	}
	tb.Cleanup(func() { _ = stop() })
	return stop
}

func mustConsumer(tb testing.TB, js jetstream.JetStream, cfg bus.ConsumerConfig) *bus.Consumer {
	tb.Helper()
	if cfg.Name == "" {
		cfg.Name = "test"
	}
	c, err := bus.NewConsumer(js, cfg)
	require.NoError(tb, err)
	return c
}

func waitCount(tb testing.TB, s *sink, n int) {
	tb.Helper()
	natstest.CheckFor(tb, waitLong, waitPoll, func() error {
		if got := s.count(); got < n {
			return fmt.Errorf("%d of %d entries handed over", got, n)
		}
		return nil
	})
}

// ackFloor returns the durable consumer's ack floor stream sequence.
func ackFloor(tb testing.TB, js jetstream.JetStream, name string) uint64 {
	tb.Helper()
	c, err := js.Consumer(tb.Context(), bus.DefaultStream, name)
	require.NoError(tb, err)
	return c.CachedInfo().AckFloor.Stream
}

func TestConsumer_BatchesInOrderAckedAfterHandler(t *testing.T) {
	e := mustEnv(t)
	want := publishEntries(t, e.js, 0, 50)
	dead := publishDead(t, e.js, 1)
	want = append(want, publishEntries(t, e.js, 50, 120)...)

	s := newSink()
	c := mustConsumer(t, e.js, bus.ConsumerConfig{MaxBatch: 32})
	stop := runConsumer(t, c, s.handle)
	waitCount(t, s, 120)
	natstest.CheckFor(t, waitLong, waitPoll, func() error {
		if got := c.Stats().AckedSeq; got != want[len(want)-1] {
			return fmt.Errorf("acked %d", got)
		}
		return nil
	})
	require.ErrorIs(t, stop(), context.Canceled)

	got, batches := s.snapshot()
	require.Equal(t, want, got, "entries once each, in stream order, no dead letter")
	var prev uint64
	for _, b := range batches {
		require.LessOrEqual(t, b.n, 32, "batch size bound")
		require.Equal(t, 1, b.attempt)
		require.Greater(t, b.first, prev, "batches in order")
		require.LessOrEqual(t, b.first, b.last)
		prev = b.last
		require.NotContains(t, []uint64{b.first, b.last}, dead, "dead letter is not in the entries range ends")
	}
	require.Equal(t, want[len(want)-1], ackFloor(t, e.js, "test"), "server ack floor")
	st := c.Stats()
	require.Equal(t, uint64(120), st.Entries)
	require.Equal(t, uint64(0), st.Pending, "no lag at the end")
	require.Equal(t, uint64(0), st.Undecodable)
}

func TestConsumer_UndecodableCountedAndSkipped(t *testing.T) {
	e := mustEnv(t)
	ctx := t.Context()
	publishEntries(t, e.js, 0, 3)
	subj := bus.EntrySubject(bus.DefaultPrefix, "host-1", "claude-code")
	badJSON := &nats.Msg{Subject: subj, Data: []byte("{not json"), Header: nats.Header{
		bus.HeaderMsgID: []string{"bad-1"}, bus.HeaderSchema: []string{fmt.Sprint(schema.Version)}}}
	ack1, err := e.js.PublishMsg(ctx, badJSON)
	require.NoError(t, err)
	future := bus.EntryMsg(bus.DefaultPrefix, testEntry(99), nil)
	future.Header.Set(bus.HeaderSchema, "999")
	ack2, err := e.js.PublishMsg(ctx, future)
	require.NoError(t, err)
	publishEntries(t, e.js, 3, 6)

	s := newSink()
	c := mustConsumer(t, e.js, bus.ConsumerConfig{})
	runConsumer(t, c, s.handle)
	waitCount(t, s, 6)
	natstest.CheckFor(t, waitLong, waitPoll, func() error {
		if got := c.Stats().Undecodable; got != 2 {
			return fmt.Errorf("undecodable %d", got)
		}
		return nil
	})
	_, batches := s.snapshot()
	var bad []*bus.MessageError
	for _, b := range batches {
		bad = append(bad, b.undecodable...)
	}
	require.Len(t, bad, 2)
	require.Equal(t, ack1.Sequence, bad[0].Seq)
	require.Equal(t, subj, bad[0].Subject)
	require.Contains(t, bad[0].Error(), fmt.Sprintf("seq %d subject %s", ack1.Sequence, subj))
	require.Equal(t, ack2.Sequence, bad[1].Seq)
	require.ErrorIs(t, bad[1], bus.ErrSchemaVersion)
}

func TestConsumer_HandlerErrorRetriesSameRange(t *testing.T) {
	e := mustEnv(t)
	want := publishEntries(t, e.js, 0, 10)
	s := newSink()
	calls := 0
	s.fail = func(b *bus.Batch) error {
		calls++
		if calls <= 2 {
			return errors.New("database unavailable")
		}
		return nil
	}
	c := mustConsumer(t, e.js, bus.ConsumerConfig{RetryMin: time.Millisecond, RetryMax: 5 * time.Millisecond})
	runConsumer(t, c, s.handle)
	waitCount(t, s, 10)
	got, batches := s.snapshot()
	require.Equal(t, want, got, "applied once each, in order")
	require.GreaterOrEqual(t, len(batches), 3)
	require.Equal(t, batches[0].first, batches[1].first, "same range again")
	require.Equal(t, batches[0].last, batches[1].last)
	require.Equal(t, batches[0].last, batches[2].last)
	require.Equal(t, []int{1, 2, 3}, []int{batches[0].attempt, batches[1].attempt, batches[2].attempt})
	require.NotContains(t, batches[0].redelivered, true, "first attempt is not a redelivery")
	require.NotContains(t, batches[1].redelivered, false, "retries are marked redelivered")
	require.Equal(t, uint64(2), c.Stats().HandlerErrors)
}

func TestConsumer_StopConsuming(t *testing.T) {
	e := mustEnv(t)
	publishEntries(t, e.js, 0, 5)
	c := mustConsumer(t, e.js, bus.ConsumerConfig{})
	stopErr := fmt.Errorf("rebuild needed: %w", bus.ErrStopConsuming)
	err := c.Run(t.Context(), func(ctx context.Context, b *bus.Batch) error { return stopErr })
	require.ErrorIs(t, err, bus.ErrStopConsuming)
	require.Equal(t, uint64(0), ackFloor(t, e.js, "test"), "nothing acknowledged")
}

func TestConsumer_StartSeqRepositionsExistingDurable(t *testing.T) {
	e := mustEnv(t)
	seqs := publishEntries(t, e.js, 0, 100)

	// A first run consumes everything: the durable's ack floor is at 100.
	s := newSink()
	stop := runConsumer(t, mustConsumer(t, e.js, bus.ConsumerConfig{}), s.handle)
	waitCount(t, s, 100)
	require.ErrorIs(t, stop(), context.Canceled)
	natstest.CheckFor(t, waitLong, waitPoll, func() error {
		if f := ackFloor(t, e.js, "test"); f != seqs[99] {
			return fmt.Errorf("ack floor %d", f)
		}
		return nil
	})

	// The caller's state says it applied up to 40: deliver from 41.
	s2 := newSink()
	runConsumer(t, mustConsumer(t, e.js, bus.ConsumerConfig{StartSeq: seqs[40]}), s2.handle)
	waitCount(t, s2, 60)
	got, batches := s2.snapshot()
	require.Equal(t, seqs[40:], got)
	require.Nil(t, batches[0].gap)
	require.True(t, batches[0].redelivered[0] == false, "a fresh process does not know; the server count was reset")
}

func TestConsumer_ResumesAtAckFloor(t *testing.T) {
	e := mustEnv(t)
	seqs := publishEntries(t, e.js, 0, 30)
	s := newSink()
	stop := runConsumer(t, mustConsumer(t, e.js, bus.ConsumerConfig{}), s.handle)
	waitCount(t, s, 30)
	natstest.CheckFor(t, waitLong, waitPoll, func() error {
		if f := ackFloor(t, e.js, "test"); f != seqs[29] {
			return fmt.Errorf("ack floor %d", f)
		}
		return nil
	})
	require.ErrorIs(t, stop(), context.Canceled)

	more := publishEntries(t, e.js, 30, 40)
	s2 := newSink()
	runConsumer(t, mustConsumer(t, e.js, bus.ConsumerConfig{}), s2.handle)
	waitCount(t, s2, 10)
	got, _ := s2.snapshot()
	require.Equal(t, more, got, "StartSeq 0 resumes after the ack floor")
}

func TestConsumer_StartGap(t *testing.T) {
	e := mustEnv(t)
	seqs := publishEntries(t, e.js, 0, 100)
	st, err := e.js.Stream(t.Context(), bus.DefaultStream)
	require.NoError(t, err)
	require.NoError(t, st.Purge(t.Context(), jetstream.WithPurgeSequence(seqs[50])), "messages aged out")

	s := newSink()
	c := mustConsumer(t, e.js, bus.ConsumerConfig{StartSeq: seqs[10]})
	runConsumer(t, c, s.handle)
	waitCount(t, s, 50)
	got, batches := s.snapshot()
	require.Equal(t, seqs[50:], got)
	require.Equal(t, &bus.Gap{FirstMissing: seqs[10], FirstAvailable: seqs[50]}, batches[0].gap)
	for _, b := range batches[1:] {
		require.Nil(t, b.gap, "reported once")
	}
	require.ErrorIs(t, batches[0].gap, bus.ErrGap)
	// The counters move after the handler returned and the batch was
	// acknowledged: wait for the last batch's, then read them.
	natstest.CheckFor(t, waitLong, waitPoll, func() error {
		if got := c.Stats().AckedSeq; got != seqs[99] {
			return fmt.Errorf("acked %d of %d", got, seqs[99])
		}
		return nil
	})
	require.Equal(t, uint64(1), c.Stats().Gaps)
	require.Equal(t, uint64(40), c.Stats().GapMessages)
}

func TestConsumer_GapWhileBehind(t *testing.T) {
	e := mustEnv(t)
	seqs := publishEntries(t, e.js, 0, 100)
	st, err := e.js.Stream(t.Context(), bus.DefaultStream)
	require.NoError(t, err)

	s := newSink()
	release := make(chan struct{})
	first := true
	s.fail = func(b *bus.Batch) error {
		if first {
			first = false
			<-release
		}
		return nil
	}
	runConsumer(t, mustConsumer(t, e.js, bus.ConsumerConfig{MaxBatch: 5}), s.handle)
	natstest.CheckFor(t, waitLong, waitPoll, func() error {
		if _, b := s.snapshot(); len(b) == 0 {
			return errors.New("no batch yet")
		}
		return nil
	})
	require.NoError(t, st.Purge(t.Context(), jetstream.WithPurgeSequence(seqs[60])))
	close(release)
	waitCount(t, s, 45)
	got, batches := s.snapshot()
	var gap *bus.Gap
	for _, b := range batches {
		if b.gap != nil {
			require.Nil(t, gap, "one gap")
			gap = b.gap
		}
	}
	require.NotNil(t, gap, "gap reported")
	require.Equal(t, seqs[60], gap.FirstAvailable)
	// Everything before the gap was handed over, everything after it too.
	k := 0
	for ; k < len(got) && got[k] < gap.FirstMissing; k++ {
		require.Equal(t, seqs[k], got[k])
	}
	require.Equal(t, seqs[k], gap.FirstMissing, "gap starts right after the last entry handed over")
	require.Equal(t, seqs[60:], got[k:])
}

func TestConsumer_StartAhead(t *testing.T) {
	e := mustEnv(t)
	publishEntries(t, e.js, 0, 5)
	c := mustConsumer(t, e.js, bus.ConsumerConfig{StartSeq: 100})
	err := c.Run(t.Context(), newSink().handle)
	require.ErrorIs(t, err, bus.ErrStartAhead)
}

func TestConsumer_DeadLetters(t *testing.T) {
	e := mustEnv(t)
	publishEntries(t, e.js, 0, 3)
	d1 := publishDead(t, e.js, 10)
	publishEntries(t, e.js, 3, 6)
	d2 := publishDead(t, e.js, 20)

	s := newSink()
	var got []bus.DeadLetter
	var mu sync.Mutex
	c := mustConsumer(t, e.js, bus.ConsumerConfig{Name: "dead", DeadLetters: true})
	runConsumer(t, c, func(ctx context.Context, b *bus.Batch) error {
		require.Empty(t, b.Entries)
		mu.Lock()
		for _, d := range b.DeadLetters {
			got = append(got, d.Dead)
		}
		mu.Unlock()
		return s.handle(ctx, b)
	})
	waitCount(t, s, 2)
	seqs, _ := s.snapshot()
	require.Equal(t, []uint64{d1, d2}, seqs)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, int64(10), got[0].Offset)
	require.Equal(t, "invalid JSON", got[1].Error)
}

func TestConsumer_LagReported(t *testing.T) {
	e := mustEnv(t)
	publishEntries(t, e.js, 0, 20)
	s := newSink()
	release := make(chan struct{})
	s.fail = func(b *bus.Batch) error {
		<-release
		return nil
	}
	runConsumer(t, mustConsumer(t, e.js, bus.ConsumerConfig{MaxBatch: 5}), s.handle)
	natstest.CheckFor(t, waitLong, waitPoll, func() error {
		if _, b := s.snapshot(); len(b) == 0 {
			return errors.New("no batch yet")
		}
		return nil
	})
	_, batches := s.snapshot()
	require.Equal(t, uint64(20)-batches[0].last, batches[0].pending, "pending after the first batch")
	close(release)
	waitCount(t, s, 20)
}

func TestConsumer_SlowHandlerRedeliveriesDropped(t *testing.T) {
	e := mustEnv(t)
	want := publishEntries(t, e.js, 0, 5)
	s := newSink()
	first := true
	s.fail = func(b *bus.Batch) error {
		if !first {
			return nil
		}
		first = false
		// Hold the batch past AckWait until the server redelivers it.
		natstest.CheckFor(t, waitLong, waitPoll, func() error {
			ci, err := e.js.Consumer(t.Context(), bus.DefaultStream, "test")
			if err != nil {
				return err
			}
			if ci.CachedInfo().NumRedelivered == 0 {
				return errors.New("not redelivered yet")
			}
			return nil
		})
		return nil
	}
	c := mustConsumer(t, e.js, bus.ConsumerConfig{AckWait: time.Second})
	runConsumer(t, c, s.handle)
	waitCount(t, s, 5)
	publishEntries(t, e.js, 5, 8)
	waitCount(t, s, 8)
	got, _ := s.snapshot()
	require.Equal(t, append(want, want[4]+1, want[4]+2, want[4]+3), got, "nothing handed twice")
}

// A delivery this consumer never sees (here taken by a stale pull
// request on the same durable consumer, as an abandoned fetch can leave
// behind) is detected by the gap in delivery sequences: the consumer
// repositions and delivers it, instead of skipping it for good.
func TestConsumer_LostDeliveryRepositions(t *testing.T) {
	e := mustEnv(t)
	want := publishEntries(t, e.js, 0, 10)
	s := newSink()
	release := make(chan struct{})
	first := true
	s.fail = func(b *bus.Batch) error {
		if first {
			first = false
			<-release
		}
		return nil
	}
	c := mustConsumer(t, e.js, bus.ConsumerConfig{MaxBatch: 2, MaxAckPending: 100})
	runConsumer(t, c, s.handle)
	natstest.CheckFor(t, waitLong, waitPoll, func() error {
		if _, b := s.snapshot(); len(b) == 0 {
			return errors.New("no batch yet")
		}
		return nil
	})
	thief, err := e.js.Consumer(t.Context(), bus.DefaultStream, "test")
	require.NoError(t, err)
	mb, err := thief.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	require.NoError(t, err)
	var stolen []uint64
	for m := range mb.Messages() {
		meta, err := m.Metadata()
		require.NoError(t, err)
		stolen = append(stolen, meta.Sequence.Stream)
	}
	require.Equal(t, []uint64{want[2]}, stolen, "the thief took the message after the first pull")
	close(release)
	waitCount(t, s, 10)
	got, _ := s.snapshot()
	require.Equal(t, want, got, "the stolen delivery was delivered again, in order")
	require.GreaterOrEqual(t, c.Stats().Repositions, uint64(2))
}

func TestConsumer_ServerRestart(t *testing.T) {
	e := mustEnv(t)
	const n = 600
	want := publishEntries(t, e.js, 0, n/2)
	s := newSink()
	c := mustConsumer(t, e.js, bus.ConsumerConfig{MaxBatch: 50, FetchWait: 200 * time.Millisecond})
	runConsumer(t, c, s.handle)
	natstest.CheckFor(t, waitLong, waitPoll, func() error {
		if s.count() == 0 {
			return errors.New("nothing yet")
		}
		return nil
	})
	e.srv.Restart(t)
	natstest.CheckFor(t, waitLong, waitPoll, func() error {
		if !e.nc.IsConnected() {
			return errors.New("not reconnected")
		}
		return nil
	})
	want = append(want, publishEntries(t, e.js, n/2, n)...)
	waitCount(t, s, n)
	// Down for a while, then up again: still nothing lost.
	e.srv.Stop()
	natstest.CheckFor(t, waitLong, waitPoll, func() error {
		if e.nc.IsConnected() {
			return errors.New("still connected")
		}
		return nil
	})
	e.srv.Start(t)
	natstest.CheckFor(t, waitLong, waitPoll, func() error {
		if !e.nc.IsConnected() {
			return errors.New("not reconnected")
		}
		return nil
	})
	want = append(want, publishEntries(t, e.js, n, n+10)...)
	waitCount(t, s, n+10)

	got, _ := s.snapshot()
	require.Equal(t, want, got, "every entry once, in order")
	require.GreaterOrEqual(t, c.Stats().Repositions, uint64(2), "repositioned after the restarts")
}

func TestConsumerConfig_Validate(t *testing.T) {
	tests := []struct {
		name  string
		cfg   bus.ConsumerConfig
		field string
	}{
		{"NoName", bus.ConsumerConfig{}, "consumer"},
		{"DotName", bus.ConsumerConfig{Name: "a.b"}, "consumer"},
		{"NegativeBatch", bus.ConsumerConfig{Name: "x", MaxBatch: -1}, "max_batch"},
		{"AckPendingBelowBatch", bus.ConsumerConfig{Name: "x", MaxBatch: 100, MaxAckPending: 10}, "max_ack_pending"},
		{"ShortAckWait", bus.ConsumerConfig{Name: "x", AckWait: time.Millisecond}, "ack_wait"},
		{"BadStream", bus.ConsumerConfig{Name: "x", Stream: bus.StreamConfig{Name: "a b"}}, "stream"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			var ce *bus.ConfigError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, tt.field, ce.Field)
			require.ErrorIs(t, err, bus.ErrInvalidConfig)
		})
	}
	require.NoError(t, bus.ConsumerConfig{Name: "indexer"}.Validate())
}

func TestConsumer_RunAgainResumes(t *testing.T) {
	e := mustEnv(t)
	seqs := publishEntries(t, e.js, 0, 10)
	c := mustConsumer(t, e.js, bus.ConsumerConfig{StartSeq: seqs[3]})
	require.Equal(t, seqs[3], c.Next())
	s := newSink()
	stop := runConsumer(t, c, s.handle)
	waitCount(t, s, 7)
	require.Error(t, c.Run(t.Context(), s.handle), "a second Run while running")
	require.ErrorIs(t, stop(), context.Canceled)
	require.Equal(t, seqs[9]+1, c.Next())

	more := publishEntries(t, e.js, 10, 13)
	runConsumer(t, c, s.handle)
	waitCount(t, s, 10)
	got, _ := s.snapshot()
	require.Equal(t, append(seqs[3:], more...), got, "the second Run resumes after the first")
}

// Restarts while entries are being published and consumed, with pull
// requests and acknowledgements in flight: the handler still gets every
// stored entry once, in stream order.
func TestConsumer_RestartsUnderLoad(t *testing.T) {
	e := mustEnv(t)
	const n = 3000
	p := mustPublisher(t, e.js, bus.PublisherConfig{MaxInFlight: 256})
	r := newRecorder()
	published := make(chan error, 1)
	go func() { published <- publishN(t.Context(), p, r, 0, n) }()

	s := newSink()
	c := mustConsumer(t, e.js, bus.ConsumerConfig{MaxBatch: 64, FetchWait: 200 * time.Millisecond})
	runConsumer(t, c, s.handle)
	for _, at := range []int{n / 4, n / 2} {
		waitCount(t, s, at)
		e.srv.Restart(t)
	}
	require.NoError(t, <-published)
	flushCtx, cancel := context.WithTimeout(t.Context(), waitLong)
	defer cancel()
	require.NoError(t, p.Flush(flushCtx))
	waitCount(t, s, n)

	ids := streamIDs(t, e.js)
	require.Len(t, ids, n, "the stream holds every entry once")
	got, _ := s.snapshot()
	require.Len(t, got, n, "every entry handed over once")
	for i := 1; i < len(got); i++ {
		require.Greater(t, got[i], got[i-1], "stream order at %d", i)
	}
	t.Logf("consumer stats: %+v", c.Stats())
}

// Messages of subjects a consumer does not read (the original lines an
// entries consumer skips) that leave the stream while it runs, by the
// stream's limits or by the exporter's purge, are no gap for it; entries
// it never received that leave the stream still are.
func TestConsumer_NoGapForOtherSubjects(t *testing.T) {
	e := mustEnv(t)
	seqs := publishEntries(t, e.js, 0, 5)
	raw, err := bus.RawMsgs(bus.DefaultPrefix, rawChunk([]byte("l1\n")), 0)
	require.NoError(t, err)
	ack, err := e.js.PublishMsg(t.Context(), raw[0])
	require.NoError(t, err)
	require.Greater(t, ack.Sequence, seqs[4])
	st, err := e.js.Stream(t.Context(), bus.DefaultStream)
	require.NoError(t, err)

	s := newSink()
	c := mustConsumer(t, e.js, bus.ConsumerConfig{FetchWait: 50 * time.Millisecond})
	stop := runConsumer(t, c, s.handle)
	waitCount(t, s, 5)
	natstest.CheckFor(t, waitLong, waitPoll, func() error {
		if got := c.Stats().SeenSeq; got < ack.Sequence {
			return fmt.Errorf("seen up to %d, the raw chunk is %d", got, ack.Sequence)
		}
		return nil
	})
	// Everything leaves the stream (limits), the raw chunk included.
	require.NoError(t, st.Purge(t.Context()))
	more := publishEntries(t, e.js, 5, 8)
	waitCount(t, s, 8)
	got, batches := s.snapshot()
	require.Equal(t, append(seqs, more...), got)
	for _, b := range batches {
		require.Nil(t, b.gap, "the raw chunk is not this consumer's")
	}
	stop()
	require.Zero(t, c.Stats().Gaps)

	// Entries that leave before it read them are a gap (here it starts
	// again from its last entry, as the indexer does from its state: a
	// purge of the whole stream also moves the durable's floor).
	lost := publishEntries(t, e.js, 8, 12)
	require.NoError(t, st.Purge(t.Context()))
	last := publishEntries(t, e.js, 12, 13)
	c3 := mustConsumer(t, e.js, bus.ConsumerConfig{FetchWait: 50 * time.Millisecond, StartSeq: more[2] + 1})
	s3 := newSink()
	runConsumer(t, c3, s3.handle)
	waitCount(t, s3, 1)
	got, batches = s3.snapshot()
	require.Equal(t, last, got)
	require.NotNil(t, batches[0].gap)
	require.Equal(t, lost[0], batches[0].gap.FirstMissing)
}

// A consumer asked to yield pulls nothing while Yield says so, and pulls
// as soon as it lets go; a Yield that never lets go holds each wait for
// MaxYield only, so the consumer still progresses; and a stop while it
// waits ends Run at once.
func TestConsumer_YieldWaitsThenPulls(t *testing.T) {
	e := mustEnv(t)
	publishEntries(t, e.js, 0, 10)

	var yield atomic.Bool
	yield.Store(true)
	var asked atomic.Int64
	s := newSink()
	c := mustConsumer(t, e.js, bus.ConsumerConfig{MaxYield: time.Hour, Yield: func() bool {
		asked.Add(1)
		return yield.Load()
	}})
	stop := runConsumer(t, c, s.handle)
	natstest.CheckFor(t, waitLong, waitPoll, func() error {
		if n := asked.Load(); n < 3 {
			return fmt.Errorf("Yield asked %d times", n)
		}
		return nil
	})
	require.Zero(t, s.count(), "entries handed over while Yield asked to wait")
	yield.Store(false)
	waitCount(t, s, 10)
	require.ErrorIs(t, stop(), context.Canceled)

	s2 := newSink()
	c2 := mustConsumer(t, e.js, bus.ConsumerConfig{Name: "held", MaxYield: 100 * time.Millisecond, Yield: func() bool { return true }})
	stop2 := runConsumer(t, c2, s2.handle)
	waitCount(t, s2, 10) // a wait of 100 ms at a time, then a pull
	require.ErrorIs(t, stop2(), context.Canceled)

	c3 := mustConsumer(t, e.js, bus.ConsumerConfig{Name: "stopped", MaxYield: time.Hour, Yield: func() bool { return true }})
	stop3 := runConsumer(t, c3, newSink().handle)
	require.ErrorIs(t, stop3(), context.Canceled, "a stop while yielding")
}
