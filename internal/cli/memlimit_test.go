package cli

import (
	"flag"
	"io"
	"math"
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
