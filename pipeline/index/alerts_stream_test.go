package index_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/logtest"
	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
)

// The alerts stream follows the entries stream's rule: created with
// sessionpipe's settings when missing, kept as it is (the differences
// logged) when an operator changed it.
func TestEnsureAlertStream_KeepsExistingSettings(t *testing.T) {
	t.Parallel()
	srv := natstest.RunServer(t)
	js := natstest.JetStream(t, natstest.Connect(t, srv.URL()))
	ctx := t.Context()
	s, err := index.EnsureAlertStream(ctx, js, bus.StreamConfig{})
	require.NoError(t, err)
	require.Equal(t, 30*24*time.Hour, s.CachedInfo().Config.MaxAge)

	cfg := s.CachedInfo().Config
	cfg.MaxAge = 90 * 24 * time.Hour
	_, err = js.UpdateStream(ctx, cfg)
	require.NoError(t, err)
	var logs logtest.Buffer
	s, err = index.EnsureAlertStream(ctx, js, bus.StreamConfig{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	require.Equal(t, 90*24*time.Hour, s.CachedInfo().Config.MaxAge)
	require.Contains(t, logs.String(), "stream=SESSIONPIPE_ALERTS setting=max_age stream_value=2160h0m0s flag_value=720h0m0s")
	s, err = js.Stream(ctx, index.AlertStreamName(bus.DefaultStream))
	require.NoError(t, err)
	require.Equal(t, jetstream.LimitsPolicy, s.CachedInfo().Config.Retention)
}
