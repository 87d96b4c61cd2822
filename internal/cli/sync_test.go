package cli

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
)

func TestSync_Set(t *testing.T) {
	tests := []struct {
		name, in string
		want     Sync
		wantErr  bool
	}{
		{"Always", "always", Sync{Interval: bus.DefaultEmbeddedSyncInterval, Always: true}, false},
		{"AlwaysAnyCase", "Always", Sync{Interval: bus.DefaultEmbeddedSyncInterval, Always: true}, false},
		{"Interval", "10s", Sync{Interval: 10 * time.Second}, false},
		{"Zero", "0", Sync{}, true},
		{"Negative", "-1s", Sync{}, true},
		{"Word", "never", Sync{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Sync
			err := s.Set(tt.in)
			if tt.wantErr {
				require.Error(t, err, "Set(%q)", tt.in)
				return
			}
			require.NoError(t, err, "Set(%q)", tt.in)
			require.Equal(t, tt.want, s, "Set(%q)", tt.in)
		})
	}
}

// -sync comes from the flag, SESSIONPIPE_SYNC or the config file like any
// flag; its default is nats-server's.
func TestParseFlags_Sync(t *testing.T) {
	r, cfg, err := parseRun(t, nil)
	require.NoError(t, err)
	require.Equal(t, Sync{Interval: bus.DefaultEmbeddedSyncInterval}, r.NATS.Sync)
	require.Equal(t, "2m0s", cfg.Lookup("sync").Value)

	r, cfg, err = parseRun(t, map[string]string{"SESSIONPIPE_SYNC": "always"})
	require.NoError(t, err)
	require.True(t, r.NATS.Sync.Always)
	require.Equal(t, "env SESSIONPIPE_SYNC", cfg.Lookup("sync").Source.String())

	r, _, err = parseRun(t, map[string]string{"SESSIONPIPE_CONFIG": writeConfig(t, "run:\n  sync: 30s\n")})
	require.NoError(t, err)
	require.Equal(t, Sync{Interval: 30 * time.Second}, r.NATS.Sync)

	_, _, err = parseRun(t, map[string]string{"SESSIONPIPE_SYNC": "sometimes"})
	require.ErrorContains(t, err, "SESSIONPIPE_SYNC")
}

// The embedded server `run` starts with -sync always syncs every write, as
// the server itself reports.
func TestNATS_ConnectSync(t *testing.T) {
	r, _, err := parseRun(t, nil, "-data-dir", t.TempDir(), "-nats-port", "-1", "-sync", "always")
	require.NoError(t, err)
	b, err := r.NATS.Connect(t.Context(), "test", slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close(context.WithoutCancel(t.Context())) })
	require.NotNil(t, b.Embedded)
	interval, always := b.Embedded.Sync()
	require.True(t, always)
	require.Equal(t, bus.DefaultEmbeddedSyncInterval, interval)
}
