package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessionpipe/sessionpipe/cmd/internal/exportcmd"
	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
)

const compactUsage = `Usage: exporter compact [flags]

Merges the small Parquet files of closed partitions (days that ended
-min-age ago) into files of about -target-bytes, rows sorted again and
duplicate entries (re-sent after the stream's duplicate window) dropped.
Each merge is atomic and safe against a crash at any point and against an
exporter writing to the same directory at the same time. With -nats, a
lease in JetStream KV lets one compactor run at a time across hosts that
share the directory.

Flags:
`

func compact(ctx context.Context, args []string, env cli.Env, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("exporter compact", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, compactUsage)
		fs.PrintDefaults()
	}
	var c cli.Compact
	c.Register(fs, env)
	if _, err := cli.ParseFlags(fs, "exporter compact", args, env); err != nil {
		return err
	}
	n, logs := &c.NATS, &c.Logging
	out, minAge, target, minFiles, memory, dryRun, name := &c.Out, &c.MinAge, &c.TargetBytes, &c.MinFiles, &c.MemoryBytes, &c.DryRun, &c.Consumer
	if fs.NArg() > 0 {
		return usageError{Msg: fmt.Sprintf("compact: unexpected arguments %q (the directory is given with -out)", fs.Args())}
	}
	log, err := logs.Logger(stderr)
	if err != nil {
		return err
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join(n.DataDir, "parquet")
	}
	if n.URL != "" {
		b, err := n.Connect(ctx, "sessionpipe-compact", log)
		if err != nil {
			return err
		}
		defer b.Close(context.WithoutCancel(ctx))
		lease, err := bus.NewLease(b.JS, bus.LeaseConfig{Role: "compact." + *name, Logger: log})
		if err != nil {
			return err
		}
		log.Info("waiting for the compaction lease", "role", "compact."+*name)
		held, err := lease.Acquire(ctx)
		if err != nil {
			return err
		}
		defer lease.Release(context.WithoutCancel(ctx))
		ctx = held
	}
	start := time.Now()
	cc := parquet.CompactConfig{
		Dir: dir, MinAge: *minAge, TargetBytes: *target, MinFiles: *minFiles, MemoryBytes: *memory,
		DryRun: *dryRun, LockTimeout: c.LockTimeout, WriterVersion: "sessionpipe " + cli.Version(), Logger: log,
	}
	var st parquet.CompactStats
	if strings.HasPrefix(dir, "s3://") {
		bc := parquet.BucketCompactConfig{CompactConfig: cc, LeftoverAge: c.LeftoverAge, SpoolDir: c.S3.Spool}
		if bc.Bucket, err = exportcmd.OpenBucket(ctx, &c.S3, dir); err == nil && c.Archive != "" {
			bc.Archive, err = exportcmd.OpenBucket(ctx, &c.S3, c.Archive)
		}
		if err != nil {
			return err
		}
		st, err = parquet.CompactBucket(ctx, bc)
	} else {
		st, err = parquet.Compact(ctx, cc)
	}
	for _, m := range st.Merges {
		fmt.Fprintf(stdout, "%s\t%d files\t→ %s\n", m.Partition.Dir(), len(m.Inputs), m.Output)
	}
	if held := (*parquet.LockHeldError)(nil); errors.As(err, &held) {
		return fmt.Errorf("compact: %w (-lock-timeout %s)", err, c.LockTimeout)
	}
	if err != nil {
		return err
	}
	verb := "merged"
	if *dryRun {
		verb = "would merge"
	}
	fmt.Fprintf(stderr, "exporter: %s %d files of %d partitions into %d (%s → %s, %s rows, %d duplicates dropped) in %s",
		verb, st.FilesIn, st.Partitions, st.FilesOut, cli.HumanBytes(st.BytesIn), cli.HumanBytes(st.BytesOut),
		cli.Thousands(st.RowsOut), st.Duplicates, time.Since(start).Round(time.Millisecond))
	if st.Skipped > 0 {
		fmt.Fprintf(stderr, "; %d merges skipped (see the log)", st.Skipped)
	}
	fmt.Fprintln(stderr)
	return nil
}

// health asks a running exporter's /healthz (the container's health
// check: the image has no shell or curl).
func health(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("exporter health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "http://127.0.0.1:7475/healthz", "the exporter's health endpoint")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s %s", *url, resp.Status, strings.TrimSpace(string(body)))
	}
	fmt.Fprint(stdout, string(body))
	return nil
}

func orDefault(v, def string) string {
	if v != "" {
		return v
	}
	return def
}
