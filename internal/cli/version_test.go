package cli

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A version line names the command, the module version (a release's
// -ldflags value over the build's) and the Go version and platform.
func TestVersionLine(t *testing.T) {
	line := VersionLine("tailer")
	require.True(t, strings.HasPrefix(line, "tailer "), line)
	require.Contains(t, line, runtime.Version()+", "+runtime.GOOS+"/"+runtime.GOARCH)

	old := version
	t.Cleanup(func() { version = old })
	version = "v1.2.0"
	require.True(t, strings.HasPrefix(VersionLine("indexer"), "indexer v1.2.0 ("), VersionLine("indexer"))
	require.Equal(t, "v1.2.0", Version(), "file metadata carries the same version")
	for _, arg := range []string{"version", "-version", "--version"} {
		require.True(t, IsVersionArg(arg))
	}
	require.False(t, IsVersionArg("-v"))
}
