package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
)

// doctorConfig writes a config file holding text, so that the tests
// read no user's config file.
func doctorConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	return path
}

// The exit code is 1 when a check failed, 0 when none did, and 2 for a
// mistake on the command line; -h lists the checks.
func TestDoctor_ExitCode(t *testing.T) {
	t.Parallel()
	empty := doctorConfig(t, "")
	bad := doctorConfig(t, "indexer:\n  nonsense: 1\n")
	for _, tt := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"AllWell", []string{"doctor", "indexer", "-config", empty, "-data-dir", t.TempDir(), "-nats-port", "-1", "-http", "127.0.0.1:0"}, exitOK, "ok    config", ""},
		{"Fail", []string{"doctor", "indexer", "-config", bad}, exitError, "FAIL  config   " + bad + ":2:", "doctor: 1 of 1 checks failed"},
		{"UnknownCommand", []string{"doctor", "nosuch"}, exitUsage, "", `unknown command "nosuch"`},
		{"UnknownFlag", []string{"doctor", "tailer", "-bogus"}, exitUsage, "", "flag provided but not defined: -bogus"},
		{"Arguments", []string{"doctor", "indexer", "-config", empty, "extra"}, exitUsage, "", `unexpected arguments ["extra"]`},
		{"Help", []string{"doctor", "-h"}, exitOK, "", "inotify"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			code := run(t.Context(), tt.args, &stdout, &stderr)
			require.Equal(t, tt.code, code, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			require.Contains(t, stdout.String(), tt.stdout)
			require.Contains(t, stderr.String(), tt.stderr)
		})
	}
}

// -json prints the checks as a JSON array, run's own -json serving; a
// tailer's publish probe runs against a real server.
func TestDoctor_JSON(t *testing.T) {
	t.Parallel()
	srv := natstest.RunServer(t)
	_, err := bus.EnsureStream(t.Context(), natstest.JetStream(t, natstest.Connect(t, srv.URL())), bus.StreamConfig{})
	require.NoError(t, err)
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"doctor", "run", "-json", "-config", doctorConfig(t, ""), "-nats", srv.URL(), "-host", "h1",
		"-data-dir", t.TempDir(), "-http", "127.0.0.1:0", "-poll", t.TempDir()}, &stdout, &stderr)
	require.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	var checks []struct {
		Status, Check, Message, Fix string
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &checks), stdout.String())
	require.NotEmpty(t, checks)
	require.Equal(t, "config", checks[0].Check)
	var probed bool
	for _, c := range checks {
		require.Contains(t, []string{"ok", "warn"}, c.Status, "%+v", c)
		probed = probed || c.Message == "may publish to sessionpipe.entries.h1.doctor, sessionpipe.dead.h1, sessionpipe.raw.h1 (probed: refused by the stream, nothing stored)"
	}
	require.True(t, probed, stdout.String())
}
