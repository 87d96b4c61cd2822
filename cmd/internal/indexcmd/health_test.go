package indexcmd

import (
	"context"
	"log/slog"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/internal/testutil/webtest"
)

// The indexer's API serves its server's connection metrics, and without
// a token refuses a Host that is not loopback.
func TestStartIndexer_ServerMetricsAndHostCheck(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	n := &cli.NATS{DataDir: t.TempDir(), Port: -1}
	b, err := n.Connect(t.Context(), "indexer", log)
	require.NoError(t, err)
	t.Cleanup(func() { b.Close(context.WithoutCancel(t.Context())) })
	ri, err := StartIndexer(&cli.Indexer{HTTP: "127.0.0.1:0", Name: "indexer"}, n, b, log)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan error, 1)
	go func() { done <- ri.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	base := "http://" + ri.API.Addr()
	webtest.WaitFor(t, base+"/healthz", http.StatusOK, `"status":"ok"`)
	code, metrics := webtest.Get(t, base+"/metrics")
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
