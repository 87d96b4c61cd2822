//go:build unix

package doctor

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// rerunAsNobody runs the calling test again in a child process of this
// test binary as the unprivileged user nobody (65534), for a test that
// root would pass vacuously (root opens every file), and fails t if it
// does not pass there. It reports false when it cannot (not root), and
// the test then runs as it is.
func rerunAsNobody(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() != 0 {
		return false
	}
	// The test binary lives in go's private build directory: copy it
	// where nobody may run it.
	bin, err := os.MkdirTemp("", "sessionpipe-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(bin) })
	if err := os.Chmod(bin, 0o755); err != nil { // t.TempDir's parent is private
		t.Fatal(err)
	}
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(bin, "test")
	if err := os.WriteFile(exe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run", "^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Dir = bin // the checkout may sit where nobody cannot go
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Env = append(os.Environ(), "HOME="+os.TempDir(), "TMPDIR="+os.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("as nobody, %s did not pass:\n%s", t.Name(), out)
	}
	return true
}
