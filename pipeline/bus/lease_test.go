package bus_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
)

// contender is one process wanting a lease: its own connection.
type contender struct {
	lease *bus.Lease
	js    jetstream.JetStream
	close func()
}

func mustContender(tb testing.TB, srv *natstest.Server, holder string, ttl time.Duration) *contender {
	tb.Helper()
	nc := natstest.Connect(tb, srv.URL())
	js := natstest.JetStream(tb, nc)
	l, err := bus.NewLease(js, bus.LeaseConfig{Role: "indexer", Holder: holder, TTL: ttl})
	require.NoError(tb, err)
	return &contender{lease: l, js: js, close: nc.Close}
}

// acquireAsync starts Acquire in the background; the channel gets the
// held context once acquired.
func acquireAsync(tb testing.TB, l *bus.Lease) <-chan context.Context {
	tb.Helper()
	ch := make(chan context.Context, 1)
	ctx, cancel := context.WithCancel(context.WithoutCancel(tb.Context()))
	tb.Cleanup(cancel)
	go func() {
		held, err := l.Acquire(ctx)
		if err == nil {
			ch <- held
		}
	}()
	return ch
}

func waitHeld(tb testing.TB, ch <-chan context.Context, within time.Duration) context.Context {
	tb.Helper()
	select {
	case held := <-ch:
		return held
	case <-time.After(within):
		require.FailNow(tb, "lease not acquired", "within %v", within)
		return nil
	}
}

func requireNotHeld(tb testing.TB, ch <-chan context.Context) {
	tb.Helper()
	select {
	case <-ch:
		require.FailNow(tb, "second holder acquired the lease while the first held it")
	default:
	}
}

func TestLease_OneHolderThenReleaseHandsOver(t *testing.T) {
	srv := natstest.RunServer(t)
	const ttl = 30 * time.Second // handover must not wait for expiry
	a := mustContender(t, srv, "a", ttl)
	b := mustContender(t, srv, "b", ttl)

	heldA, err := a.lease.Acquire(t.Context())
	require.NoError(t, err)
	chB := acquireAsync(t, b.lease)

	// b waits: the key is a's, renewed, for several renew rounds of b.
	natstest.CheckFor(t, waitLong, waitPoll, func() error {
		h, err := bus.LeaseHolder(t.Context(), b.js, "", "indexer")
		if err != nil {
			return err
		}
		if h != "a" {
			return fmt.Errorf("holder %q", h)
		}
		return nil
	})
	requireNotHeld(t, chB)
	require.NoError(t, heldA.Err())

	require.NoError(t, a.lease.Release(t.Context()))
	require.ErrorIs(t, context.Cause(heldA), bus.ErrLeaseReleased)
	heldB := waitHeld(t, chB, 10*time.Second) // far below the 30s TTL
	require.NoError(t, heldB.Err())
	h, err := bus.LeaseHolder(t.Context(), a.js, "", "indexer")
	require.NoError(t, err)
	require.Equal(t, "b", h)

	// a wants it back: waits until b releases.
	chA := acquireAsync(t, a.lease)
	requireNotHeld(t, chA)
	require.NoError(t, b.lease.Release(t.Context()))
	waitHeld(t, chA, 10*time.Second)
}

// Four contenders take turns: each holds the lease once, never two at a
// time (each checks, while it holds it, that the key names it and that
// no one else is active).
func TestLease_MutualExclusion(t *testing.T) {
	srv := natstest.RunServer(t)
	const n = 4
	var mu sync.Mutex
	active, maxActive := 0, 0
	errs := make(chan error, n)
	for i := range n {
		c := mustContender(t, srv, fmt.Sprintf("c%d", i), 30*time.Second)
		go func() {
			held, err := c.lease.Acquire(t.Context())
			if err != nil {
				errs <- err
				return
			}
			mu.Lock()
			active++
			maxActive = max(maxActive, active)
			mu.Unlock()
			h, err := bus.LeaseHolder(held, c.js, "", "indexer")
			if err == nil && h != c.lease.Holder() {
				err = fmt.Errorf("%s holds the lease but the key names %q", c.lease.Holder(), h)
			}
			mu.Lock()
			active--
			mu.Unlock()
			if rerr := c.lease.Release(context.WithoutCancel(t.Context())); err == nil {
				err = rerr
			}
			errs <- err
		}()
	}
	for range n {
		select {
		case err := <-errs:
			require.NoError(t, err)
		case <-time.After(waitLong):
			require.FailNow(t, "contenders did not all get their turn")
		}
	}
	require.Equal(t, 1, maxActive, "never two holders at a time")
}

func TestLease_HolderDiesStandbyTakesOverAfterExpiry(t *testing.T) {
	srv := natstest.RunServer(t)
	const ttl = 2 * time.Second
	a := mustContender(t, srv, "a", ttl)
	b := mustContender(t, srv, "b", ttl)
	heldA, err := a.lease.Acquire(t.Context())
	require.NoError(t, err)
	chB := acquireAsync(t, b.lease)

	// a's host disappears: no renewal, no release reaches the server.
	a.close()
	heldB := waitHeld(t, chB, waitLong)
	require.Error(t, heldA.Err(), "a learned it lost the lease before b acquired it")
	require.ErrorIs(t, context.Cause(heldA), bus.ErrLeaseLost)
	require.NoError(t, heldB.Err())
}

