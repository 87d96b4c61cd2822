package cli

import (
	"flag"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
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
	percent := debug.SetGCPercent(100)
	defer debug.SetGCPercent(percent)
	undo := SetMemoryLimit(1<<30, 0) // above the test's live heap with its headroom
	requireAtFloor(t, 1<<30)
	undoZero := SetMemoryLimit(0, 0)
	require.Equal(t, int64(noLimit), debug.SetMemoryLimit(-1))
	require.Equal(t, 100, gcPercent(), "no limit, but the GC percent following set")
	undoZero()
	requireAtFloor(t, 1<<30)
	undo()
	require.Equal(t, before, debug.SetMemoryLimit(-1))
	undoZero() // a second undo does nothing
	require.Equal(t, before, debug.SetMemoryLimit(-1), "a second undo put back a stale limit")
}

// requireAtFloor checks that the limit is floor, with the slack above
// the collector's heap size (at most limitSlack percent of the floor).
func requireAtFloor(t *testing.T, floor int64) {
	t.Helper()
	limit := debug.SetMemoryLimit(-1)
	require.GreaterOrEqual(t, limit, floor)
	require.LessOrEqual(t, limit, floor+floor*limitSlack/100)
}

// The collector runs by the GC percent, at a heap size below the limit,
// so that the runtime does not give pages back at each allocation near
// it; undo puts back the percent. With the collector off (the offline
// commands), the limit alone stays, at the floor, and the percent is left
// off.
func TestSetMemoryLimit_CollectsBelowLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	percent := debug.SetGCPercent(100)
	defer debug.SetGCPercent(percent)

	const floor = 64 << 20
	undo := SetMemoryLimit(floor, 0)
	defer undo()
	live := make([][]byte, 96) // 96 MiB kept live, above the floor
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	runtime.GC()
	memLimit.mu.Lock()
	followLiveHeap() // as the collection's cleanup does, maybe at the same time: from the same live heap
	p, limit, heap := gcPercent(), debug.SetMemoryLimit(-1), liveHeap()
	memLimit.mu.Unlock()
	runtime.KeepAlive(live)
	require.GreaterOrEqual(t, heap, int64(96<<20))
	goal := heap + heap*int64(p)/100
	require.Less(t, goal, limit, "the collector runs at %d bytes, not below the limit %d", goal, limit)
	require.GreaterOrEqual(t, goal, heap+heap/4-heap/50, "less than a quarter of the live heap free above it (GC percent %d)", p)
	undo()
	require.Equal(t, 100, gcPercent(), "undo did not put back the GC percent")
	require.Equal(t, before, debug.SetMemoryLimit(-1))

	live = nil
	debug.SetGCPercent(-1)
	undo = SetMemoryLimit(floor, 0)
	defer undo()
	require.Eventually(t, func() bool {
		runtime.GC()
		return debug.SetMemoryLimit(-1) == floor
	}, time.Minute, 10*time.Millisecond, "with the collector off the limit is its trigger: it should be the floor, without slack")
	require.Equal(t, -1, gcPercent())
	undo()
	require.Equal(t, -1, gcPercent(), "undo turned the collector on")
	require.Equal(t, before, debug.SetMemoryLimit(-1))
}

// The largest floor -memory-limit takes does not wrap round with the
// slack into a negative limit, which the runtime would take for "leave
// it as it is".
func TestSetMemoryLimit_LargestFloor(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	percent := debug.SetGCPercent(100)
	defer debug.SetGCPercent(percent)
	undo := SetMemoryLimit(maxMemoryLimitMiB<<20, 0)
	defer undo()
	runtime.GC()
	memLimit.mu.Lock()
	followLiveHeap() // as the collection's cleanup does, now that there is a live heap
	limit := debug.SetMemoryLimit(-1)
	memLimit.mu.Unlock()
	require.GreaterOrEqual(t, limit, int64(maxMemoryLimitMiB<<20))
	undo()
	require.Equal(t, before, debug.SetMemoryLimit(-1))
}

// liveHeap returns the live heap after the last collection.
func liveHeap() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// followedFloor returns the floor SetMemoryLimit follows (0: none).
func followedFloor() int64 {
	memLimit.mu.Lock()
	defer memLimit.mu.Unlock()
	return memLimit.floor
}

// -memory-limit takes 0 to the largest MiB count whose bytes fit an
// int64; a negative one is refused, not taken for none, and a larger one
// is refused, not wrapped round into a small one. GOMEMLIMIT in the
// environment makes the default 0.
func TestRegisterMemoryLimit(t *testing.T) {
	parse := func(env map[string]string, args ...string) (int64, error) {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var v int64
		RegisterMemoryLimit(fs, &v, 240, func(k string) string { return env[k] }, "")
		err := fs.Parse(args)
		return v, err
	}
	v, err := parse(nil)
	require.NoError(t, err)
	require.Equal(t, int64(240), v)
	v, err = parse(map[string]string{"GOMEMLIMIT": "1GiB"})
	require.NoError(t, err)
	require.Zero(t, v)
	for arg, want := range map[string]int64{"0": 0, "512": 512, " 64 ": 64, "8796093022207": math.MaxInt64 >> 20} {
		v, err := parse(nil, "-memory-limit", arg)
		require.NoError(t, err, arg)
		require.Equal(t, want, v, arg)
		require.Positive(t, want<<20+1, "%s: its bytes fit", arg)
	}
	for _, arg := range []string{"-1", "8796093022208", "99999999999999999999", "1.5", "lots", ""} {
		_, err := parse(nil, "-memory-limit", arg)
		require.ErrorContains(t, err, "want a whole number of MiB from 0 (no limit) to 8796093022207", arg)
	}
}
