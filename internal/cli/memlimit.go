package cli

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// The soft memory limit of a process (-memory-limit) is a floor that
// follows the live heap.
//
// Go's collector runs when the heap reaches the limit. A live heap at or
// above a fixed limit would have it run back to back: no garbage is left
// to free, and each cycle ends where it began. The exporter's live heap is
// bounded by its buffers, but beside it the embedded server keeps a
// message block's cache per recently written block (8 MiB each), so that a
// backfill's live heap passed the exporter's 240 MiB: `sessionpipe export`
// collected 226 to 306 times on 200 MB where 18 collections were enough,
// and spent a quarter of its CPU doing it, for a resident size that stayed
// above the limit anyway.
//
// So after every collection the limit is set to the larger of the floor
// and the live heap plus a headroom (a quarter of the floor): below the
// floor the limit is what was asked, and above it the collector runs once
// per headroom of new allocation.

// memLimit is the process's one follower: the limit is the process's.
var memLimit struct {
	mu       sync.Mutex
	floor    int64 // bytes; 0: not following
	headroom int64
	armed    bool // a sentinel is waiting for the next collection
}

// liveHeap is the runtime metric read after each collection.
const liveHeap = "/gc/heap/live:bytes"

// SetMemoryLimit sets the process's soft memory limit to floor bytes and
// from then on keeps it at least headroom above the live heap, re-reading
// the live heap after each garbage collection; headroom 0 is a quarter of
// floor. A floor of 0 or less removes the limit and stops following.
// undo puts back the limit and the following there were before.
func SetMemoryLimit(floor, headroom int64) (undo func()) {
	if headroom <= 0 {
		headroom = floor / 4
	}
	memLimit.mu.Lock()
	defer memLimit.mu.Unlock()
	oldFloor, oldHeadroom, oldLimit := memLimit.floor, memLimit.headroom, debug.SetMemoryLimit(-1)
	memLimit.floor, memLimit.headroom = max(floor, 0), headroom
	if floor <= 0 {
		debug.SetMemoryLimit(noLimit)
	} else {
		followLiveHeap()
		if !memLimit.armed {
			memLimit.armed = true
			armAfterGC()
		}
	}
	return func() {
		if oldFloor > 0 {
			SetMemoryLimit(oldFloor, oldHeadroom)
			return
		}
		memLimit.mu.Lock()
		defer memLimit.mu.Unlock()
		memLimit.floor = 0
		debug.SetMemoryLimit(oldLimit)
	}
}

// noLimit is the runtime's value for no limit (math.MaxInt64).
const noLimit = 1<<63 - 1

// followLiveHeap sets the limit from the floor and the live heap; the
// caller holds memLimit.mu.
func followLiveHeap() {
	s := []metrics.Sample{{Name: liveHeap}}
	metrics.Read(s)
	var live int64
	if s[0].Value.Kind() == metrics.KindUint64 {
		live = int64(s[0].Value.Uint64())
	}
	debug.SetMemoryLimit(max(memLimit.floor, live+memLimit.headroom))
}

// gcSentinel is allocated to be collected: its cleanup runs once per
// garbage collection cycle. It is larger than the runtime's tiny
// allocations, which share a block and may never be collected alone.
type gcSentinel struct{ _ [32]byte }

// armAfterGC has followLiveHeap run after the next collection, and then
// after each one while a floor is set.
func armAfterGC() {
	runtime.AddCleanup(new(gcSentinel), func(struct{}) {
		memLimit.mu.Lock()
		defer memLimit.mu.Unlock()
		if memLimit.floor <= 0 {
			memLimit.armed = false
			return
		}
		followLiveHeap()
		armAfterGC()
	}, struct{}{})
}

// MemoryLimit returns the floor SetMemoryLimit set (0: none).
func MemoryLimit() int64 {
	memLimit.mu.Lock()
	defer memLimit.mu.Unlock()
	return memLimit.floor
}
