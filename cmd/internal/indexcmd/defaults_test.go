package indexcmd

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/app"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
)

// The indexer's flag defaults, written in internal/app so that the
// tailer knows every command's flags without linking pebble, are the
// indexer's own.
func TestFlagDefaults(t *testing.T) {
	require.Equal(t, index.DefaultConsumerName, app.DefaultIndexerConsumer)
	require.Equal(t, index.DefaultWebhookConsumer, app.DefaultWebhookConsumer)
	require.Equal(t, index.DefaultAlertMaxLag, app.DefaultAlertMaxLag)
}
