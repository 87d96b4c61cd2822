package corpusgen_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sessionpipe/sessionpipe/internal/testutil/corpusgen"
)

// A corpus of about 1 KB lines of the three formats, held in memory.
func ExampleLines() {
	lines := corpusgen.Lines(corpusgen.Config{Mix: corpusgen.Mix1K, Bytes: 256 << 10, Seed: 1})
	valid := 0
	for _, l := range lines {
		if json.Valid(l) {
			valid++
		}
	}
	fmt.Println(len(lines) > 200, valid == len(lines))
	// Output: true true
}

// A directory tree of Claude Code sessions in the layout of
// ~/.claude/projects.
func ExampleWriteTree() {
	dir, err := os.MkdirTemp("", "corpus")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	st, err := corpusgen.WriteTree(context.Background(), corpusgen.TreeConfig{
		Dir: dir, Format: corpusgen.MixClaude, Bytes: 1 << 20, Seed: 1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "claude", "projects", "*", "*.jsonl"))
	fmt.Println(st.Sessions == len(matches), st.Bytes >= 1<<20)
	// Output: true true
}
