package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionpipe/sessionpipe/cmd/internal/exportcmd"
	"github.com/sessionpipe/sessionpipe/cmd/internal/indexcmd"
	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/export/duckdb"
	"github.com/sessionpipe/sessionpipe/pipeline/export/objstore"
	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
)

const duckdbUsage = `Usage: sessionpipe duckdb [flags] [DIR|s3://bucket/prefix]

Prints a DuckDB SQL script that defines views over the Parquet files under
DIR (the exporter's output directory): entries (every entry once),
api_calls (every API call once, with its cost) and sessions (the per-session
turns, messages, tool calls, tokens and cost of 'sessionpipe sessions',
computed in SQL). Open DuckDB with the views defined:

  duckdb -init <(sessionpipe duckdb DIR)

DIR defaults to the current directory. For an output in a bucket
(s3://bucket/prefix, with the -s3-* flags of the exporter), the script
loads DuckDB's httpfs and aws extensions, creates a secret from the AWS
credential chain, and reads the files the manifest lists (see
docs/s3.md). The views read the files when they
are queried, so files committed later are seen; the price table is the one
of this binary (or -prices), copied into the script. See docs/duckdb.md.

Flags:
`

func runDuckDB(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("duckdb", duckdbUsage, stderr)
	prices := fs.String("prices", "", "price file overriding the embedded prices (as for sessions; its dated periods are embedded too)")
	var s3 cli.S3
	s3.Register(fs, os.Getenv)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return usageError{"duckdb: more than one DIR given"}
	}
	dir := "."
	if fs.NArg() == 1 {
		dir = fs.Arg(0)
	}
	if objstore.IsURL(dir) {
		return duckDBBucket(ctx, dir, &s3, *prices, stdout, stderr)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("duckdb: %w", err)
	}
	st, err := os.Stat(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("duckdb: %s: no such directory", dir)
	case err != nil:
		return fmt.Errorf("duckdb: %w", err)
	case !st.IsDir():
		return fmt.Errorf("duckdb: %s is not a directory (give the exporter's output directory)", dir)
	}
	table, err := indexcmd.LoadPrices(*prices)
	if err != nil {
		return err
	}
	found, err := hasParquet(abs)
	if err != nil {
		return fmt.Errorf("duckdb: %w", err)
	}
	if !found {
		// Views over no rows, with every column: the banner's command
		// works on a fresh data directory.
		fmt.Fprintf(stderr, "sessionpipe: duckdb: no Parquet files under %s yet: the views are empty; run this again once the exporter has committed one\n", abs)
	}
	_, err = io.WriteString(stdout, duckdb.DuckDBScript(duckdb.ViewConfig{Dir: abs, Prices: table, Empty: !found}))
	return err
}

// hasParquet reports whether a *.parquet file is anywhere under dir.
func hasParquet(dir string) (bool, error) {
	found := false
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable parts: DuckDB will say so
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".parquet") {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found, err
}

// duckDBBucket prints the script over an output in a bucket: the files
// its manifest lists, through httpfs.
func duckDBBucket(ctx context.Context, loc string, s3 *cli.S3, prices string, stdout, stderr io.Writer) error {
	b, err := exportcmd.OpenBucket(ctx, s3, loc)
	if err != nil {
		return fmt.Errorf("duckdb: %w", err)
	}
	m, err := parquet.ReadBucketManifest(ctx, b)
	if err != nil {
		return fmt.Errorf("duckdb: %w", err)
	}
	if len(m.Files) == 0 {
		fmt.Fprintf(stderr, "sessionpipe: duckdb: no Parquet files listed under %s yet: the views are empty; run this again once the exporter has committed one\n", loc)
	}
	table, err := indexcmd.LoadPrices(prices)
	if err != nil {
		return err
	}
	ds := &duckdb.DuckDBS3{PathStyle: s3.PathStyle, Region: s3.Region, Profile: s3.Profile}
	if s3.Endpoint != "" {
		u, err := url.Parse(s3.Endpoint)
		if err != nil || u.Host == "" {
			return fmt.Errorf("duckdb: -s3-endpoint %q is not a URL", s3.Endpoint)
		}
		ds.Endpoint, ds.UseSSL = u.Host, u.Scheme == "https"
	}
	_, err = io.WriteString(stdout, duckdb.DuckDBScript(duckdb.ViewConfig{Dir: b.URL(), Prices: table, Manifest: true, S3: ds, Empty: len(m.Files) == 0}))
	return err
}
