// Command gencorpus writes a synthetic tree of agent session transcripts
// for end-to-end benchmarks of the tailer, in the agents' on-disk layouts
// (see package corpusgen):
//
//	go run ./benchmarks/cmd/gencorpus -format claude|pi|codex|mixed -size 1GB -out DIR [-seed N]
//
// Sizes take the suffixes B, KB, MB, GB (binary multiples: 1 KB = 1024 B;
// KiB, MiB, GiB are accepted too). Progress goes to stderr; the same seed
// gives the same files.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/testutil/corpusgen"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "gencorpus:", err)
		}
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("gencorpus", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "mixed", "claude, pi, codex or mixed (80% Claude, 10% pi, 10% Codex bytes)")
	size := fs.String("size", "1GB", "total size of the files, e.g. 64MB, 1GB")
	out := fs.String("out", "", "output directory (required)")
	seed := fs.Uint64("seed", 1, "random seed; the same seed gives the same files")
	if err := fs.Parse(args); err != nil {
		return err
	}
	n, err := parseSize(*size)
	if err != nil {
		return err
	}
	start := time.Now()
	last := start
	cfg := corpusgen.TreeConfig{
		Dir:    *out,
		Format: corpusgen.Mix(*format),
		Bytes:  n,
		Seed:   *seed,
		Progress: func(st corpusgen.TreeStats) {
			if now := time.Now(); now.Sub(last) >= time.Second {
				last = now
				report(stderr, st, n, now.Sub(start))
			}
		},
	}
	st, err := corpusgen.WriteTree(ctx, cfg)
	report(stderr, st, n, time.Since(start))
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "gencorpus: done: %d sessions (%d resumed copies), %d files, %d lines in %s\n",
		st.Sessions, st.Resumed, st.Files, st.Lines, *out)
	return nil
}

func report(w io.Writer, st corpusgen.TreeStats, target int64, elapsed time.Duration) {
	mb := float64(st.Bytes) / (1 << 20)
	fmt.Fprintf(w, "gencorpus: %.1f MB / %.1f MB (%.0f%%), %d sessions, %d files, %.0f MB/s\n",
		mb, float64(target)/(1<<20), 100*float64(st.Bytes)/float64(target), st.Sessions, st.Files,
		mb/max(elapsed.Seconds(), 1e-9))
}

// parseSize parses "1GB", "64MB", "512KiB", "1000" into bytes.
func parseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GIB", 1 << 30}, {"MIB", 1 << 20}, {"KIB", 1 << 10}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10},
		{"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f <= 0 {
		return 0, fmt.Errorf("invalid -size %q: want a positive size such as 64MB or 1GB", s)
	}
	return int64(f * float64(mult)), nil
}
