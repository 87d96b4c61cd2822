package cli

import (
	"flag"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
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
// collected 215 to 306 times on 200 MB where 39 collections do, and spent
// a fifth of its CPU doing it, for a resident size that stayed above the
// limit anyway.
//
// So after every collection the limit is set to the larger of the floor
// and what leaves a headroom above the live heap: below the floor the
// limit is what was asked, and above it the collector runs about once per
// headroom of new allocation. The headroom is a quarter of the live heap,
// at least the one asked for (a quarter of the floor by default); a fixed
// one shrinks, relative to the work of a collection, as the live heap
// grows. The limit counts the runtime's memory outside the heap too
// (stacks, metadata), and the runtime aims a little below it, so both
// are added.
//
// The collector is not run by the limit itself, though, but by the GC
// percent (GOGC), set after each collection to the same heap size, and
// the limit stands limitSlack above it. Near its limit the runtime gives
// free pages back to the operating system at each allocation, to stay
// below it, and faults them in again at the next: on a host under a
// hypervisor, where a page fault is dear, the 1 GB backfill of `run`
// took 440,000-460,000 page faults instead of 320,000-350,000, and 6%
// more CPU, for the same number of collections. A process whose collector is off (GOGC=off, the offline
// commands) keeps the limit alone, since it is then its only trigger; a
// GOGC set lower than the heap size wins, as it would beside a limit.

// memLimit is the process's one follower: the limit is the process's.
var memLimit struct {
	mu       sync.Mutex
	floor    int64 // bytes; 0: not following
	headroom int64
	percent  int  // the GC percent when following began; <= 0: the limit alone
	armed    bool // a sentinel is waiting for the next collection
}

// The runtime metrics read after each collection: the live heap, and
// what makes up the runtime's memory outside the heap (the total less the
// heap's objects and its free and released pages).
var memSamples = [...]string{
	"/gc/heap/live:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/released:bytes",
}

// limitAim is how close to the limit the runtime lets the heap grow, in
// percent (Go's memoryLimitHeapGoal aims at 97% of it).
const limitAim = 97

// SetMemoryLimit sets the process's soft memory limit to floor bytes and
// from then on keeps it high enough to leave at least headroom (and a
// quarter of the live heap) free above the live heap, re-reading it after
// each garbage collection; headroom 0 is a quarter of floor. A floor of 0
// or less removes the limit and stops following. undo puts back the limit
// and the following there were before; calls nested in time must be
// undone in the reverse order, and undo does nothing the second time.
func SetMemoryLimit(floor, headroom int64) (undo func()) {
	if headroom <= 0 {
		headroom = floor / 4
	}
	memLimit.mu.Lock()
	defer memLimit.mu.Unlock()
	oldFloor, oldHeadroom, oldLimit := memLimit.floor, memLimit.headroom, debug.SetMemoryLimit(-1)
	if oldFloor <= 0 {
		memLimit.percent = gcPercent()
	}
	percent := memLimit.percent
	memLimit.floor, memLimit.headroom = max(floor, 0), headroom
	if floor <= 0 {
		debug.SetMemoryLimit(noLimit)
		restorePercent(percent)
	} else {
		followLiveHeap()
		if !memLimit.armed {
			memLimit.armed = true
			armAfterGC()
		}
	}
	return sync.OnceFunc(func() {
		if oldFloor > 0 {
			SetMemoryLimit(oldFloor, oldHeadroom)
			return
		}
		memLimit.mu.Lock()
		defer memLimit.mu.Unlock()
		memLimit.floor = 0
		debug.SetMemoryLimit(oldLimit)
		restorePercent(percent)
	})
}

// noLimit is the runtime's value for no limit (math.MaxInt64).
const noLimit = 1<<63 - 1

// followLiveHeap sets the limit from the floor and the live heap; the
// caller holds memLimit.mu.
func followLiveHeap() {
	var s [len(memSamples)]metrics.Sample
	for i, name := range memSamples {
		s[i].Name = name
	}
	metrics.Read(s[:])
	var v [len(memSamples)]int64
	for i := range s {
		if s[i].Value.Kind() == metrics.KindUint64 {
			v[i] = int64(s[i].Value.Uint64())
		}
	}
	live, nonHeap := v[0], max(v[1]-v[2]-v[3]-v[4], 0)
	room := max(memLimit.headroom, live/4)
	limit := max(memLimit.floor, (live+room)*100/limitAim+nonHeap)
	if memLimit.percent <= 0 || live <= 0 {
		debug.SetMemoryLimit(limit)
		return
	}
	// The heap size at which the limit would have the collector run, or
	// the one GOGC gives if smaller.
	goal := min(limit-nonHeap, live+live*int64(memLimit.percent)/100)
	debug.SetGCPercent(int(max((goal-live)*100/live, 1)))
	slack := (limit - nonHeap) / 100 * limitSlack
	debug.SetMemoryLimit(limit + min(slack, noLimit-limit)) // a floor near the largest stays there
}

// limitSlack is how far the limit stands above the heap size at which
// the collector runs, in percent of that size: measured on the 200 MB
// and 1 GB backfills of `run`, 6% and 12% took the same faults and CPU.
const limitSlack = 6

// gcPercent returns the GC percent in force (GOGC; negative: off).
func gcPercent() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if p := s[0].Value.Uint64(); s[0].Value.Kind() == metrics.KindUint64 && p <= math.MaxInt32 {
		return int(p)
	}
	return -1 // off: the runtime's -1, read as unsigned
}

// restorePercent puts back the GC percent that following began with,
// which following changes only when it is positive.
func restorePercent(p int) {
	if p > 0 {
		debug.SetGCPercent(p)
	}
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

// maxMemoryLimitMiB is the largest -memory-limit: its bytes fit an int64.
const maxMemoryLimitMiB = math.MaxInt64 >> 20

// memoryLimitMiB is the value of -memory-limit: a whole number of MiB
// from 0 (no limit) to maxMemoryLimitMiB. A negative or larger one is
// refused rather than taken for none, or wrapped round into a small one.
type memoryLimitMiB int64

func (m *memoryLimitMiB) String() string {
	if m == nil {
		return "0"
	}
	return strconv.FormatInt(int64(*m), 10)
}

func (m *memoryLimitMiB) Set(s string) error {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || v < 0 || v > maxMemoryLimitMiB {
		return fmt.Errorf("want a whole number of MiB from 0 (no limit) to %d", int64(maxMemoryLimitMiB))
	}
	*m = memoryLimitMiB(v)
	return nil
}

// RegisterMemoryLimit adds -memory-limit to fs, in MiB into p: defMiB by
// default, 0 (the runtime's own) when GOMEMLIMIT is set in env. also
// ends the usage text when not empty.
func RegisterMemoryLimit(fs *flag.FlagSet, p *int64, defMiB int64, env Env, also string) {
	*p = defMiB
	if env("GOMEMLIMIT") != "" {
		*p = 0 // the environment decides
	}
	if also != "" {
		also = ", " + also
	}
	fs.Var((*memoryLimitMiB)(p), "memory-limit", "soft memory limit of the process in MiB, for Go's garbage collector, raised after each collection to leave a quarter of the live heap (at least a quarter of this limit) free above it; the collector runs there, and the runtime's own limit stands 6% above"+also+" (0: none; GOMEMLIMIT, when set, wins)")
}
