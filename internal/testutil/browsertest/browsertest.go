// Package browsertest finds the headless browser the dashboard tests
// drive (Debian's chromium; CI installs it).
package browsertest

import (
	"os"
	"os/exec"
	"testing"
)

// Chromium returns the path of chromium (or chromium-browser,
// google-chrome). Without one the test fails, saying how to install it,
// unless SESSIONPIPE_NO_BROWSER=1, which skips the browser tests.
func Chromium(tb testing.TB) string {
	tb.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("SESSIONPIPE_NO_BROWSER") == "1" {
		tb.Skip("chromium is not in PATH and SESSIONPIPE_NO_BROWSER=1: the browser tests are skipped")
	}
	tb.Fatal("chromium is not in PATH: install it (apt-get install -y chromium), or set SESSIONPIPE_NO_BROWSER=1 to skip the browser tests")
	return ""
}
