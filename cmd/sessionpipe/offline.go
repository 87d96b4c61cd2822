package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/pi"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// offline reads transcript files in parallel and hands their entries, in
// file order per file, to one consumer goroutine.
type offline struct {
	paths   []string
	host    string
	text    bool
	raw     bool
	workers int
	stderr  io.Writer
	// maxErrors is how many bad lines are printed; the rest are counted.
	maxErrors int
	progress  bool

	// Filled while reading.
	files, skipped, meta atomic.Int64
	bytes, lines         atomic.Int64
	entries, bad         atomic.Int64
	printed              atomic.Int64
	mu                   sync.Mutex // serialises stderr
	batches              sync.Pool  // of []schema.Entry with cap batchSize
}

// batch is a run of entries of one file, in file order.
type batch struct {
	entries []schema.Entry
}

// readBuffer is each reader's buffer: large reads, few system calls.
const readBuffer = 1 << 20

// batchSize is the capacity of the batches handed from readers to the
// consumer; a batch holds about formats.BatchSize entries.
const batchSize = formats.BatchSize + 64

// each reads every file and calls fn with each batch, from one goroutine.
func (o *offline) each(ctx context.Context, fn func(entries []schema.Entry)) error {
	found, err := formats.Walk(o.paths, o.warn)
	if err != nil {
		return err
	}
	var total int64
	for _, f := range found {
		total += f.Size
	}
	workers := o.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	jobs := make(chan formats.Found)
	out := make(chan batch, 4*workers)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			rd := jsonl.NewReader(nil, jsonl.ReaderConfig{BufferSize: readBuffer})
			for f := range jobs {
				o.readOne(ctx, f, rd, out)
			}
		})
	}
	go func() {
		defer close(jobs)
		for _, f := range found {
			select {
			case jobs <- f:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(out)
	}()

	var stopProgress func()
	if o.progress {
		stopProgress = o.showProgress(len(found), total)
	}
	for b := range out {
		fn(b.entries)
		clear(b.entries) // drop references before the batch is reused
		if cap(b.entries) >= batchSize {
			o.batches.Put(b.entries[:0])
		}
	}
	if stopProgress != nil {
		stopProgress()
	}
	return context.Cause(ctx)
}

// batch returns an empty batch, reusing one the consumer is done with.
func (o *offline) batch() []schema.Entry {
	if b, ok := o.batches.Get().([]schema.Entry); ok {
		return b
	}
	return make([]schema.Entry, 0, batchSize)
}

func (o *offline) readOne(ctx context.Context, f formats.Found, rd *jsonl.Reader, out chan<- batch) {
	cfg := parse.Config{Path: f.Path, Host: o.host, Text: o.text, Raw: o.raw}
	send := func(b batch) {
		select {
		case out <- b:
		case <-ctx.Done():
		}
	}
	if f.Meta {
		o.readMeta(f, cfg, send)
		return
	}
	st, err := formats.ReadFileBatches(ctx, f.Path, formats.ReadConfig{Config: cfg, Reader: rd}, o.batch,
		func(entries []schema.Entry) { send(batch{entries: entries}) }, o.lineError)
	o.bytes.Add(st.Bytes)
	o.lines.Add(st.Lines)
	o.entries.Add(st.Entries)
	switch {
	case errors.Is(err, formats.ErrUnknownFormat):
		o.skipped.Add(1)
	case err != nil && ctx.Err() == nil:
		o.warn(err)
	default:
		o.files.Add(1)
	}
}

// readMeta turns an OpenClaw sessions.json into session entries.
func (o *offline) readMeta(f formats.Found, cfg parse.Config, send func(batch)) {
	r, err := os.Open(f.Path)
	if err != nil {
		o.warn(err)
		return
	}
	defer r.Close()
	metas, err := pi.ReadSessionsJSON(r)
	if err != nil {
		o.warn(fmt.Errorf("%s: %w", f.Path, err))
		return
	}
	o.meta.Add(1)
	var b batch
	for _, m := range metas {
		b.entries = append(b.entries, m.Entry(cfg.Host, f.Path))
	}
	if len(b.entries) > 0 {
		send(b)
	}
}

// lineError reports one bad line: printed up to maxErrors, always counted.
func (o *offline) lineError(err error) {
	o.bad.Add(1)
	if o.printed.Add(1) > int64(o.maxErrors) {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	fmt.Fprintln(o.stderr, "sessionpipe: bad line:", err)
}

func (o *offline) warn(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	fmt.Fprintln(o.stderr, "sessionpipe:", err)
}

// summary prints what was read.
func (o *offline) summary(elapsed time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "read %d files (%s), %s lines, %s entries in %s",
		o.files.Load(), humanBytes(o.bytes.Load()), thousands(o.lines.Load()), thousands(o.entries.Load()), elapsed.Round(time.Millisecond))
	if n := o.meta.Load(); n > 0 {
		fmt.Fprintf(&b, "; %d session metadata files", n)
	}
	if n := o.skipped.Load(); n > 0 {
		fmt.Fprintf(&b, "; %d skipped (not transcripts)", n)
	}
	if n := o.bad.Load(); n > 0 {
		fmt.Fprintf(&b, "; %d bad lines", n)
		if n > int64(o.maxErrors) {
			fmt.Fprintf(&b, " (%d not shown)", n-int64(o.maxErrors))
		}
	}
	fmt.Fprintln(o.stderr, "sessionpipe:", b.String())
}

// showProgress prints a progress line on the terminal every half second
// until the returned function is called.
func (o *offline) showProgress(files int, total int64) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	wg.Go(func() {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				o.mu.Lock()
				fmt.Fprint(o.stderr, "\r\033[K")
				o.mu.Unlock()
				return
			case <-t.C:
				n := o.bytes.Load()
				rate := float64(n) / time.Since(start).Seconds()
				o.mu.Lock()
				fmt.Fprintf(o.stderr, "\r\033[K%d/%d files, %s of %s, %s/s",
					o.files.Load()+o.skipped.Load(), files, humanBytes(n), humanBytes(total), humanBytes(int64(rate)))
				o.mu.Unlock()
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
