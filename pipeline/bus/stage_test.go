package bus_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/logtest"
	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
)

// mustStage returns a stage of role "test", consumer "c", on its own
// connection to srv, logging into the returned buffer.
func mustStage(tb testing.TB, srv *natstest.Server, ttl time.Duration) (*bus.Stage, jetstream.JetStream, *logtest.Buffer) {
	tb.Helper()
	js := natstest.JetStream(tb, natstest.Connect(tb, srv.URL()))
	logs := &logtest.Buffer{}
	s, err := bus.NewStage(bus.StageConfig{
		JS: js, Role: "test", Consumer: "c", LeaseTTL: ttl, CommitInterval: 20 * time.Millisecond,
		StreamPoll: 20 * time.Millisecond, GapMessage: "gap", GapLevel: slog.LevelError,
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
	})
	require.NoError(tb, err)
	return s, js, logs
}

// stageRun is a Run in the background: done is closed when it returned
// err.
type stageRun struct {
	done chan struct{}
	err  error
}

// returned reports whether Run returned.
func (r *stageRun) returned() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// wait waits for Run to return and returns its error.
func (r *stageRun) wait(tb testing.TB) error {
	tb.Helper()
	select {
	case <-r.done:
		return r.err
	case <-time.After(waitLong):
		require.FailNow(tb, "Run did not return")
		return nil
	}
}

// runStage runs s.Run in the background until the test ends.
func runStage(tb testing.TB, s *bus.Stage, active func(ctx context.Context) error) (context.CancelFunc, *stageRun) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.WithoutCancel(tb.Context()))
	r := &stageRun{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.err = s.Run(ctx, active)
	}()
	tb.Cleanup(func() {
		cancel()
		<-r.done
	})
	return cancel, r
}

func waitTrue(tb testing.TB, what string, f func() bool) {
	tb.Helper()
	natstest.CheckFor(tb, waitLong, waitPoll, func() error {
		if !f() {
			return errors.New(what)
		}
		return nil
	})
}

// A lost lease (taken over) ends the active run; the stage stands by
// instead of returning, and runs again once it holds the lease again.
func TestStage_LeaseLostStandsBy(t *testing.T) {
	srv := natstest.RunServer(t)
	s, js, logs := mustStage(t, srv, 3*time.Second)
	var runs atomic.Int32
	var lostCause atomic.Pointer[error]
	_, done := runStage(t, s, func(held context.Context) error {
		runs.Add(1)
		<-held.Done()
		cause := context.Cause(held)
		lostCause.Store(&cause)
		return nil
	})
	waitTrue(t, "stage not active", func() bool { return s.Active() && runs.Load() == 1 })

	// An operator (or a stand-by that believed it expired) overwrites the
	// lease: the holder's next renewal finds another revision.
	kv, err := js.KeyValue(t.Context(), bus.DefaultLeaseBucket)
	require.NoError(t, err)
	_, err = kv.Put(t.Context(), "test.c", []byte(`{"holder":"someone-else"}`))
	require.NoError(t, err)
	waitTrue(t, "lease not lost", func() bool { return lostCause.Load() != nil && !s.Active() })
	require.ErrorIs(t, *lostCause.Load(), bus.ErrLeaseLost)
	waitTrue(t, "loss not logged", func() bool { return strings.Contains(logs.String(), "test lease lost; standing by") })
	require.False(t, done.returned(), "Run returned on a lost lease")

	// The other holder lets go: the stage takes the lease again.
	require.NoError(t, kv.Delete(t.Context(), "test.c"))
	waitTrue(t, "stage not active again", func() bool { return s.Active() && runs.Load() == 2 })
}

// A stage whose run fails, or that stops, releases the lease: the
// stand-by takes over at once, long before the lease's TTL.
func TestStage_HandsOver(t *testing.T) {
	srv := natstest.RunServer(t)
	const ttl = time.Minute // a take-over by expiry would miss every ceiling below
	a, _, _ := mustStage(t, srv, ttl)
	b, js, _ := mustStage(t, srv, ttl)
	c, _, _ := mustStage(t, srv, ttl)
	failA := make(chan struct{})
	errA := errors.New("disk gone")
	_, doneA := runStage(t, a, func(held context.Context) error {
		select {
		case <-held.Done():
			return nil
		case <-failA:
			return errA
		}
	})
	waitTrue(t, "a not active", a.Active)
	block := func(held context.Context) error { <-held.Done(); return nil }
	stopB, doneB := runStage(t, b, block)
	h, err := bus.LeaseHolder(t.Context(), js, "", "test.c")
	require.NoError(t, err)
	require.NotEmpty(t, h)
	require.False(t, b.Active(), "b stands by while a holds the lease")

	// a's run fails: Run returns its error, and b takes over at once.
	start := time.Now()
	close(failA)
	require.ErrorIs(t, doneA.wait(t), errA)
	require.False(t, a.Active())
	waitTrue(t, "b did not take over", b.Active)
	require.Less(t, time.Since(start), ttl/2, "b took over on the release, not on expiry")
	require.False(t, doneB.returned(), "b's Run returned")

	// b stops: Run returns nil, and c takes over at once.
	_, doneC := runStage(t, c, block)
	start = time.Now()
	stopB()
	require.NoError(t, doneB.wait(t), "a clean stop")
	waitTrue(t, "c did not take over", c.Active)
	require.Less(t, time.Since(start), ttl/2, "c took over on the release, not on expiry")
	require.False(t, doneC.returned(), "c's Run returned")
}

