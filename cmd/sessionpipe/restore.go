package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sessionpipe/sessionpipe/cmd/internal/exportcmd"
	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/export/archive"
)

const restoreUsage = `Usage: sessionpipe restore -archive DIR|s3://bucket/prefix -out DIR2 [flags]

Gives back the transcripts kept in an archive (the exporter's, or
'sessionpipe export's): each file at DIR2/<host>/<its original path>, as
it was last read, byte for byte (complete lines only; spans a redaction
rule replaced differ, and lines too long to archive are missing and
reported). It prints each file it wrote. Nothing is written outside
DIR2: a symbolic link under it that leads out is refused.

A damaged archive (a segment missing or unreadable, a chunk that does
not decompress to what its index says) costs what the damage held: every
other file is restored, then each damaged piece and each file it affects
is listed, and the exit status is 1.

Flags:
`

func runRestore(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("restore", restoreUsage, stderr)
	archiveDir := fs.String("archive", "", "archive directory, or s3://bucket/prefix (required)")
	out := fs.String("out", "", "where to write the files (required)")
	host := fs.String("host", "", "only this host's files")
	session := fs.String("session", "", "only the files holding this session id")
	since := fs.String("since", "", "only files with lines archived on or after this date (YYYY-MM-DD, UTC)")
	until := fs.String("until", "", "only what was archived up to this date (YYYY-MM-DD, UTC, inclusive): files as they were then")
	force := fs.Bool("force", false, "overwrite files that exist under -out")
	var s3 cli.S3
	s3.Register(fs, os.Getenv)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *archiveDir == "" || *out == "" {
		fs.Usage()
		return usageError{"restore: -archive and -out are required"}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("restore: unexpected arguments %q", fs.Args())}
	}
	cfg := archive.RestoreConfig{Archive: *archiveDir, Out: *out, Host: *host, Session: *session, Force: *force}
	if *since != "" {
		t, err := time.Parse(time.DateOnly, *since)
		if err != nil {
			return usageError{fmt.Sprintf("restore: -since %q is not a date YYYY-MM-DD", *since)}
		}
		cfg.Since = t
	}
	if *until != "" {
		t, err := time.Parse(time.DateOnly, *until)
		if err != nil {
			return usageError{fmt.Sprintf("restore: -until %q is not a date YYYY-MM-DD", *until)}
		}
		if !cfg.Since.IsZero() && t.Before(cfg.Since) {
			return usageError{"restore: -until is before -since"}
		}
		cfg.Until = t
	}
	b, err := exportcmd.OpenBucket(ctx, &s3, *archiveDir)
	if err != nil {
		return err
	}
	cfg.Bucket = b
	files, err := archive.Restore(ctx, cfg)
	var lines, bytes, holes int64
	for _, f := range files {
		fmt.Fprintf(stdout, "%s\t%s\t%d lines\t%s", cli.Printable(f.Host), cli.Printable(f.Out), f.Lines, cli.HumanBytes(f.Bytes))
		if f.Holes > 0 {
			fmt.Fprintf(stdout, "\t%d lines missing", f.Holes)
		}
		if f.Damaged > 0 {
			fmt.Fprintf(stdout, "\t%d damaged chunks left out", f.Damaged)
		}
		if f.Suspect {
			fmt.Fprint(stdout, "\tmay be incomplete (damaged archive)")
		}
		fmt.Fprintln(stdout)
		lines, bytes, holes = lines+f.Lines, bytes+f.Bytes, holes+f.Holes
	}
	var damaged *archive.RestoreError
	if err != nil && !errors.As(err, &damaged) {
		return err
	}
	fmt.Fprintf(stderr, "sessionpipe: restored %d files, %s lines, %s under %s", len(files), cli.Thousands(lines), cli.HumanBytes(bytes), cli.Printable(*out))
	if holes > 0 {
		fmt.Fprintf(stderr, "; %d lines missing (too long to archive, never read, or damaged)", holes)
	}
	fmt.Fprintln(stderr)
	if damaged == nil {
		return nil
	}
	writeDamage(stderr, damaged)
	return fmt.Errorf("restore: the archive is damaged: %d pieces could not be used, %d files restored incomplete or suspect, %d not restored (listed above)",
		len(damaged.Damage), len(damaged.Affected), len(damaged.Lost))
}

// writeDamage lists what a damaged archive could not give back.
func writeDamage(w io.Writer, e *archive.RestoreError) {
	fmt.Fprintf(w, "sessionpipe: %d damaged pieces of the archive, skipped:\n", len(e.Damage))
	for _, d := range e.Damage {
		fmt.Fprintf(w, "  %s\n", cli.Printable(d.Error()))
	}
	if len(e.Affected) > 0 {
		fmt.Fprintln(w, "files restored without the lines of damaged chunks, or that may be incomplete:")
		for _, f := range e.Affected {
			fmt.Fprintf(w, "  %s\t%s\n", cli.Printable(f.Host), cli.Printable(f.Out))
		}
	}
	if len(e.Lost) > 0 {
		fmt.Fprintln(w, "files not restored (no line of them could be read):")
		for _, f := range e.Lost {
			fmt.Fprintf(w, "  %s\t%s\n", cli.Printable(f.Host), cli.Printable(f.Path))
		}
	}
}
