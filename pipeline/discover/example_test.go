package discover_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/discover"
)

// A glob names the files it matches and every file under the directories
// it matches; '\' escapes.
func ExampleSet_Walk() {
	dir, _ := os.MkdirTemp("", "discover")
	defer os.RemoveAll(dir)
	for _, name := range []string{"p1/a.jsonl", "p1/notes.txt", "p2/deep/b.jsonl", "top.jsonl", "x*.jsonl", "xy.jsonl"} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("{}\n"), 0o644)
	}
	set := discover.NewSet([]string{filepath.Join(dir, "p*"), filepath.Join(dir, `x\*.jsonl`)})
	set.Walk(discover.Visitor{
		Take: func(path string, m discover.Match) bool { return m.Named || strings.HasSuffix(path, ".jsonl") },
		File: func(path string, _ fs.FileInfo, m discover.Match) {
			rel, _ := filepath.Rel(dir, path)
			fmt.Println(filepath.ToSlash(rel), m.Target, m.Named)
		},
		LeftOut: func(path string, _ fs.FileInfo, _ discover.Match) {
			rel, _ := filepath.Rel(dir, path)
			fmt.Println("left out:", filepath.ToSlash(rel))
		},
	})
	// Output:
	// p1/a.jsonl 0 false
	// left out: p1/notes.txt
	// p2/deep/b.jsonl 0 false
	// x*.jsonl 1 true
}
