package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The tailer runs on every agent host: its binary links neither the
// indexer's store (pebble) nor the exporter's Parquet writer and DuckDB
// views, nor the exporter's S3 client. The command layer it shares with
// the others (internal/cli) must not import them: their wiring lives in
// cmd/internal/indexcmd, cmd/internal/exportcmd and cmd/internal/doctor.
func TestTailer_LinksNoIndexerOrExporter(t *testing.T) {
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.CommandContext(t.Context(), goBin, "list", "-deps", ".").CombinedOutput()
	require.NoError(t, err, "go list -deps: %s", out)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/sessionpipe/sessionpipe/pipeline/tail", "the list is the tailer's")
	for _, banned := range []string{
		"github.com/cockroachdb/pebble",
		"github.com/parquet-go/parquet-go",
		"github.com/marcboeker/go-duckdb",
		"github.com/duckdb/",
		"github.com/aws/aws-sdk-go-v2/service/s3",
		"github.com/sessionpipe/sessionpipe/pipeline/index",
		"github.com/sessionpipe/sessionpipe/pipeline/export",
	} {
		for _, d := range deps {
			require.False(t, strings.HasPrefix(d, banned), "the tailer links %s (through %s): go list -deps ./cmd/tailer", d, banned)
		}
	}
}
