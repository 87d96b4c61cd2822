package main

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
)

// `sessionpipe stream info` prints the stream as it is; `stream update`
// changes the settings given, only those, and prints each change.
func TestStream_InfoAndUpdate(t *testing.T) {
	t.Parallel()
	srv := natstest.RunServer(t)
	js := natstest.JetStream(t, natstest.Connect(t, srv.URL()))
	_, err := bus.EnsureStream(t.Context(), js, bus.StreamConfig{MaxAge: 3 * time.Hour})
	require.NoError(t, err)
	_, err = js.Publish(t.Context(), "sessionpipe.dead.h", []byte("{}"))
	require.NoError(t, err)
	streams := func(code int, args ...string) (stdout, stderr string) {
		t.Helper()
		var o, e bytes.Buffer
		got := run(t.Context(), append(args, "-nats", srv.URL()), &o, &e)
		require.Equal(t, code, got, "stdout:\n%s\nstderr:\n%s", o.String(), e.String())
		return o.String(), e.String()
	}
	sp := func(code int, args ...string) string {
		t.Helper()
		o, e := streams(code, args...)
		return o + e
	}

	out := sp(exitOK, "stream", "info")
	require.Contains(t, out, "stream SESSIONPIPE (created ")
	require.Regexp(t, `max_age +3h0m0s\n`, out)
	require.Regexp(t, `duplicate_window +2h0m0s\n`, out)
	require.Regexp(t, `messages +1\n`, out)

	out = sp(exitOK, "stream", "update", "-max-age", "48h", "-max-bytes", "1048576")
	require.Regexp(t, `max_age +3h0m0s -> 48h0m0s\n`, out)
	require.Regexp(t, `max_bytes +unlimited -> 1048576\n`, out)
	require.Contains(t, out, `msg="stream setting changed" stream=SESSIONPIPE setting=max_age from=3h0m0s to=48h0m0s`)
	require.NotContains(t, out, "duplicate_window", "not given: unchanged")
	s, err := js.Stream(t.Context(), bus.DefaultStream)
	require.NoError(t, err)
	require.Equal(t, 48*time.Hour, s.CachedInfo().Config.MaxAge)
	require.Equal(t, int64(1<<20), s.CachedInfo().Config.MaxBytes)
	require.Equal(t, bus.DefaultDuplicateWindow, s.CachedInfo().Config.Duplicates)
	require.Equal(t, uint64(1), s.CachedInfo().State.Msgs)

	require.Contains(t, sp(exitOK, "stream", "update", "-max-age", "48h"), "nothing to change")
	var info jetstream.StreamInfo
	infoJSON, logs := streams(exitOK, "stream", "info", "-json")
	require.NoError(t, json.Unmarshal([]byte(infoJSON), &info), "stdout is the JSON alone (stderr: %s)", logs)
	require.Equal(t, 48*time.Hour, info.Config.MaxAge)

	require.Contains(t, sp(exitUsage, "stream", "update"), "give at least one of")
	require.Contains(t, sp(exitUsage, "stream", "nosuch"), `unknown command "nosuch"`)
	require.Contains(t, sp(exitError, "stream", "update", "-dup-window", "49h"), "duplicate_window")
	require.Contains(t, sp(exitError, "stream", "info", "-stream", "NOSUCH"), "stream not found")
}
