package parse_test

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
)

func TestConfig_Log(t *testing.T) {
	t.Run("NilDiscards", func(t *testing.T) {
		log := parse.Config{}.Log("claude")
		require.NotNil(t, log)
		require.False(t, log.Enabled(t.Context(), slog.LevelError))
	})
	t.Run("NamesTheComponent", func(t *testing.T) {
		var buf bytes.Buffer
		h := slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})
		parse.Config{Logger: slog.New(h)}.Log("pi").Debug("unknown entry type")
		require.Contains(t, buf.String(), `msg="unknown entry type" component=pi`)
	})
}
