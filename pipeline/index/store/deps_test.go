package store_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	module = "github.com/sessionpipe/sessionpipe"
	pebble = "github.com/cockroachdb/pebble"
)

// goList runs go list with args in the module's root and returns its
// lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.CommandContext(t.Context(), goBin, append([]string{"list"}, args...)...)
	cmd.Dir = "../../.."
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go list %v: %s", args, out)
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// pipeline/index/store is the only package that imports pebble: the
// counting rules, the daemon and the API read and write the state through
// its Store, so that what the store is made of can change in one package.
// (Tests may open pebble to damage a state.)
func TestStore_OnlyPackageImportingPebble(t *testing.T) {
	lines := goList(t, "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", module+"/...")
	seen := false
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		pkg := f[0]
		for _, imp := range f[1:] {
			if !strings.HasPrefix(imp, pebble) {
				continue
			}
			if pkg == module+"/pipeline/index/store" {
				seen = true
				continue
			}
			require.Failf(t, "a package imports pebble", "%s imports %s: only pipeline/index/store may (go list -f '{{.Imports}}' %s)", pkg, imp, pkg)
		}
	}
	require.True(t, seen, "the list is the module's: pipeline/index/store imports pebble")
}

// The alert rules link no store: go list -deps of pipeline/index/alert
// holds neither pebble nor pipeline/index/store.
func TestStore_AlertLinksNoStore(t *testing.T) {
	deps := goList(t, "-deps", module+"/pipeline/index/alert")
	require.Contains(t, deps, module+"/pipeline/index/alert", "the list is the alert package's")
	for _, d := range deps {
		require.False(t, strings.HasPrefix(d, pebble), "pipeline/index/alert links %s", d)
		require.NotEqual(t, module+"/pipeline/index/store", d, "pipeline/index/alert links the store")
	}
}
