package tail

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// The tests that run cmd/tailer as a process share one build of it (a
// build took half a minute on a loaded machine, once per test); no test
// changes the binary.
var (
	tailerOnce sync.Once
	tailerDir  string
	tailerPath string
	tailerErr  error
	tailerOut  []byte
)

func TestMain(m *testing.M) {
	code := m.Run()
	if tailerDir != "" {
		os.RemoveAll(tailerDir)
	}
	os.Exit(code)
}

// sharedTailer returns cmd/tailer, built once for the package's tests and
// benchmarks.
func sharedTailer(tb testing.TB) string {
	tb.Helper()
	tailerOnce.Do(func() {
		gobin, err := exec.LookPath("go")
		if err != nil {
			tailerErr = err
			return
		}
		if tailerDir, tailerErr = os.MkdirTemp("", "sessionpipe-tailer-"); tailerErr != nil {
			return
		}
		bin := filepath.Join(tailerDir, "tailer")
		tailerOut, tailerErr = exec.Command(gobin, "build", "-o", bin, "github.com/sessionpipe/sessionpipe/cmd/tailer").CombinedOutput()
		if tailerErr == nil {
			tailerPath = bin
		}
	})
	require.NoError(tb, tailerErr, "go build cmd/tailer (the go command is needed):\n%s", tailerOut)
	return tailerPath
}
