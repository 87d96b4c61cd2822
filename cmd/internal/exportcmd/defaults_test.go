package exportcmd

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/app"
	"github.com/sessionpipe/sessionpipe/pipeline/export"
)

// The exporter's flag defaults, written in internal/app so that the
// tailer knows every command's flags without linking parquet-go, are the
// exporter's own.
func TestFlagDefaults(t *testing.T) {
	require.Equal(t, export.DefaultConsumerName, app.DefaultExporterConsumer)
	require.EqualValues(t, export.DefaultPartBytes, app.DefaultPartBytes)
	require.Equal(t, export.DefaultPartAge, app.DefaultPartAge)
	require.Equal(t, export.DefaultCompactMinAge, app.DefaultCompactMinAge)
	require.EqualValues(t, export.DefaultCompactTargetBytes, app.DefaultCompactTargetBytes)
	require.EqualValues(t, export.DefaultCompactMinFiles, app.DefaultCompactMinFiles)
	require.EqualValues(t, export.DefaultCompactMemoryBytes, app.DefaultCompactMemoryBytes)
	require.Equal(t, export.DefaultCompactLockTimeout, app.DefaultCompactLockTimeout)
	require.Equal(t, export.DefaultLeftoverAge, app.DefaultLeftoverAge)
}
