package bus

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
)

// A holder whose renewing goroutine is stuck learns it lost the lease
// from its watchdog, before the stand-by acquires it.
func TestLease_FrozenHolderLearnsFirst(t *testing.T) {
	srv := natstest.RunServer(t)
	newLease := func(holder string) *Lease {
		js := natstest.JetStream(t, natstest.Connect(t, srv.URL()))
		l, err := NewLease(js, LeaseConfig{Role: "indexer", Holder: holder, TTL: 2 * time.Second})
		require.NoError(t, err)
		return l
	}
	a, b := newLease("a"), newLease("b")
	freeze := make(chan struct{})
	frozen := make(chan struct{}, 1)
	a.beforeRenew = func() {
		select {
		case frozen <- struct{}{}:
		default:
		}
		<-freeze
	}
	t.Cleanup(func() { close(freeze) })

	heldA, err := a.Acquire(t.Context())
	require.NoError(t, err)
	<-frozen

	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	heldB, err := b.Acquire(ctx)
	require.NoError(t, err)
	require.Error(t, heldA.Err(), "a knew it lost the lease when b acquired it")
	require.ErrorIs(t, context.Cause(heldA), ErrLeaseLost)
	require.NoError(t, heldB.Err())
}
