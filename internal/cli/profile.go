package cli

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"sync"
	"time"
)

// Profile starts what the environment asks for, for measuring where a
// command's time and memory go, and returns the function that stops it
// and writes the files: SESSIONPIPE_CPUPROFILE=FILE a CPU profile (go tool
// pprof FILE), SESSIONPIPE_TRACE=FILE an execution trace (go tool trace
// FILE), SESSIONPIPE_HEAPPROFILE=FILE the heap at its largest (sampled
// each second), SESSIONPIPE_ALLOCSPROFILE=FILE the allocations made (go
// tool pprof -sample_index=alloc_space FILE). What cannot be written is
// reported on stderr; the command runs on.
func Profile(env Env, stderr io.Writer) (stop func()) {
	stopCPU := StartCPUProfile(env("SESSIONPIPE_CPUPROFILE"), stderr)
	stopTrace := StartTrace(env("SESSIONPIPE_TRACE"), stderr)
	stopHeap := StartPeakHeapProfile(env("SESSIONPIPE_HEAPPROFILE"), stderr)
	return func() {
		stopHeap()
		stopTrace()
		stopCPU()
		WriteAllocsProfile(env("SESSIONPIPE_ALLOCSPROFILE"), stderr)
	}
}

// StartCPUProfile starts a CPU profile written to path and returns the
// function that stops it and closes the file. An empty path profiles
// nothing; a profile that cannot start is reported on stderr and the
// command runs without it.
func StartCPUProfile(path string, stderr io.Writer) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(stderr, "cpu profile:", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(stderr, "cpu profile:", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintln(stderr, "cpu profile:", err)
		}
	}
}

// StartTrace starts an execution trace written to path (go tool trace
// FILE) and returns the function that stops it; like StartCPUProfile, an
// empty path traces nothing.
func StartTrace(path string, stderr io.Writer) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(stderr, "trace:", err)
		return func() {}
	}
	if err := trace.Start(f); err != nil {
		fmt.Fprintln(stderr, "trace:", err)
		f.Close()
		return func() {}
	}
	return func() {
		trace.Stop()
		if err := f.Close(); err != nil {
			fmt.Fprintln(stderr, "trace:", err)
		}
	}
}

// WriteAllocsProfile writes the allocation profile (every allocation since
// the start, sampled; go tool pprof -sample_index=alloc_space FILE) to path;
// an empty path writes nothing. It collects garbage first: the profile
// holds what the last collection saw, and a command that ran under a
// large heap budget (the offline commands) may have collected only at its
// start.
func WriteAllocsProfile(path string, stderr io.Writer) {
	if path == "" {
		return
	}
	runtime.GC()
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(stderr, "allocs profile:", err)
		return
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		fmt.Fprintln(stderr, "allocs profile:", err)
	}
	if err := f.Close(); err != nil {
		fmt.Fprintln(stderr, "allocs profile:", err)
	}
}

// StartPeakHeapProfile samples the heap every second and, each time it
// is larger than ever before, writes its profile (go tool pprof
// -sample_index=inuse_space FILE) to path: the heap at its peak, for
// finding what a command holds. It returns the function that stops it; an
// empty path profiles nothing.
func StartPeakHeapProfile(path string, stderr io.Writer) (stop func()) {
	if path == "" {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		var peak uint64
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse <= peak {
				continue
			}
			peak = ms.HeapInuse
			f, err := os.Create(path)
			if err != nil {
				fmt.Fprintln(stderr, "heap profile:", err)
				return
			}
			if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
				fmt.Fprintln(stderr, "heap profile:", err)
			}
			f.Close()
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}
