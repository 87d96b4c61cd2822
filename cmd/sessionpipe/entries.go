package main

import (
	"bufio"
	"context"
	"io"
	"time"

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
	fs := newFlagSet("entries", entriesUsage, stderr)
	raw := fs.Bool("raw", false, "include each record's original JSON object")
	noText := fs.Bool("no-text", false, "leave out message text, tool inputs and results")
	shared := addOfflineFlags(fs)
	o, err := shared.parse(fs, args, stderr)
	if err != nil {
		return err
	}
	o.text, o.raw = !*noText, *raw
	o.workers = 1 // one file at a time keeps the output in file order
	start := time.Now()
	w := bufio.NewWriterSize(stdout, 256<<10)
	var buf []byte
	var werr error
	err = o.each(ctx, func(entries []schema.Entry) {
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
	if !*shared.quiet {
		o.summary(time.Since(start))
	}
	return err
}
