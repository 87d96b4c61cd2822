package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/app"
	"github.com/sessionpipe/sessionpipe/pipeline/export"
)

const restoreUsage = `Usage: sessionpipe restore -archive DIR -out DIR2 [flags]

Gives back the transcripts kept in an archive (the exporter's, or
'sessionpipe export's): each file at DIR2/<host>/<its original path>, as
it was last read, byte for byte (complete lines only; spans a redaction
rule replaced differ, and lines too long to archive are missing and
reported). It prints each file it wrote.

Flags:
`

func runRestore(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("restore", restoreUsage, stderr)
	archive := fs.String("archive", "", "archive directory (required)")
	out := fs.String("out", "", "where to write the files (required)")
	host := fs.String("host", "", "only this host's files")
	session := fs.String("session", "", "only the files holding this session id")
	since := fs.String("since", "", "only files with lines archived on or after this date (YYYY-MM-DD, UTC)")
	force := fs.Bool("force", false, "overwrite files that exist under -out")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *archive == "" || *out == "" {
		fs.Usage()
		return usageError{"restore: -archive and -out are required"}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("restore: unexpected arguments %q", fs.Args())}
	}
	cfg := export.RestoreConfig{Archive: *archive, Out: *out, Host: *host, Session: *session, Force: *force}
	if *since != "" {
		t, err := time.Parse(time.DateOnly, *since)
		if err != nil {
			return usageError{fmt.Sprintf("restore: -since %q is not a date YYYY-MM-DD", *since)}
		}
		cfg.Since = t
	}
	files, err := export.Restore(ctx, cfg)
	var lines, bytes, holes int64
	for _, f := range files {
		fmt.Fprintf(stdout, "%s\t%s\t%d lines\t%s", f.Host, f.Out, f.Lines, app.HumanBytes(f.Bytes))
		if f.Holes > 0 {
			fmt.Fprintf(stdout, "\t%d lines missing", f.Holes)
		}
		fmt.Fprintln(stdout)
		lines, bytes, holes = lines+f.Lines, bytes+f.Bytes, holes+f.Holes
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "sessionpipe: restored %d files, %s lines, %s under %s", len(files), app.Thousands(lines), app.HumanBytes(bytes), *out)
	if holes > 0 {
		fmt.Fprintf(stderr, "; %d lines missing (too long to archive, or never read)", holes)
	}
	fmt.Fprintln(stderr)
	return nil
}