func TestLease_TakenOverIsLost(t *testing.T) {
	srv := natstest.RunServer(t)
	a := mustContender(t, srv, "a", 3*time.Second)
	heldA, err := a.lease.Acquire(t.Context())
	require.NoError(t, err)

	// An operator overwrites the key: a's next renewal finds another revision.
	kv, err := a.js.KeyValue(t.Context(), bus.DefaultLeaseBucket)
	require.NoError(t, err)
	_, err = kv.Put(t.Context(), "indexer", []byte(`{"holder":"someone-else"}`))
	require.NoError(t, err)
	select {
	case <-heldA.Done():
	case <-time.After(waitLong):
		require.FailNow(t, "lease not lost")
	}
	require.ErrorIs(t, context.Cause(heldA), bus.ErrLeaseLost)
	h, err := bus.LeaseHolder(t.Context(), a.js, "", "indexer")
	require.NoError(t, err)
	require.Equal(t, "someone-else", h, "a did not delete another holder's key")

	// Once the other holder lets go, a lost lease can be acquired again.
	require.NoError(t, kv.Delete(t.Context(), "indexer"))
	heldA, err = a.lease.Acquire(t.Context())
	require.NoError(t, err)
	require.NoError(t, heldA.Err())
	require.NoError(t, a.lease.Release(t.Context()))
}

func TestLease_ContextEndReleases(t *testing.T) {
	srv := natstest.RunServer(t)
	const ttl = 30 * time.Second
	a := mustContender(t, srv, "a", ttl)
	b := mustContender(t, srv, "b", ttl)
	ctx, cancel := context.WithCancel(t.Context())
	heldA, err := a.lease.Acquire(ctx)
	require.NoError(t, err)
	chB := acquireAsync(t, b.lease)
	requireNotHeld(t, chB)
	cancel()
	<-heldA.Done()
	waitHeld(t, chB, 10*time.Second)
	require.NoError(t, a.lease.Release(t.Context()), "release after the context ended")
}

func TestLease_AcquireContextEnds(t *testing.T) {
	srv := natstest.RunServer(t)
	a := mustContender(t, srv, "a", 30*time.Second)
	b := mustContender(t, srv, "b", 30*time.Second)
	_, err := a.lease.Acquire(t.Context())
	require.NoError(t, err)
	ctx, cancel := context.WithCancelCause(t.Context())
	cause := errors.New("shutting down")
	go cancel(cause)
	_, err = b.lease.Acquire(ctx)
	require.ErrorIs(t, err, cause)
	_, err = a.lease.Acquire(t.Context())
	require.Error(t, err, "already held")
}

func TestLeaseConfig_Validate(t *testing.T) {
	tests := []struct {
		name  string
		cfg   bus.LeaseConfig
		field string
	}{
		{"NoRole", bus.LeaseConfig{}, "role"},
		{"BadRole", bus.LeaseConfig{Role: "a b"}, "role"},
		{"BadBucket", bus.LeaseConfig{Role: "x", Bucket: "a.b"}, "bucket"},
		{"ShortTTL", bus.LeaseConfig{Role: "x", TTL: 500 * time.Millisecond}, "ttl"},
		{"RenewTooLate", bus.LeaseConfig{Role: "x", TTL: 10 * time.Second, Renew: 9 * time.Second}, "renew"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ce *bus.ConfigError
			require.ErrorAs(t, tt.cfg.Validate(), &ce)
			require.Equal(t, tt.field, ce.Field)
		})
	}
	require.NoError(t, bus.LeaseConfig{Role: "compact"}.Validate())
}

// On a 3-node cluster with a replicated bucket: one holder, handover on
// release, and a dead holder replaced after the TTL.
func TestLease_Cluster(t *testing.T) {
	c := natstest.RunCluster(t, 3)
	newLease := func(holder string) (*bus.Lease, func()) {
		nc := natstest.Connect(t, c.URLs())
		l, err := bus.NewLease(natstest.JetStream(t, nc), bus.LeaseConfig{Role: "compact", Holder: holder, TTL: 2 * time.Second, Replicas: 3})
		require.NoError(t, err)
		return l, nc.Close
	}
	a, _ := newLease("a")
	b, closeB := newLease("b")
	heldA, err := a.Acquire(t.Context()) // retries until the cluster is ready
	require.NoError(t, err)
	chB := acquireAsync(t, b)
	requireNotHeld(t, chB)
	require.NoError(t, a.Release(t.Context()))
	heldB := waitHeld(t, chB, 10*time.Second)
	require.ErrorIs(t, context.Cause(heldA), bus.ErrLeaseReleased)

	chA := acquireAsync(t, a)
	closeB() // b dies
	waitHeld(t, chA, waitLong)
	require.ErrorIs(t, context.Cause(heldB), bus.ErrLeaseLost, "b's watchdog fired before a took over")
}
