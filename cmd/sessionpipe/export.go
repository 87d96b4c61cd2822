package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/sessionpipe/sessionpipe/cmd/internal/exportcmd"
	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/pipeline/redact"
)

const exportUsage = `Usage: sessionpipe export -out DIR [flags] PATH...

Writes the transcripts under PATH (files, directories, globs) as the
exporter does, without a server to run: Hive-partitioned Parquet under
DIR (format=/date=/host=, zstd) that DuckDB reads ('sessionpipe duckdb
DIR'), and the original lines as a zstd archive (default DIR-archive,
beside DIR) that 'sessionpipe restore' gives back. It goes the way a live
deployment goes, through a temporary embedded JetStream stream, so the
files are the same. Exporting again into DIR adds to it; a file exported
twice has its rows twice, and the views and 'exporter compact' keep one.

Flags:
`

func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("export", exportUsage, stderr)
	out := fs.String("out", "", "Parquet output directory, or s3://bucket/prefix (required)")
	archive := fs.String("archive-dir", "", "archive of the original lines, a directory or s3://bucket/prefix (default DIR-archive)")
	noArchive := fs.Bool("no-archive", false, "write no archive")
	host := fs.String("host", "", "host name recorded in entries (default: this machine's)")
	content := redact.Redacted
	fs.Var(&content, "content", "what of the text is kept: full, redacted (secrets replaced, the default) or metadata (no text)")
	partBytes := fs.Int64("part-bytes", 0, "close a Parquet file when its buffered rows reach this many bytes (default 64 MiB)")
	maxLine := fs.Int("max-line-bytes", 0, "longest line read (default 128 MiB)")
	archiveLevel := cli.ArchiveLevelDefault
	fs.Var(&archiveLevel, "archive-level", "zstd level of the archive: fastest, default (zstd's own), better or best (as 'exporter serve' has)")
	quiet := fs.Bool("q", false, "no progress and no summary on stderr")
	memoryLimit := new(int64)
	cli.RegisterMemoryLimit(fs, memoryLimit, cli.DefaultExporterMemoryLimitMiB, os.Getenv, "as 'exporter serve' has")
	var s3 cli.S3
	s3.Register(fs, os.Getenv)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		fs.Usage()
		return usageError{"export: -out DIR is required"}
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return usageError{"export: no PATH given"}
	}
	for _, p := range fs.Args() {
		if !formats.HasMeta(p) {
			if _, err := os.Stat(p); err != nil {
				return err
			}
		}
	}
	if *memoryLimit > 0 {
		// Without a limit the heap grew to twice the exporter's buffers
		// (about 500 MB on a 200 MB history), for no speed: the
		// buffers are bounded, the garbage around them is not.
		defer cli.SetMemoryLimit(*memoryLimit<<20, 0)()
	}
	o := exportcmd.OfflineExport{
		Paths: fs.Args(), Out: *out, Host: cli.Hostname(*host), Content: content,
		PartBytes: *partBytes, MaxLineBytes: *maxLine, S3: &s3, ArchiveLevel: archiveLevel,
	}
	if !*noArchive {
		o.Archive = *archive
		if o.Archive == "" {
			o.Archive = exportcmd.DefaultOfflineArchive(*out)
		}
	}
	logs := cli.Logging{Level: "warn", Format: "text"}
	log, err := logs.Logger(stderr)
	if err != nil {
		return err
	}
	var progress io.Writer
	if f, ok := stderr.(*os.File); ok && !*quiet && cli.IsTerminal(f) {
		progress = f
	}
	res, err := o.Run(ctx, log, progress)
	if err != nil {
		return err
	}
	if !*quiet {
		t, e := res.Tail, res.Export
		fmt.Fprintf(stderr, "sessionpipe: exported %d files (%s, %s lines) in %s: %s rows in %d Parquet files (%s) under %s",
			t.Files, cli.HumanBytes(t.Bytes), cli.Thousands(t.Lines), res.Took.Round(1e6), cli.Thousands(e.Rows), e.Files, cli.HumanBytes(e.Bytes), o.Out)
		if o.Archive != "" {
			fmt.Fprintf(stderr, "; archive %s in %d segments under %s", cli.HumanBytes(e.ArchiveBytes), e.Segments, o.Archive)
		}
		if t.BadLines > 0 {
			fmt.Fprintf(stderr, "; %d bad lines (dead letters, not in Parquet)", t.BadLines)
		}
		if n := t.Skipped; n > 0 {
			fmt.Fprintf(stderr, "; %d files skipped (not transcripts)", n)
		}
		if n := t.SkippedNames; n > 0 {
			fmt.Fprintf(stderr, "; %d files skipped (names not read as transcripts)", n)
		}
		fmt.Fprintln(stderr)
	}
	return nil
}