// A run that ends with StandBy releases the lease, runs Then, and runs
// again; an error ends Run, joined with nothing else.
func TestStage_StandByThenRunsAgain(t *testing.T) {
	srv := natstest.RunServer(t)
	s, js, _ := mustStage(t, srv, 3*time.Second)
	fatal := errors.New("disk gone")
	var runs atomic.Int32
	var holderInThen atomic.Pointer[string]
	_, done := runStage(t, s, func(held context.Context) error {
		if runs.Add(1) == 1 {
			return bus.StandBy(errors.New("state corrupt"), func() error {
				h, err := bus.LeaseHolder(context.Background(), js, "", "test.c")
				if err != nil {
					h = "error: " + err.Error()
				}
				holderInThen.Store(&h)
				return nil
			})
		}
		return fatal
	})
	require.ErrorIs(t, done.wait(t), fatal)
	require.Equal(t, int32(2), runs.Load())
	require.NotNil(t, holderInThen.Load(), "Then ran")
	require.Empty(t, *holderInThen.Load(), "Then ran after the lease was released")
	require.False(t, s.Active())

	// Then's error ends Run.
	s2, _, _ := mustStage(t, srv, 3*time.Second)
	rebuild := errors.New("rebuild failed")
	err := s2.Run(t.Context(), func(context.Context) error {
		return bus.StandBy(errors.New("corrupt"), func() error { return rebuild })
	})
	require.ErrorIs(t, err, rebuild)
}

// A stage whose stream does not exist yet waits for it (logging once),
// then runs: the consumer delivers, the commit ticker ticks, and a stop
// ends Run with nil.
func TestStage_WaitsForStreamThenRuns(t *testing.T) {
	srv := natstest.RunServer(t)
	s, js, logs := mustStage(t, srv, 3*time.Second)
	var mu sync.Mutex
	var ids []string
	var id bus.StreamIdentity
	var ticks atomic.Int32
	stop, done := runStage(t, s, func(held context.Context) error {
		cur, err := s.WaitStream(held, bus.StreamIdentity{})
		if err != nil {
			return err
		}
		mu.Lock()
		id = cur
		mu.Unlock()
		c, err := bus.NewConsumer(js, bus.ConsumerConfig{Name: "c"})
		if err != nil {
			return err
		}
		apply := func(_ context.Context, b *bus.Batch) error {
			mu.Lock()
			defer mu.Unlock()
			for i := range b.Entries {
				if s.Matches(&b.Entries[i]) {
					ids = append(ids, b.Entries[i].Entry.EntryID)
				}
			}
			return nil
		}
		commit := func(ctx context.Context, tick <-chan time.Time) {
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick:
					ticks.Add(1)
				}
			}
		}
		return s.Consume(held, c, apply, commit)
	})
	waitTrue(t, "wait not logged", func() bool { return strings.Contains(logs.String(), "waiting for the stream") })
	require.Equal(t, 1, strings.Count(logs.String(), "waiting for the stream"), "logged once")
	require.False(t, done.returned(), "Run returned without a stream")

	_, err := bus.EnsureStream(t.Context(), js, bus.StreamConfig{})
	require.NoError(t, err)
	want, err := bus.Identity(t.Context(), js, "")
	require.NoError(t, err)
	for i := range 3 {
		_, err := js.PublishMsg(t.Context(), bus.EntryMsg(bus.DefaultPrefix, testEntry(i), nil))
		require.NoError(t, err)
	}
	waitTrue(t, "entries not delivered", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(ids) == 3
	})
	waitTrue(t, "commit ticker did not tick", func() bool { return ticks.Load() >= 2 })
	mu.Lock()
	require.True(t, id.Equal(want), "identity of the stream it waited for: %v, want %v", id, want)
	require.Equal(t, []string{"e000000", "e000001", "e000002"}, ids)
	mu.Unlock()
	stop()
	require.NoError(t, done.wait(t), "a stop is clean")
}

