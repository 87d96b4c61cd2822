package exportcmd

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/export"
	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
)

// The exporter's flag defaults, written in internal/cli so that the
// tailer knows every command's flags without linking parquet-go, are the
// exporter's own.
func TestFlagDefaults(t *testing.T) {
	require.Equal(t, export.DefaultConsumerName, cli.DefaultExporterConsumer)
	require.EqualValues(t, parquet.DefaultPartBytes, cli.DefaultPartBytes)
	require.Equal(t, parquet.DefaultPartAge, cli.DefaultPartAge)
	require.Equal(t, parquet.DefaultCompactMinAge, cli.DefaultCompactMinAge)
	require.EqualValues(t, parquet.DefaultCompactTargetBytes, cli.DefaultCompactTargetBytes)
	require.EqualValues(t, parquet.DefaultCompactMinFiles, cli.DefaultCompactMinFiles)
	require.EqualValues(t, parquet.DefaultCompactMemoryBytes, cli.DefaultCompactMemoryBytes)
	require.Equal(t, parquet.DefaultCompactLockTimeout, cli.DefaultCompactLockTimeout)
	require.Equal(t, parquet.DefaultLeftoverAge, cli.DefaultLeftoverAge)
}
