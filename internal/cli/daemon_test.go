package cli

import (
	"bytes"
	"flag"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A daemon's -h prints what it does and an example before its flags, not
// Go's bare "Usage of NAME:".
func TestDaemon_HelpStartsWithUsage(t *testing.T) {
	var stderr bytes.Buffer
	d := Daemon{Usage: "Usage: tailer [flags]\n\nFollows.\n\nExample:\n  tailer -nats URL\n\nFlags:\n"}
	var tl Tailer
	err := d.Parse("tailer", []string{"-h"}, func(string) string { return "" }, &stderr, tl.Register, "")
	require.ErrorIs(t, err, flag.ErrHelp)
	out := stderr.String()
	require.True(t, strings.HasPrefix(out, "Usage: tailer [flags]\n"), out)
	require.Contains(t, out, "Example:\n  tailer -nats URL\n\nFlags:\n  -")
	require.NotContains(t, out, "Usage of")
}
