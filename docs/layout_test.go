// Package docs holds the checks that keep the documents next to it true to
// the code: ARCHITECTURE.md's layout table names every package of the
// module, and every path it names exists.
package docs

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// families are the rows whose sub-packages the table describes as a group
// ("one sub-package per format") instead of one by one.
var families = []string{"pipeline/formats/", "internal/testutil/", "deploy/"}

const module = "github.com/sessionpipe/sessionpipe"

// TestArchitecture_LayoutMatchesPackages fails when a package of the
// module (go list ./...) is missing from the layout table of
// ARCHITECTURE.md, or when the table names a directory that is gone.
func TestArchitecture_LayoutMatchesPackages(t *testing.T) {
	named, cells := layout(t)
	out, err := exec.Command("go", "list", "-e", "-f", "{{.ImportPath}}", "../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		dir := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
		if dir == "" || named[dir] || inFamily(dir) {
			continue
		}
		t.Errorf("package %s is not named in docs/ARCHITECTURE.md's layout table", dir)
	}
	for _, p := range cells {
		if fi, err := os.Stat(filepath.Join("..", p)); err != nil || !fi.IsDir() {
			t.Errorf("docs/ARCHITECTURE.md's layout table names %s, which is not a directory", p)
		}
	}
}

func inFamily(dir string) bool {
	for _, f := range families {
		if strings.HasPrefix(dir, f) && dir != strings.TrimSuffix(f, "/") {
			return true
		}
	}
	return false
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// layout reads the table under "## Layout": named holds every path in
// backquotes anywhere in a row (without a trailing slash), cells the paths
// in the rows' first cells, which must exist.
func layout(t *testing.T) (named map[string]bool, cells []string) {
	t.Helper()
	f, err := os.Open("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	named = map[string]bool{}
	in := false
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == "## Layout"
			continue
		case !in || !strings.HasPrefix(line, "| `"):
			continue
		}
		first := strings.SplitN(line, "|", 3)[1]
		for _, m := range codeSpan.FindAllStringSubmatch(first, -1) {
			p := strings.TrimSuffix(m[1], "/")
			cells = append(cells, p)
			named[p] = true
		}
		for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
			named[strings.TrimSuffix(m[1], "/")] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(cells) == 0 {
		t.Fatal(`docs/ARCHITECTURE.md has no "## Layout" table`)
	}
	return named, cells
}

// TestLayout_PipelineImportsNothingAbove fails when a package under
// pipeline/ or schema/ imports (outside its tests) one of the command
// layer or the test helpers: the libraries are the bottom of the tree.
func TestLayout_PipelineImportsNothingAbove(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "../pipeline/...", "../schema/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		for _, imp := range f[1:] {
			for _, above := range []string{module + "/internal/", module + "/cmd/"} {
				if strings.HasPrefix(imp, above) {
					t.Errorf("%s imports %s, a package above pipeline/", f[0], imp)
				}
			}
		}
	}
}
