package indexcmd

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/app"
	"github.com/sessionpipe/sessionpipe/internal/natstest"
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

// The indexer's API serves its server's connection metrics, and without
// a token refuses a Host that is not loopback.
func TestStartIndexer_ServerMetricsAndHostCheck(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	n := &app.NATS{DataDir: t.TempDir(), Port: -1}
	b, err := n.Connect(t.Context(), "indexer", log)
	require.NoError(t, err)
	t.Cleanup(func() { b.Close(context.WithoutCancel(t.Context())) })
	ri, err := StartIndexer(&app.Indexer{HTTP: "127.0.0.1:0", Name: "indexer"}, n, b, log)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan error, 1)
	go func() { done <- ri.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	base := "http://" + ri.API.Addr()
	waitHealth(t, base+"/healthz", http.StatusOK, `"status":"ok"`)
	code, metrics := fetch(t, base+"/metrics")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, metrics, "\nsessionpipe_http_connections ")
	require.Contains(t, metrics, "sessionpipe_index_applied_seq ")

	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/api/sessions", nil)
	require.NoError(t, err)
	req.Host = "attacker.example"
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMisdirectedRequest, resp.StatusCode)
}