// State saved from one incarnation of the stream is refused on another,
// with the same error as CheckIdentity's.
func TestStage_IdentityMismatch(t *testing.T) {
	e := mustEnv(t)
	s, _, _ := mustStage(t, e.srv, 3*time.Second)
	saved, err := s.WaitStream(t.Context(), bus.StreamIdentity{})
	require.NoError(t, err)
	again, err := s.WaitStream(t.Context(), saved)
	require.NoError(t, err, "the same stream")
	require.True(t, again.Equal(saved))

	require.NoError(t, e.js.DeleteStream(t.Context(), bus.DefaultStream))
	_, err = bus.EnsureStream(t.Context(), e.js, bus.StreamConfig{})
	require.NoError(t, err)
	cur, err := s.WaitStream(t.Context(), saved)
	require.ErrorIs(t, err, bus.ErrStreamMismatch)
	var mismatch *bus.StreamMismatchError
	require.ErrorAs(t, err, &mismatch)
	require.True(t, mismatch.Saved.Equal(saved))
	require.True(t, mismatch.Current.Equal(cur))
	require.False(t, cur.Equal(saved))
	_, cerr := bus.CheckIdentity(t.Context(), e.js, saved)
	require.Equal(t, cerr.Error(), err.Error(), "the error CheckIdentity gives")
}

// WaitStream returns the cause when its context ends first.
func TestWaitStream_ContextEnds(t *testing.T) {
	srv := natstest.RunServer(t)
	js := natstest.JetStream(t, natstest.Connect(t, srv.URL()))
	stop := errors.New("stopped")
	ctx, cancel := context.WithCancelCause(t.Context())
	time.AfterFunc(100*time.Millisecond, func() { cancel(stop) })
	_, err := bus.WaitStream(ctx, js, "", bus.StreamWait{Poll: 10 * time.Millisecond})
	require.ErrorIs(t, err, stop)
}

// Messages whose body names another host or format than their subject
// are counted and logged once (then every 1000th); gaps are counted.
func TestStage_ForgedAndGaps(t *testing.T) {
	srv := natstest.RunServer(t)
	s, _, logs := mustStage(t, srv, 3*time.Second)
	good := bus.DeliveredEntry{Delivery: bus.Delivery{Seq: 1, Subject: bus.EntrySubject(bus.DefaultPrefix, "host-1", "claude-code")}, Entry: *testEntry(0)}
	require.True(t, s.Matches(&good))
	for i := range 1000 {
		forged := good
		forged.Seq = uint64(2 + i)
		forged.Subject = bus.EntrySubject(bus.DefaultPrefix, "host-2", "claude-code")
		require.False(t, s.Matches(&forged))
	}
	otherFormat := good
	otherFormat.Subject = bus.EntrySubject(bus.DefaultPrefix, "host-1", "codex")
	require.False(t, s.Matches(&otherFormat))
	require.Equal(t, uint64(1001), s.Forged())
	require.Equal(t, 2, strings.Count(logs.String(), "body names another host or format"), "first and 1000th:\n%s", logs.String())

	raw := bus.DeliveredRaw{Chunk: bus.RawChunk{Host: "host-1", Format: "pi"}}
	for _, subj := range []string{bus.RawSubject(bus.DefaultPrefix, "host-1"), bus.EntrySubject(bus.DefaultPrefix, "host-1", "pi")} {
		raw.Subject = subj
		require.True(t, s.MatchesRaw(&raw), subj)
	}
	raw.Subject = bus.RawSubject(bus.DefaultPrefix, "host-2")
	require.False(t, s.MatchesRaw(&raw))
	require.Equal(t, uint64(1002), s.Forged())

	s.NoteGap(nil)
	s.NoteGap(&bus.Gap{FirstMissing: 10, FirstAvailable: 15})
	s.NoteGap(&bus.Gap{FirstMissing: 20, FirstAvailable: 21})
	require.Equal(t, uint64(6), s.GapMessages())
	require.Contains(t, logs.String(), fmt.Sprintf("level=ERROR msg=gap first_missing=%d first_available=%d", 10, 15))
}

func TestStageConfig_Validate(t *testing.T) {
	srv := natstest.RunServer(t)
	js := natstest.JetStream(t, natstest.Connect(t, srv.URL()))
	ok := bus.StageConfig{JS: js, Role: "r", Consumer: "c", CommitInterval: time.Second}
	require.NoError(t, ok.Validate())
	for field, mod := range map[string]func(*bus.StageConfig){
		"js":              func(c *bus.StageConfig) { c.JS = nil },
		"role":            func(c *bus.StageConfig) { c.Role = "" },
		"consumer":        func(c *bus.StageConfig) { c.Consumer = "" },
		"commit_interval": func(c *bus.StageConfig) { c.CommitInterval = 0 },
		"stream_poll":     func(c *bus.StageConfig) { c.StreamPoll = -1 },
	} {
		c := ok
		mod(&c)
		_, err := bus.NewStage(c)
		var ce *bus.ConfigError
		require.ErrorAs(t, err, &ce, field)
		require.Equal(t, field, ce.Field)
		require.ErrorIs(t, err, bus.ErrInvalidConfig)
	}
}
