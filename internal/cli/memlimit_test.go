package cli

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The limit follows a live heap larger than the floor, after a
// collection, and comes back down to the floor once that heap is gone;
// undo puts back the limit there was before.
func TestSetMemoryLimit_FollowsLiveHeap(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	const floor, headroom = 8 << 20, 4 << 20
	undo := SetMemoryLimit(floor, headroom)
	require.Equal(t, int64(floor), followedFloor())

	live := make([][]byte, 64) // 64 MiB kept live, eight times the floor
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	require.Eventually(t, func() bool {
		runtime.GC()
		return debug.SetMemoryLimit(-1) >= 64<<20*5/4 // the headroom: a quarter of the live heap, more than the 4 MiB asked
	}, time.Minute, 10*time.Millisecond, "the limit leaves less than a quarter of the live heap above it")
	runtime.KeepAlive(live)

	live = nil
	require.Eventually(t, func() bool {
		runtime.GC()
		return debug.SetMemoryLimit(-1) < 32<<20
	}, time.Minute, 10*time.Millisecond, "the limit does not come back down with the live heap")
	require.GreaterOrEqual(t, debug.SetMemoryLimit(-1), int64(floor), "the limit went below the floor")

	undo()
	require.Equal(t, before, debug.SetMemoryLimit(-1))
	require.Zero(t, followedFloor())
	runtime.GC() // the armed sentinel's cleanup sees no floor and stops
	require.Equal(t, before, debug.SetMemoryLimit(-1), "a collection after undo changed the limit")
}

// A floor of 0 removes the limit.
func TestSetMemoryLimit_Zero(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	undo := SetMemoryLimit(1<<30, 0) // above the test's live heap with its headroom
	require.Equal(t, int64(1<<30), debug.SetMemoryLimit(-1))
	undoZero := SetMemoryLimit(0, 0)
	require.Equal(t, int64(noLimit), debug.SetMemoryLimit(-1))
	undoZero()
	require.Equal(t, int64(1<<30), debug.SetMemoryLimit(-1), "undo of the zero floor puts the 1 GiB floor back")
	undo()
	require.Equal(t, before, debug.SetMemoryLimit(-1))
	undoZero() // a second undo does nothing
	require.Equal(t, before, debug.SetMemoryLimit(-1), "a second undo put back a stale limit")
}

// followedFloor returns the floor SetMemoryLimit follows (0: none).
func followedFloor() int64 {
	memLimit.mu.Lock()
	defer memLimit.mu.Unlock()
	return memLimit.floor
}
