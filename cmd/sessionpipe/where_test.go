package main

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/cmd/internal/exportcmd"
	"github.com/sessionpipe/sessionpipe/cmd/internal/indexcmd"
	"github.com/sessionpipe/sessionpipe/internal/cli"
)

// run says at start where everything is: what it watches, the dashboard
// and the API, the Parquet and the archive, and the DuckDB one-liner,
// with paths quoted for a shell.
func TestPrintWhere(t *testing.T) {
	srv, err := cli.Listen("127.0.0.1:0", http.NotFoundHandler())
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		require.NoError(t, srv.Run(ctx)) // serves, then shuts down at once: the port is closed
	})
	var b bytes.Buffer
	printWhere(&b,
		&cli.RunningTailer{Watch: []string{"/home/a/.claude/projects/**/*.jsonl", "/srv/agents"}},
		&indexcmd.RunningIndexer{API: srv},
		&exportcmd.RunningExporter{Out: "/data/my parquet", Archive: "/data/archive"})
	out := b.String()
	api := "http://" + srv.Addr()
	self := selfCommand() // the test binary's path here: see TestRun_BannerCommandName
	for _, want := range []string{
		"watching  /home/a/.claude/projects/**/*.jsonl\n",
		"          /srv/agents\n",
		"dashboard " + api + "/  (in a terminal: " + self + " top -api " + api + ")\n",
		"API       " + api + "/api/sessions",
		"Parquet   /data/my parquet\n",
		"archive   /data/archive  (" + self + " restore -archive /data/archive -out DIR)\n",
		"DuckDB    duckdb -init <(" + self + " duckdb '/data/my parquet')\n",
	} {
		require.Contains(t, out, want)
	}

	// Without an API (-http ""), nothing points at one.
	b.Reset()
	printWhere(&b, &cli.RunningTailer{Watch: []string{"/w"}}, &indexcmd.RunningIndexer{}, &exportcmd.RunningExporter{Out: "/p"})
	require.False(t, strings.Contains(b.String(), "http://"), b.String())
	require.NotContains(t, b.String(), "archive ")
}
