package exportcmd

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/export"
)

// The exporter's flag defaults, written in internal/cli so that the
// tailer knows every command's flags without linking parquet-go, are the
// exporter's own.
func TestFlagDefaults(t *testing.T) {
	require.Equal(t, export.DefaultConsumerName, cli.DefaultExporterConsumer)
	require.EqualValues(t, export.DefaultPartBytes, cli.DefaultPartBytes)
	require.Equal(t, export.DefaultPartAge, cli.DefaultPartAge)
	require.Equal(t, export.DefaultCompactMinAge, cli.DefaultCompactMinAge)
	require.EqualValues(t, export.DefaultCompactTargetBytes, cli.DefaultCompactTargetBytes)
	require.EqualValues(t, export.DefaultCompactMinFiles, cli.DefaultCompactMinFiles)
	require.EqualValues(t, export.DefaultCompactMemoryBytes, cli.DefaultCompactMemoryBytes)
	require.Equal(t, export.DefaultCompactLockTimeout, cli.DefaultCompactLockTimeout)
	require.Equal(t, export.DefaultLeftoverAge, cli.DefaultLeftoverAge)
}
