package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// The tests that run the command as a process share one build of it: a
// build links DuckDB, which takes half a minute or more on a loaded
// machine, and no test changes the binary.
var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
	binOut  []byte
	binEnv  = os.Environ() // as the tests started: some change HOME, where the go command's caches are
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// sharedBinary returns the command built once, in a directory others can
// read and execute (a test runs it as an unprivileged user).
func sharedBinary(tb testing.TB) string {
	tb.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "sessionpipe-bin-")
		if binErr != nil {
			return
		}
		if binErr = os.Chmod(binDir, 0o755); binErr != nil {
			return
		}
		bin := filepath.Join(binDir, "sessionpipe")
		cmd := exec.Command("go", "build", "-o", bin, ".")
		cmd.Env = binEnv
		if binOut, binErr = cmd.CombinedOutput(); binErr == nil {
			binPath = bin
		}
	})
	require.NoError(tb, binErr, "build sessionpipe: %s", binOut)
	return binPath
}
