package cli

import (
	"flag"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/schema"
)

func parseTailerFlags(t *testing.T, env map[string]string, args ...string) (*Tailer, error) {
	t.Helper()
	var tl Tailer
	fs := flag.NewFlagSet("tailer", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	tl.Register(fs, func(k string) string { return env[k] })
	return &tl, fs.Parse(args)
}

// -label is repeatable and takes lists; SESSIONPIPE_LABELS is its
// default, replaced as a whole by -label.
func TestTailer_LabelFlag(t *testing.T) {
	tl, err := parseTailerFlags(t, nil, "-label", "team=infra", "-label", "cost_centre=42,zone=eu")
	require.NoError(t, err)
	require.Equal(t, map[string]string{"team": "infra", "cost_centre": "42", "zone": "eu"}, tl.Labels.m)
	require.Equal(t, "cost_centre=42,team=infra,zone=eu", tl.Labels.String())

	env := map[string]string{"SESSIONPIPE_LABELS": "team=infra, cost_centre=42"}
	tl, err = parseTailerFlags(t, env)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"team": "infra", "cost_centre": "42"}, tl.Labels.m)

	tl, err = parseTailerFlags(t, env, "-label", "team=research")
	require.NoError(t, err)
	require.Equal(t, map[string]string{"team": "research"}, tl.Labels.m)

	tl, err = parseTailerFlags(t, nil)
	require.NoError(t, err)
	require.Nil(t, tl.Labels.m)
}

// Bad labels are refused with the reason: a bad -label by the flag
// parsing, a bad SESSIONPIPE_LABELS when the tailer starts.
func TestTailer_BadLabels(t *testing.T) {
	for _, bad := range []string{"team", "Team=infra", "team=", "team=a,team=b", "k=v\x01"} {
		_, err := parseTailerFlags(t, nil, "-label", bad)
		require.ErrorContains(t, err, "flag -label: "+schema.ErrInvalidLabel.Error(), "%q", bad)
	}
	tl, err := parseTailerFlags(t, map[string]string{"SESSIONPIPE_LABELS": "team=infra,Bad=1"})
	require.NoError(t, err)
	_, err = StartTailer(t.Context(), tl, &NATS{}, &Bus{}, func(string) string { return "" }, slog.New(slog.DiscardHandler), nil)
	require.ErrorIs(t, err, schema.ErrInvalidLabel)
	require.ErrorContains(t, err, "SESSIONPIPE_LABELS")

	// A -label given replaces the bad default.
	tl, err = parseTailerFlags(t, map[string]string{"SESSIONPIPE_LABELS": "Bad=1"}, "-label", "team=infra")
	require.NoError(t, err)
	require.NoError(t, tl.Labels.err)
}
