package exportcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"

	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/export"
	"github.com/sessionpipe/sessionpipe/pipeline/export/archive"
	"github.com/sessionpipe/sessionpipe/pipeline/export/objstore"
	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
	"github.com/sessionpipe/sessionpipe/pipeline/redact"
	"github.com/sessionpipe/sessionpipe/pipeline/tail"
)

// OfflineExport is what `sessionpipe export` does: files to Parquet and
// the archive with no server to run, through the very path a live
// deployment takes (the tailer, a stream, the exporter), on a temporary
// embedded JetStream server whose sequences continue those of the output.
type OfflineExport struct {
	Paths        []string
	Out          string
	Archive      string // "" with NoArchive
	Host         string
	Content      redact.Mode
	PartBytes    int64
	ArchiveLevel cli.ArchiveLevel // "": the archive's default
	MaxLineBytes int
	Temp         string // where the temporary stream lives; "" the system's
	// S3 configures Out and Archive given as s3://bucket/prefix; nil
	// takes the SDK's defaults.
	S3 *cli.S3
}

// OfflineResult sums up an offline export.
type OfflineResult struct {
	Tail   tail.Snapshot
	Export export.ExporterStats
	Took   time.Duration
}

// DefaultOfflineArchive is the archive directory of an offline export to
// out when none is given: beside it, never inside (a Parquet directory
// holds Parquet only).
func DefaultOfflineArchive(out string) string {
	if objstore.IsURL(out) {
		return strings.TrimRight(out, "/") + "-archive"
	}
	out = filepath.Clean(out)
	return filepath.Join(filepath.Dir(out), filepath.Base(out)+"-archive")
}

// Run exports the files; progress, when not nil, gets a progress line
// every half second.
func (o *OfflineExport) Run(ctx context.Context, log *slog.Logger, progress io.Writer) (OfflineResult, error) {
	start := time.Now()
	if o.Out == "" {
		return OfflineResult{}, errors.New("no output directory")
	}
	if o.Archive != "" && filepath.Clean(o.Archive) == filepath.Clean(o.Out) {
		return OfflineResult{}, fmt.Errorf("the output and the archive are the same directory %s", o.Out)
	}
	pc, ac, err := Outputs(ctx, o.S3, o.Out, o.Archive)
	if err != nil {
		return OfflineResult{}, err
	}
	level, err := ArchiveLevel(o.ArchiveLevel)
	if err != nil {
		return OfflineResult{}, err
	}
	high, err := export.HighestSeqOf(ctx, pc, ac)
	if err != nil {
		return OfflineResult{}, err
	}
	tmp, err := os.MkdirTemp(o.Temp, "sessionpipe-export-")
	if err != nil {
		return OfflineResult{}, err
	}
	defer os.RemoveAll(tmp)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := cli.NATS{DataDir: tmp, Port: -1, Stream: bus.StreamConfig{FirstSeq: high + 1}}
	b, err := n.Connect(ctx, "sessionpipe-export", log)
	if err != nil {
		return OfflineResult{}, err
	}
	defer b.Close(context.WithoutCancel(ctx))

	t := cli.Tailer{
		Watch: o.Paths, Static: true, StateDir: filepath.Join(tmp, "tailer"), Host: o.Host,
		Content: o.Content, Archive: o.Archive != "", MaxLineBytes: o.MaxLineBytes,
		MaxOpenFiles: tail.DefaultMaxOpenFiles, Rescan: tail.DefaultRescanInterval, Drain: time.Minute,
	}
	rt, err := cli.StartTailer(ctx, &t, &n, b, func(string) string { return "" }, log, nil)
	if err != nil {
		return OfflineResult{}, err
	}
	ex, err := export.NewExporter(export.ExporterConfig{
		JS: b.JS, Stream: n.Stream, Offline: true, Logger: log, CommitInterval: time.Second,
		CatchUpCommit: -1,   // one commit at the end (CommitNow), not one per catch-up
		PurgeArchived: true, // the temporary stream holds the original lines only until archived
		Parquet:       parquet.Config{Dir: o.Out, PartBytes: o.PartBytes, WriterVersion: "sessionpipe " + cli.Version(), Bucket: pc.Bucket, SpoolDir: pc.SpoolDir},
		Archive:       archive.ArchiveConfig{Dir: o.Archive, Bucket: ac.Bucket, Level: level},
	})
	if err != nil {
		return OfflineResult{}, err
	}

	// As in run: a stage that fails stops the other and the export.
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return rt.Run(gctx) })
	g.Go(func() error { return ex.Run(gctx) })
	var wg sync.WaitGroup
	if progress != nil {
		wg.Go(func() { offlineProgress(gctx, rt.Tailer, ex, progress) })
	}
	err = waitExported(gctx, rt, ex, b, n.Stream.WithDefaults().Name)
	cancel()
	gerr := g.Wait()
	wg.Wait()
	res := OfflineResult{Tail: rt.Tailer.Metrics().Snapshot(), Export: ex.Stats(), Took: time.Since(start)}
	if gerr != nil {
		return res, gerr // a stage's failure, not the wait it ended
	}
	return res, err
}

// waitExported waits until the tailer published every file and the
// exporter committed every message of the stream.
func waitExported(ctx context.Context, rt *cli.RunningTailer, ex *export.Exporter, b *cli.Bus, stream string) error {
	s, err := b.JS.Stream(ctx, stream)
	if err != nil {
		return err
	}
	return WaitSettled(ctx, rt, func(ctx context.Context) (bool, error) { return Exported(ctx, s, ex) })
}

// WaitSettled waits until the tailer has published everything it found
// (idle, nothing in flight) and caughtUp reports that the consumers have
// taken all of it, twice in a row 50 ms apart: nothing was on its way in
// between. caughtUp's errors are retried until ctx ends.
func WaitSettled(ctx context.Context, rt *cli.RunningTailer, caughtUp func(ctx context.Context) (bool, error)) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	quiet := 0
	for {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-tick.C:
		}
		if !rt.Tailer.Idle() || rt.Publisher.Stats().InFlight > 0 {
			quiet = 0
			continue
		}
		if ok, err := caughtUp(ctx); err != nil || !ok {
			quiet = 0
			continue
		}
		if quiet++; quiet >= 2 {
			return nil
		}
	}
}

// Exported reports whether ex has committed every message of the stream
// s, and asks it to commit its open files when it has not (files close by
// age otherwise).
func Exported(ctx context.Context, s jetstream.Stream, ex *export.Exporter) (bool, error) {
	info, err := s.Info(ctx)
	if err != nil {
		return false, err
	}
	if ex.Stats().Committed < info.State.LastSeq {
		ex.CommitNow()
		return false, nil
	}
	return true, nil
}

// offlineProgress prints what was read and exported, every half second,
// on one terminal line.
func offlineProgress(ctx context.Context, tl *tail.Tailer, ex *export.Exporter, w io.Writer) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fmt.Fprint(w, "\r\033[K")
			return
		case <-t.C:
			s, e := tl.Metrics().Snapshot(), ex.Stats()
			fmt.Fprintf(w, "\r\033[K%s, %s read, %s entries published, %s rows in %s",
				cli.Count(s.Files, "file"), cli.HumanBytes(s.Bytes), cli.Thousands(s.AckedEntries), cli.Thousands(e.Rows), cli.Count(e.Files, "Parquet file"))
		}
	}
}
