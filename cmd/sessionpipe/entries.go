package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/app"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

const entriesUsage = `Usage: sessionpipe entries [flags] PATH...

Prints the normalised entries of the transcripts under PATH as JSONL, one
canonical JSON object per source record, in file order. Bad lines are
reported on stderr with path:line and skipped; a last line without its
newline is not read yet.

PATH is a file, a directory (every transcript under it, at any depth) or a
glob ("~/.claude/projects/**/*.jsonl"). Only regular files are read.

Flags:
`

func runEntries(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("entries", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, entriesUsage)
		fs.PrintDefaults()
	}
	raw := fs.Bool("raw", false, "include each record's original JSON object")
	noText := fs.Bool("no-text", false, "leave out message text, tool inputs and results")
	host := fs.String("host", "", "host name recorded in entries (default: this machine's)")
	maxErrors := fs.Int("errors", 20, "print at most this many bad lines (all are counted)")
	quiet := fs.Bool("q", false, "no progress and no summary on stderr")
	maxLine := fs.Int("max-line-bytes", jsonl.DefaultMaxLineBytes, "longest line read; longer lines are reported and skipped")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return usageError{"entries: no PATH given"}
	}
	if *maxLine <= 0 {
		return usageError{fmt.Sprintf("entries: --max-line-bytes %d is not positive", *maxLine)}
	}
	o := &offline{
		paths: fs.Args(), host: app.Hostname(*host), text: !*noText, raw: *raw,
		workers: 1, // one file at a time keeps the output in file order
		stderr:  stderr, maxLineBytes: *maxLine, maxErrors: *maxErrors, progress: !*quiet && app.IsTerminal(os.Stderr),
	}
	start := time.Now()
	w := bufio.NewWriterSize(stdout, 256<<10)
	var buf []byte
	var werr error
	err := o.each(ctx, func(entries []schema.Entry) {
		for i := range entries {
			if werr != nil {
				return
			}
			buf = entries[i].AppendJSON(buf[:0])
			buf = append(buf, '\n')
			_, werr = w.Write(buf)
		}
	})
	if err == nil {
		err = werr
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if !*quiet {
		o.summary(time.Since(start))
	}
	return err
}
