package bus_test

import (
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/logtest"
	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
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

// A process that finds the stream keeps its settings, whatever its own
// flags say, and logs each one that differs; the last process to start
// does not win (a 2 s max age from one daemon's flags emptied the
// stream, another's defaults set it back to forever).
func TestEnsureStream_KeepsExistingSettings(t *testing.T) {
	srv := natstest.RunServer(t)
	js := natstest.JetStream(t, natstest.Connect(t, srv.URL()))
	ctx := t.Context()

	st, err := bus.EnsureStream(ctx, js, bus.StreamConfig{Prefix: "sp", MaxAge: 3 * time.Hour})
	require.NoError(t, err)
	created := st.CachedInfo().Created
	for i := range 17 {
		_, err = js.Publish(ctx, "sp.dead.h", []byte("{}"), jetstream.WithMsgID(strconv.Itoa(i)))
		require.NoError(t, err)
	}

	var logs logtest.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	st, err = bus.EnsureStream(ctx, js, bus.StreamConfig{Prefix: "sp", MaxAge: 2 * time.Second, DuplicateWindow: time.Second, MaxBytes: 1 << 30, Logger: log})
	require.NoError(t, err)
	info, err := st.Info(ctx)
	require.NoError(t, err)
	assert.Equal(t, created, info.Created)
	assert.Equal(t, 3*time.Hour, info.Config.MaxAge, "the stream's max age stays")
	assert.Equal(t, bus.DefaultDuplicateWindow, info.Config.Duplicates, "the stream's window stays")
	assert.Equal(t, int64(-1), info.Config.MaxBytes)
	assert.Equal(t, uint64(17), info.State.Msgs, "nothing aged out")
	out := logs.String()
	assert.Contains(t, out, "setting=max_age stream_value=3h0m0s flag_value=2s")
	assert.Contains(t, out, "setting=duplicate_window stream_value=2h0m0s flag_value=1s")
	assert.Contains(t, out, "setting=max_bytes stream_value=unlimited flag_value=1073741824")
	assert.Equal(t, 3, strings.Count(out, "level=WARN"), out)

	// A process with the defaults does not set it back either.
	logs = logtest.Buffer{}
	st, err = bus.EnsureStream(ctx, js, bus.StreamConfig{Prefix: "sp", Logger: log})
	require.NoError(t, err)
	assert.Equal(t, 3*time.Hour, st.CachedInfo().Config.MaxAge)
	assert.Equal(t, bus.DefaultDuplicateWindow, st.CachedInfo().Config.Duplicates)
	assert.Contains(t, logs.String(), "setting=max_age stream_value=3h0m0s flag_value=unlimited")

	// The same settings: nothing to say.
	logs = logtest.Buffer{}
	_, err = bus.EnsureStream(ctx, js, bus.StreamConfig{Prefix: "sp", MaxAge: 3 * time.Hour, Logger: log})
	require.NoError(t, err)
	assert.NotContains(t, logs.String(), "level=WARN")
}

// The subjects sessionpipe publishes to are added to a stream that lacks
// them (logged); an operator's own subjects stay.
func TestEnsureStream_AddsMissingSubjects(t *testing.T) {
	srv := natstest.RunServer(t)
	js := natstest.JetStream(t, natstest.Connect(t, srv.URL()))
	ctx := t.Context()
	_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: bus.DefaultStream, Subjects: []string{"sessionpipe.entries.>", "ops.>"}, MaxAge: time.Hour})
	require.NoError(t, err)

	var logs logtest.Buffer
	st, err := bus.EnsureStream(ctx, js, bus.StreamConfig{MaxAge: time.Hour, DuplicateWindow: 2 * time.Minute, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	info, err := st.Info(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"sessionpipe.entries.>", "ops.>", "sessionpipe.dead.>", "sessionpipe.raw.>"}, info.Config.Subjects)
	assert.Equal(t, time.Hour, info.Config.MaxAge)
	assert.Contains(t, logs.String(), `msg="subjects added to the stream" stream=SESSIONPIPE added="[sessionpipe.dead.> sessionpipe.raw.>]"`)

	// A wider subject covers what sessionpipe needs: nothing is added.
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: "WIDE", Subjects: []string{"wide.>"}})
	require.NoError(t, err)
	st, err = bus.EnsureStream(ctx, js, bus.StreamConfig{Name: "WIDE", Prefix: "wide"})
	require.NoError(t, err)
	assert.Equal(t, []string{"wide.>"}, st.CachedInfo().Config.Subjects)
}

