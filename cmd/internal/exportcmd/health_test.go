package exportcmd

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/internal/testutil/webtest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/schema"
)

// The exporter's /healthz answers 503 saying why while its commits fail
// (here a file stands where a partition's directory goes, as a full disk
// fails them) and while NATS is down; 200 "ok" otherwise. It answered ok
// in both cases.
func TestStartExporter_Health(t *testing.T) {
	ns := natstest.RunServer(t)
	nc := natstest.Connect(t, ns.URL())
	b := &cli.Bus{Conn: nc, JS: natstest.JetStream(t, nc)}
	n := &cli.NATS{DataDir: t.TempDir()}
	_, err := bus.EnsureStream(t.Context(), b.JS, n.Stream)
	require.NoError(t, err)
	out := filepath.Join(n.DataDir, "parquet")
	require.NoError(t, os.MkdirAll(out, 0o755))
	block := filepath.Join(out, "format=pi")
	require.NoError(t, os.WriteFile(block, nil, 0o644))

	x := &cli.Exporter{Metrics: "127.0.0.1:0", NoArchive: true, PartAge: 10 * time.Millisecond, LeaseTTL: 2 * time.Second}
	re, err := StartExporter(x, n, b, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan error, 1)
	go func() { done <- re.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	health := "http://" + re.Metrics.Addr() + "/healthz"
	webtest.WaitFor(t, health, http.StatusOK, "ok")

	e := schema.Entry{Format: schema.FormatPi, Host: "host-a", Path: "/home/u/.pi/s.jsonl", Line: 1, SessionID: "s", EntryID: "e1",
		Kind: schema.KindMessage, Role: schema.RoleUser, Text: "hello", TS: time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)}
	_, err = b.JS.PublishMsg(t.Context(), bus.EntryMsg(n.Stream.WithDefaults().Prefix, &e, nil))
	require.NoError(t, err)
	webtest.WaitFor(t, health, http.StatusServiceUnavailable, "commits failed in a row")
	_, body := webtest.Get(t, health)
	require.Contains(t, body, "format=pi", "the body says what fails")

	require.NoError(t, os.Remove(block))
	webtest.WaitFor(t, health, http.StatusOK, "ok")

	ns.Stop()
	webtest.WaitFor(t, health, http.StatusServiceUnavailable, "failing: nats: ")
	ns.Start(t)
	webtest.WaitFor(t, health, http.StatusOK, "ok")

	code, metrics := webtest.Get(t, "http://"+re.Metrics.Addr()+"/metrics")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, metrics, "\nsessionpipe_http_connections ", "the server's connections are in the metrics")
	require.Contains(t, metrics, "sessionpipe_export_commit_errors_total ")
}
