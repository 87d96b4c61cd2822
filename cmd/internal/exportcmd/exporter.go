package exportcmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/nats-io/nats.go"

	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/export"
	"github.com/sessionpipe/sessionpipe/pipeline/export/archive"
	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
)

// RunningExporter is an exporter wired to its metrics endpoint.
type RunningExporter struct {
	Exporter *export.Exporter
	Metrics  *cli.Server // nil without -metrics
	Out      string
	Archive  string
}

// StartExporter builds the exporter the flags describe on the bus b.
func StartExporter(x *cli.Exporter, n *cli.NATS, b *cli.Bus, log *slog.Logger) (*RunningExporter, error) {
	if x.MemoryLimit > 0 {
		cli.SetMemoryLimit(x.MemoryLimit<<20, 0)
	}
	out, arch := x.Dirs(n.DataDir)
	if out == arch {
		return nil, fmt.Errorf("-out and -archive-dir are the same directory %s", out)
	}
	pc, ac, err := Outputs(context.Background(), &x.S3, out, arch)
	if err != nil {
		return nil, err
	}
	reg := x.Registry
	if reg == nil {
		reg = cli.NewRegistry()
	}
	pc.PartBytes, pc.PartAge, pc.WriterVersion = x.PartBytes, x.PartAge, "sessionpipe "+cli.Version()
	buffers(x, &pc, &ac)
	if ac.Level, err = ArchiveLevel(x.ArchiveLevel); err != nil {
		return nil, err
	}
	ex, err := export.NewExporter(export.ExporterConfig{
		JS: b.JS, Stream: n.Stream, Name: x.Name, LeaseTTL: x.LeaseTTL, Logger: log,
		Parquet: pc, Archive: ac, Registry: reg, PurgeArchived: x.PurgeArchived,
	})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", cli.MetricsHandler(reg, log))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		code, msg := exporterHealth(ex, b.Conn)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(code)
		fmt.Fprintln(w, msg)
	})
	srv, err := cli.ListenWithMetrics(x.Metrics, mux, reg)
	if err != nil {
		return nil, err
	}
	if srv != nil {
		log.Info("exporter metrics", "url", "http://"+srv.Addr()+"/metrics")
	}
	return &RunningExporter{Exporter: ex, Metrics: srv, Out: out, Archive: arch}, nil
}

// buffers applies the flags' memory for buffered rows and archive frames
// (`sessionpipe run`'s smaller ones) to the writers' configurations; 0
// leaves the packages' defaults. The rows' budget is never below the part
// size the writer will use (-part-bytes 0 is the writer's default).
func buffers(x *cli.Exporter, pc *parquet.Config, ac *archive.ArchiveConfig) {
	if x.ParquetMemoryBytes > 0 {
		part := pc.PartBytes
		if part == 0 {
			part = parquet.DefaultPartBytes
		}
		pc.MemoryBytes = max(x.ParquetMemoryBytes, part)
	}
	if x.ArchiveMemoryBytes > 0 {
		ac.MemoryBytes = x.ArchiveMemoryBytes
		ac.SegmentBytes = min(archive.DefaultSegmentBytes, ac.MemoryBytes)
	}
}

// ArchiveLevel is the zstd level of the archive named by l ("": the
// archive's default).
func ArchiveLevel(l cli.ArchiveLevel) (zstd.EncoderLevel, error) {
	if l == "" {
		return 0, nil
	}
	ok, level := zstd.EncoderLevelFromString(string(l))
	if !ok {
		return 0, fmt.Errorf("-archive-level %q: not a level (fastest, default, better or best)", l)
	}
	return level, nil
}

// exporterHealth is the answer of the exporter's /healthz: 503 saying
// why while NATS is disconnected or its commits fail (a full disk), 200
// "ok" or "standing by" otherwise.
func exporterHealth(ex *export.Exporter, nc *nats.Conn) (int, string) {
	var problems []string
	if nc != nil && nc.Status() != nats.CONNECTED {
		problems = append(problems, "nats: "+strings.ToLower(nc.Status().String()))
	}
	if err := ex.Health().Err(); err != nil {
		problems = append(problems, err.Error())
	}
	switch {
	case len(problems) > 0:
		return http.StatusServiceUnavailable, "failing: " + strings.Join(problems, "; ")
	case !ex.Stats().Active:
		return http.StatusOK, "standing by"
	}
	return http.StatusOK, "ok"
}

// Run exports until ctx ends, then commits what is open.
func (re *RunningExporter) Run(ctx context.Context) error {
	sctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	var serveErr error
	wg.Go(func() { serveErr = re.Metrics.Run(sctx) })
	err := re.Exporter.Run(ctx)
	stop()
	wg.Wait()
	return errors.Join(err, serveErr)
}
