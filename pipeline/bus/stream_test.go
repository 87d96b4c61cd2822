package bus_test

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
)

func TestStreamConfig_Validate(t *testing.T) {
	tests := []struct {
		name  string
		cfg   bus.StreamConfig
		field string // "" when valid
	}{
		{"Zero", bus.StreamConfig{}, ""},
		{"Full", bus.StreamConfig{Name: "SP", Prefix: "sp.prod", Replicas: 3, DuplicateWindow: time.Hour, MaxAge: 24 * time.Hour, MaxBytes: 1 << 30, Storage: jetstream.MemoryStorage}, ""},
		{"NameWithDot", bus.StreamConfig{Name: "A.B"}, "stream"},
		{"NameWithSpace", bus.StreamConfig{Name: "A B"}, "stream"},
		{"NameWithSlash", bus.StreamConfig{Name: "A/B"}, "stream"},
		{"PrefixWildcard", bus.StreamConfig{Prefix: "sp.*"}, "subject_prefix"},
		{"PrefixEmptyToken", bus.StreamConfig{Prefix: "sp..x"}, "subject_prefix"},
		{"PrefixTrailingDot", bus.StreamConfig{Prefix: "sp."}, "subject_prefix"},
		{"PrefixSpace", bus.StreamConfig{Prefix: "s p"}, "subject_prefix"},
		{"ReplicasNegative", bus.StreamConfig{Replicas: -1}, "replicas"},
		{"ReplicasTooMany", bus.StreamConfig{Replicas: 6}, "replicas"},
		{"WindowNegative", bus.StreamConfig{DuplicateWindow: -time.Second}, "duplicate_window"},
		{"WindowOverMaxAge", bus.StreamConfig{DuplicateWindow: 2 * time.Hour, MaxAge: time.Hour}, "duplicate_window"},
		{"MaxAgeNegative", bus.StreamConfig{MaxAge: -1}, "max_age"},
		{"MaxBytesNegative", bus.StreamConfig{MaxBytes: -1}, "max_bytes"},
		{"StorageUnknown", bus.StreamConfig{Storage: 7}, "storage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireConfigError(t, tt.cfg.Validate(), tt.field)
		})
	}
}

func TestEnsureStream_DefaultsAndIdempotent(t *testing.T) {
	srv := natstest.RunServer(t)
	js := natstest.JetStream(t, natstest.Connect(t, srv.URL()))
	ctx := t.Context()

	st, err := bus.EnsureStream(ctx, js, bus.StreamConfig{})
	require.NoError(t, err)
	info, err := st.Info(ctx)
	require.NoError(t, err)
	created := info.Created
	cfg := info.Config
	assert.Equal(t, bus.DefaultStream, cfg.Name)
	assert.Equal(t, []string{"sessionpipe.entries.>", "sessionpipe.dead.>", "sessionpipe.raw.>"}, cfg.Subjects)
	assert.Equal(t, bus.DefaultDuplicateWindow, cfg.Duplicates)
	assert.Equal(t, 1, cfg.Replicas)
	assert.Equal(t, jetstream.FileStorage, cfg.Storage)
	assert.Equal(t, int64(-1), cfg.MaxBytes)
	assert.Zero(t, cfg.MaxAge)

	_, err = js.Publish(ctx, "sessionpipe.entries.h.f", []byte("{}"))
	require.NoError(t, err)

	// Again, with the same config: nothing changes, nothing is lost.
	st, err = bus.EnsureStream(ctx, js, bus.StreamConfig{})
	require.NoError(t, err)
	info, err = st.Info(ctx)
	require.NoError(t, err)
	assert.Equal(t, created, info.Created)
	assert.Equal(t, uint64(1), info.State.Msgs)

	names := js.StreamNames(ctx)
	var all []string
	for n := range names.Name() {
		all = append(all, n)
	}
	require.NoError(t, names.Err())
	assert.Equal(t, []string{bus.DefaultStream}, all)
}

