package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/discover"
	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// newFlagSet returns the flag set of a subcommand: on -h or a bad flag it
// prints usage and then the flags on stderr.
func newFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	return fs
}

// offlineFlags are the flags the offline commands share.
type offlineFlags struct {
	host      *string
	maxErrors *int
	quiet     *bool
	maxLine   *int
}

// addOfflineFlags registers the flags the offline commands share on fs.
func addOfflineFlags(fs *flag.FlagSet) offlineFlags {
	return offlineFlags{
		host:      fs.String("host", "", "host name recorded in entries (default: this machine's)"),
		maxErrors: fs.Int("errors", 20, "print at most this many bad lines (all are counted)"),
		quiet:     fs.Bool("q", false, "no progress and no summary on stderr"),
		maxLine:   fs.Int("max-line-bytes", jsonl.DefaultMaxLineBytes, "longest line read; longer lines are reported and skipped"),
	}
}

// parse parses args with fs and returns the reader of the PATHs they name,
// set from the shared flags. No PATH, or a --max-line-bytes that is not
// positive, is a usageError.
func (f offlineFlags) parse(fs *flag.FlagSet, args []string, stderr io.Writer) (*offline, error) {
	return f.parseOr(fs, args, stderr, nil)
}

// parseOr is parse for a command that reads the well-known locations of
// every agent under $HOME when given no PATH (as `run` does): env is
// where HOME and the agents' variables are read (nil: no default).
func (f offlineFlags) parseOr(fs *flag.FlagSet, args []string, stderr io.Writer, env cli.Env) (*offline, error) {
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	paths := fs.Args()
	if len(paths) == 0 {
		if env == nil {
			fs.Usage()
			return nil, usageError{fs.Name() + ": no PATH given"}
		}
		var err error
		if paths, err = wellKnownPaths(env); err != nil {
			return nil, fmt.Errorf("%s: %w", fs.Name(), err)
		}
		if !*f.quiet {
			fmt.Fprintf(stderr, "sessionpipe: no PATH given: reading %s\n", strings.Join(paths, ", "))
		}
	}
	if *f.maxLine <= 0 {
		return nil, usageError{fmt.Sprintf("%s: -max-line-bytes %d is not positive", fs.Name(), *f.maxLine)}
	}
	return &offline{
		paths: paths, host: cli.Hostname(*f.host), stderr: stderr, maxLineBytes: *f.maxLine,
		maxErrors: *f.maxErrors, progress: !*f.quiet && cli.IsTerminal(os.Stderr),
	}, nil
}

// wellKnownPaths returns the well-known locations of every agent under
// $HOME (those `run` follows by default) that hold at least one file.
// None is an error that lists where it looked.
func wellKnownPaths(env cli.Env) ([]string, error) {
	globs, _, err := cli.Watches(nil, nil, env)
	if err != nil {
		return nil, err
	}
	var found []string
	for _, g := range globs {
		if holdsFile(g) {
			found = append(found, g)
		}
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("no PATH given, and no transcripts in the well-known locations (%s): give a PATH", strings.Join(globs, ", "))
	}
	return found, nil
}

// holdsFile reports whether a path given names at least one regular
// file, by the rule formats.Walk reads it with (package discover).
func holdsFile(path string) bool {
	if discover.Validate(path) != nil {
		return false
	}
	held := false
	discover.NewSet([]string{path}).Walk(discover.Visitor{
		File: func(string, fs.FileInfo, discover.Match) { held = true },
	})
	return held
}

// offline runs a formats.FileReader for the offline commands: it prints
// bad lines (up to maxErrors), a progress line and the summary.
type offline struct {
	paths        []string
	host         string
	text, raw    bool
	workers      int
	maxLineBytes int
	stderr       io.Writer
	// maxErrors is how many bad lines are printed; the rest are counted.
	maxErrors int
	progress  bool

	mu      sync.Mutex // serialises stderr
	printed int64
	fr      *formats.FileReader
}

// each reads every file and calls fn with each batch, from one goroutine.
func (o *offline) each(ctx context.Context, fn func(entries []schema.Entry)) error {
	fr, err := formats.NewFileReader(formats.FileReaderConfig{
		Config:       parse.Config{Host: o.host, Text: o.text, Raw: o.raw},
		Workers:      o.workers,
		MaxLineBytes: o.maxLineBytes,
		OnLineError:  o.lineError,
		OnFileError:  o.warn,
	})
	if err != nil {
		return err
	}
	o.fr = fr
	if o.progress {
		defer o.showProgress()()
	}
	return fr.Read(ctx, o.paths, fn)
}

// lineError prints one bad line, up to maxErrors; the reader counts them.
func (o *offline) lineError(err error) {
	o.printed++ // the reader calls one at a time
	if o.printed > int64(o.maxErrors) {
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
	if o.fr == nil {
		return
	}
	st := o.fr.Stats()
	o.mu.Lock()
	defer o.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "read %s (%s), %s %s, %s %s in %s",
		cli.Count(st.Files, "file"), cli.HumanBytes(st.Bytes), cli.Thousands(st.Lines), plural(st.Lines, "line", "lines"),
		cli.Thousands(st.Entries), plural(st.Entries, "entry", "entries"), elapsed.Round(time.Millisecond))
	if st.Stores > 0 {
		fmt.Fprintf(&b, "; %s", cli.Count(st.Stores, "session metadata file"))
	}
	if st.Skipped > 0 {
		fmt.Fprintf(&b, "; %d skipped (not transcripts)", st.Skipped)
	}
	if st.SkippedNames > 0 {
		fmt.Fprintf(&b, "; %d skipped (names not read as transcripts)", st.SkippedNames)
	}
	if st.NotRegular > 0 {
		fmt.Fprintf(&b, "; %d skipped (not regular files)", st.NotRegular)
	}
	if st.Failed > 0 {
		fmt.Fprintf(&b, "; %d unreadable", st.Failed)
	}
	if st.BadLines > 0 {
		fmt.Fprintf(&b, "; %s", cli.Count(st.BadLines, "bad line"))
		if st.BadLines > int64(o.maxErrors) {
			fmt.Fprintf(&b, " (%d not shown)", st.BadLines-int64(o.maxErrors))
		}
	}
	if st.Pending > 0 {
		fmt.Fprintf(&b, "; %d incomplete last %s not counted", st.Pending, plural(st.Pending, "line", "lines"))
	}
	fmt.Fprintln(o.stderr, "sessionpipe:", b.String())
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// showProgress prints a progress line on the terminal every half second
// until the returned function is called.
func (o *offline) showProgress() func() {
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
				st := o.fr.Stats()
				rate := float64(st.Bytes) / time.Since(start).Seconds()
				o.mu.Lock()
				fmt.Fprintf(o.stderr, "\r\033[K%d/%d files, %s of %s, %s/s",
					st.Files+st.Skipped+st.Stores, st.FilesFound, cli.HumanBytes(st.Bytes), cli.HumanBytes(st.BytesFound), cli.HumanBytes(int64(rate)))
				o.mu.Unlock()
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}
