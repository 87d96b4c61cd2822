package exportcmd

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/app"
	"github.com/sessionpipe/sessionpipe/internal/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/schema"
)

// fetch GETs url and returns the status and body.
func fetch(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// waitHealth waits until url answers code with a body holding want.
func waitHealth(t *testing.T, url string, code int, want string) {
	t.Helper()
	natstest.CheckFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		if c, body := fetch(t, url); c != code || !strings.Contains(body, want) {
			return fmt.Errorf("%d %q, want %d %q", c, body, code, want)
		}
		return nil
	})
}

// The exporter's /healthz answers 503 saying why while its commits fail
// (here a file stands where a partition's directory goes, as a full disk
// fails them) and while NATS is down; 200 "ok" otherwise. It answered ok
// in both cases.
func TestStartExporter_Health(t *testing.T) {
	ns := natstest.RunServer(t)
	nc := natstest.Connect(t, ns.URL())
	b := &app.Bus{Conn: nc, JS: natstest.JetStream(t, nc)}
	n := &app.NATS{DataDir: t.TempDir()}
	_, err := bus.EnsureStream(t.Context(), b.JS, n.Stream)
	require.NoError(t, err)
	out := filepath.Join(n.DataDir, "parquet")
	require.NoError(t, os.MkdirAll(out, 0o755))
	block := filepath.Join(out, "format=pi")
	require.NoError(t, os.WriteFile(block, nil, 0o644))

	x := &app.Exporter{Metrics: "127.0.0.1:0", NoArchive: true, PartAge: 10 * time.Millisecond, LeaseTTL: 2 * time.Second}
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
	waitHealth(t, health, http.StatusOK, "ok")

	e := schema.Entry{Format: schema.FormatPi, Host: "host-a", Path: "/home/u/.pi/s.jsonl", Line: 1, SessionID: "s", EntryID: "e1",
		Kind: schema.KindMessage, Role: schema.RoleUser, Text: "hello", TS: time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)}
	_, err = b.JS.PublishMsg(t.Context(), bus.EntryMsg(n.Stream.WithDefaults().Prefix, &e, nil))
	require.NoError(t, err)
	waitHealth(t, health, http.StatusServiceUnavailable, "commits failed in a row")
	_, body := fetch(t, health)
	require.Contains(t, body, "format=pi", "the body says what fails")

	require.NoError(t, os.Remove(block))
	waitHealth(t, health, http.StatusOK, "ok")

	ns.Stop()
	waitHealth(t, health, http.StatusServiceUnavailable, "failing: nats: ")
	ns.Start(t)
	waitHealth(t, health, http.StatusOK, "ok")

	code, metrics := fetch(t, "http://"+re.Metrics.Addr()+"/metrics")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, metrics, "\nsessionpipe_http_connections ", "the server's connections are in the metrics")
	require.Contains(t, metrics, "sessionpipe_export_commit_errors_total ")
}
