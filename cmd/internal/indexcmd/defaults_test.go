package indexcmd

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
)

// The indexer's flag defaults, written in internal/cli so that the
// tailer knows every command's flags without linking pebble, are the
// indexer's own.
func TestFlagDefaults(t *testing.T) {
	require.Equal(t, index.DefaultConsumerName, cli.DefaultIndexerConsumer)
	require.Equal(t, index.DefaultWebhookConsumer, cli.DefaultWebhookConsumer)
	require.Equal(t, index.DefaultAlertMaxLag, cli.DefaultAlertMaxLag)
}