func TestEnsureStream_UpdatesOnConfigChange(t *testing.T) {
	srv := natstest.RunServer(t)
	js := natstest.JetStream(t, natstest.Connect(t, srv.URL()))
	ctx := t.Context()

	_, err := bus.EnsureStream(ctx, js, bus.StreamConfig{Prefix: "sp"})
	require.NoError(t, err)
	_, err = js.Publish(ctx, "sp.dead.h", []byte("{}"))
	require.NoError(t, err)

	st, err := bus.EnsureStream(ctx, js, bus.StreamConfig{Prefix: "sp", DuplicateWindow: 10 * time.Minute, MaxAge: 48 * time.Hour, MaxBytes: 1 << 30})
	require.NoError(t, err)
	info, err := st.Info(ctx)
	require.NoError(t, err)
	assert.Equal(t, 10*time.Minute, info.Config.Duplicates)
	assert.Equal(t, 48*time.Hour, info.Config.MaxAge)
	assert.Equal(t, int64(1<<30), info.Config.MaxBytes)
	assert.Equal(t, uint64(1), info.State.Msgs, "update keeps messages")

	// A shorter max age brings the default window down with it.
	st, err = bus.EnsureStream(ctx, js, bus.StreamConfig{Prefix: "sp", MaxAge: 30 * time.Minute})
	require.NoError(t, err)
	info, err = st.Info(ctx)
	require.NoError(t, err)
	assert.Equal(t, 30*time.Minute, info.Config.Duplicates)

	// A new prefix changes the subjects.
	st, err = bus.EnsureStream(ctx, js, bus.StreamConfig{Prefix: "sp2"})
	require.NoError(t, err)
	info, err = st.Info(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"sp2.entries.>", "sp2.dead.>", "sp2.raw.>"}, info.Config.Subjects)
}

func TestEnsureStream_Errors(t *testing.T) {
	srv := natstest.RunServer(t)
	js := natstest.JetStream(t, natstest.Connect(t, srv.URL()))
	ctx := t.Context()

	_, err := bus.EnsureStream(ctx, js, bus.StreamConfig{Replicas: 9})
	require.ErrorIs(t, err, bus.ErrInvalidConfig)

	// Storage cannot change in place: the server says so.
	_, err = bus.EnsureStream(ctx, js, bus.StreamConfig{})
	require.NoError(t, err)
	_, err = bus.EnsureStream(ctx, js, bus.StreamConfig{Storage: jetstream.MemoryStorage})
	var apiErr *jetstream.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, jetstream.ErrorCode(10052), apiErr.ErrorCode, "want JSStreamUpdateErr, got %v", apiErr)
}

// Sources an operator put on the stream (a hub sourcing leaf nodes'
// streams) survive a daemon's EnsureStream at start.
func TestEnsureStream_KeepsSources(t *testing.T) {
	srv := natstest.RunServer(t)
	js := natstest.JetStream(t, natstest.Connect(t, srv.URL()))
	_, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "LEAF_A", Subjects: []string{"leafa.>"}})
	require.NoError(t, err)
	s, err := bus.EnsureStream(t.Context(), js, bus.StreamConfig{})
	require.NoError(t, err)
	cfg := s.CachedInfo().Config
	cfg.Sources = []*jetstream.StreamSource{{Name: "LEAF_A"}}
	_, err = js.UpdateStream(t.Context(), cfg)
	require.NoError(t, err)

	s, err = bus.EnsureStream(t.Context(), js, bus.StreamConfig{MaxAge: time.Hour})
	require.NoError(t, err)
	require.Len(t, s.CachedInfo().Config.Sources, 1)
	require.Equal(t, "LEAF_A", s.CachedInfo().Config.Sources[0].Name)
	require.Equal(t, time.Hour, s.CachedInfo().Config.MaxAge, "sessionpipe's settings are applied")
}
