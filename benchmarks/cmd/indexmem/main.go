// Command indexmem measures the indexer's state at fleet scale: it builds
// a state of -sessions sessions and -calls API calls spread over a year
// (most sessions long closed, a few active in the last days), as the
// indexer would from a stream, and reports the peak and final resident
// memory while building, the state's size on disk, and, in a fresh
// process (-restart), the time from opening the state to answering the
// first queries and the memory then.
//
//	go run ./benchmarks/cmd/indexmem -dir /tmp/state -sessions 1000000 -calls 20000000
//	go run ./benchmarks/cmd/indexmem -dir /tmp/state -restart
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/store"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
)

func main() {
	dir := flag.String("dir", "", "state directory (required)")
	sessions := flag.Int("sessions", 1_000_000, "sessions to build")
	calls := flag.Int("calls", 20_000_000, "API calls to build")
	restart := flag.Bool("restart", false, "open an existing state and time the first queries")
	maxFacts := flag.Int("max-facts", index.DefaultMaxFacts, "facts kept in memory between commits")
	memprofile := flag.String("memprofile", "", "write a heap profile at the end")
	limit := flag.Int64("memory-limit", 256<<20, "Go's soft memory limit in bytes, as the daemons set it (0: none)")
	flag.Parse()
	if *limit > 0 {
		debug.SetMemoryLimit(*limit)
	}
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "indexmem: -dir is required")
		os.Exit(2)
	}
	var err error
	if *restart {
		err = reopen(*dir)
	} else {
		err = build(*dir, *sessions, *calls, *maxFacts, *memprofile)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "indexmem:", err)
		os.Exit(1)
	}
}

var models = []string{"claude-sonnet-4-5", "claude-opus-4-6", "claude-haiku-4-5", "gpt-5-codex"}

// open opens the state in dir and an aggregator over it, configured as the
// indexer's; the caller closes the store.
func open(dir string) (*store.Store, *index.Aggregator, error) {
	st, err := store.Open(store.Config{Dir: dir})
	if err != nil {
		return nil, nil, err
	}
	a, err := index.New(index.Config{Pricer: price.Default(), Store: st, Turns: true})
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return st, a, nil
}

// build applies sessions × (calls/sessions) API calls, each an assistant
// entry with usage after a user entry every fourth call, committing every
// 20,000 entries as the indexer commits every second.
func build(dir string, nSessions, nCalls, maxFacts int, profile string) error {
	st, a, err := open(dir)
	if err != nil {
		return err
	}
	defer st.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	end := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	start := end.AddDate(-1, 0, 0)
	perSession := max(nCalls/nSessions, 1)
	began := time.Now()
	var peak uint64
	var applied int
	commit := func(seq int) error {
		if err := a.Commit(map[string][]byte{"seq": []byte(strconv.Itoa(seq))}, maxFacts); err != nil {
			return err
		}
		if r := rss(); r > peak {
			peak = r
		}
		return nil
	}
	var e schema.Entry
	u := schema.Usage{}
	for s := range nSessions {
		sid := fmt.Sprintf("%08x-0000-4000-8000-%012x", s, s)
		host := fmt.Sprintf("host-%02d", s%40)
		cwd := fmt.Sprintf("/home/dev/projects/p%03d", s%300)
		path := fmt.Sprintf("/home/dev/.claude/projects/p%03d/%s.jsonl", s%300, sid)
		// Sessions spread over the year; the last thousand in the last days.
		t0 := start.Add(time.Duration(float64(end.Sub(start)) * float64(s) / float64(nSessions)))
		line := int64(0)
		for c := range perSession {
			ts := t0.Add(time.Duration(c) * 20 * time.Second)
			if c%4 == 0 {
				line++
				e = schema.Entry{Format: schema.FormatClaudeCode, Host: host, Path: path, Line: line, SessionID: sid,
					EntryID: fmt.Sprintf("%s-u%d", sid, c), TS: ts, Kind: schema.KindMessage, Role: schema.RoleUser,
					Text: "please refactor the parser and run the tests", CWD: cwd}
				a.Add(&e)
				applied++
			}
			line++
			u = schema.Usage{Input: int64(rng.IntN(50)), Output: int64(200 + rng.IntN(2000)), CacheRead: int64(rng.IntN(200000)), CacheWrite: int64(rng.IntN(20000))}
			msg := fmt.Sprintf("msg_%s_%d", sid[:8], c)
			e = schema.Entry{Format: schema.FormatClaudeCode, Host: host, Path: path, Line: line, SessionID: sid,
				EntryID: fmt.Sprintf("%s-a%d", sid, c), TS: ts.Add(5 * time.Second), Kind: schema.KindMessage, Role: schema.RoleAssistant,
				Model: models[s%len(models)], MessageID: msg, UsageKey: "claude:" + msg, Usage: &u, CWD: cwd}
			a.Add(&e)
			applied++
			if applied%20000 == 0 {
				if err := commit(applied); err != nil {
					return err
				}
			}
		}
		if s%100000 == 0 && s > 0 {
			fmt.Fprintf(os.Stderr, "%d sessions, %d entries, %s, rss %s, peak %s\n", s, applied, time.Since(began).Round(time.Second), mb(rss()), mb(peak))
		}
	}
	if err := commit(applied); err != nil {
		return err
	}
	elapsed := time.Since(began)
	fmt.Printf("built %d sessions, %d API calls, %d entries in %s (%.0f entries/s)\n", nSessions, nSessions*perSession, applied, elapsed.Round(time.Second), float64(applied)/elapsed.Seconds())
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("peak RSS while building %s, RSS at the end %s (Go heap in use %s, of %s obtained), state on disk %s\n",
		mb(peak), mb(rss()), mb(ms.HeapInuse), mb(ms.HeapSys), mb(du(dir)))
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		runtime.GC()
		return pprof.WriteHeapProfile(f)
	}
	return nil
}

// reopen times a restart: opening the state, the first page of recent
// sessions and usage by day.
func reopen(dir string) error {
	began := time.Now()
	st, a, err := open(dir)
	if err != nil {
		return err
	}
	defer st.Close()
	opened := time.Since(began)
	page, _, err := a.Query(index.SessionQuery{Limit: 100})
	if err != nil {
		return err
	}
	first := time.Since(began)
	rows, err := a.Usage(index.UsageQuery{GroupBy: index.ByDay, Since: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		return err
	}
	usage := time.Since(began)
	turns, _, err := a.Turns(page[0].Format, page[0].Host, page[0].SessionID)
	if err != nil {
		return err
	}
	fmt.Printf("restart: state open in %s, first page of %d recent sessions at %s, usage by day (%d days) at %s, a session's %d turns at %s; RSS %s\n",
		opened.Round(time.Millisecond), len(page), first.Round(time.Millisecond), len(rows), usage.Round(time.Millisecond),
		len(turns), time.Since(began).Round(time.Millisecond), mb(rss()))
	return nil
}

// rss reads the resident set size of this process.
func rss() uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.Sys
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func du(dir string) uint64 {
	var n uint64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += uint64(info.Size())
			}
		}
		return nil
	})
	return n
}

func mb(n uint64) string { return fmt.Sprintf("%.0f MB", float64(n)/1e6) }