// Processes starting at once on a missing stream: one creates it, with
// its settings; the others find it and keep them.
func TestEnsureStream_ConcurrentStartsAgree(t *testing.T) {
	srv := natstest.RunServer(t)
	js := natstest.JetStream(t, natstest.Connect(t, srv.URL()))
	ages := []time.Duration{time.Hour, 2 * time.Hour, 3 * time.Hour, 4 * time.Hour}
	var wg sync.WaitGroup
	errs := make([]error, len(ages))
	for i, age := range ages {
		wg.Go(func() {
			_, errs[i] = bus.EnsureStream(t.Context(), js, bus.StreamConfig{MaxAge: age, DuplicateWindow: time.Minute})
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	st, err := js.Stream(t.Context(), bus.DefaultStream)
	require.NoError(t, err)
	assert.Contains(t, ages, st.CachedInfo().Config.MaxAge)
}

func TestEnsureStream_Errors(t *testing.T) {
	srv := natstest.RunServer(t)
	js := natstest.JetStream(t, natstest.Connect(t, srv.URL()))
	ctx := t.Context()

	_, err := bus.EnsureStream(ctx, js, bus.StreamConfig{Replicas: 9})
	require.ErrorIs(t, err, bus.ErrInvalidConfig)

	// More replicas than a lone server holds: the server says so.
	_, err = bus.EnsureStream(ctx, js, bus.StreamConfig{Replicas: 3})
	var apiErr *jetstream.APIError
	require.ErrorAs(t, err, &apiErr)

	// Another storage type than the stream's is a setting like the
	// others: kept, and logged.
	_, err = bus.EnsureStream(ctx, js, bus.StreamConfig{})
	require.NoError(t, err)
	var logs logtest.Buffer
	st, err := bus.EnsureStream(ctx, js, bus.StreamConfig{Storage: jetstream.MemoryStorage, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	assert.Equal(t, jetstream.FileStorage, st.CachedInfo().Config.Storage)
	assert.Contains(t, logs.String(), "setting=storage stream_value=File flag_value=Memory")
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
	cfg.Subjects = cfg.Subjects[:1] // and a subject to add back
	_, err = js.UpdateStream(t.Context(), cfg)
	require.NoError(t, err)

	s, err = bus.EnsureStream(t.Context(), js, bus.StreamConfig{MaxAge: time.Hour})
	require.NoError(t, err)
	require.Len(t, s.CachedInfo().Config.Sources, 1)
	require.Equal(t, "LEAF_A", s.CachedInfo().Config.Sources[0].Name)
	require.Len(t, s.CachedInfo().Config.Subjects, 3)
	require.Zero(t, s.CachedInfo().Config.MaxAge, "the stream's settings are kept")
}

// UpdateStream changes only what it is given, checks the result, and
// sends nothing when nothing changes.
func TestUpdateStream(t *testing.T) {
	srv := natstest.RunServer(t)
	js := natstest.JetStream(t, natstest.Connect(t, srv.URL()))
	ctx := t.Context()
	_, err := bus.EnsureStream(ctx, js, bus.StreamConfig{MaxAge: 3 * time.Hour, MaxBytes: 1 << 20})
	require.NoError(t, err)
	_, err = js.Publish(ctx, "sessionpipe.dead.h", []byte("{}"))
	require.NoError(t, err)

	age, window := 48*time.Hour, 10*time.Minute
	before, after, err := bus.UpdateStream(ctx, js, bus.DefaultStream, bus.StreamChange{MaxAge: &age, DuplicateWindow: &window})
	require.NoError(t, err)
	assert.Equal(t, 3*time.Hour, before.MaxAge)
	assert.Equal(t, 48*time.Hour, after.MaxAge)
	assert.Equal(t, 10*time.Minute, after.Duplicates)
	assert.Equal(t, int64(1<<20), after.MaxBytes, "not given: unchanged")
	assert.Equal(t, []bus.SettingDiff{{"max_age", "3h0m0s", "48h0m0s"}, {"duplicate_window", "2h0m0s", "10m0s"}}, bus.StreamSettingDiffs(before, after))

	var unlimited int64
	_, after, err = bus.UpdateStream(ctx, js, bus.DefaultStream, bus.StreamChange{MaxBytes: &unlimited})
	require.NoError(t, err)
	assert.Equal(t, int64(-1), after.MaxBytes)
	st, err := js.Stream(ctx, bus.DefaultStream)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), st.CachedInfo().State.Msgs, "update keeps messages")

	short := time.Minute
	_, _, err = bus.UpdateStream(ctx, js, bus.DefaultStream, bus.StreamChange{MaxAge: &short})
	requireConfigError(t, err, "duplicate_window")
	three := 3
	_, _, err = bus.UpdateStream(ctx, js, bus.DefaultStream, bus.StreamChange{Replicas: &three})
	var apiErr *jetstream.APIError
	require.ErrorAs(t, err, &apiErr, "a lone server holds one replica")
	_, _, err = bus.UpdateStream(ctx, js, "NOSUCH", bus.StreamChange{MaxAge: &age})
	require.ErrorIs(t, err, jetstream.ErrStreamNotFound)
}
