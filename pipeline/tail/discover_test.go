package tail

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats"
)

// The offline commands (formats.Walk, behind `sessions` and `entries`)
// and the tailer (behind `tailer`, `run` and `export`) select exactly the
// same files for the same paths (package discover): directories, globs of
// files and of directories, dotfiles, names holding glob characters and
// '\', links to files, to directories (given, and inside a walk), to a
// device and nowhere, a FIFO and names not read. Each transcript is a
// session of its own; the files are compared by the sessions published
// and the sessions of the files Walk finds (a file reached by two paths,
// a link, is one file whichever path each keeps).
func TestTailer_SelectsAsWalk(t *testing.T) {
	h := newHarness(t)
	sessionOf := make(map[formats.FileID]string)
	n := 0
	for _, name := range []string{
		"p/a.jsonl", "p/.hidden.jsonl", "p/.dot/b.jsonl", "p/sub/c.jsonl",
		"q/1/s/d.jsonl", "q/2/s/e.jsonl", "q/2/x/f.jsonl", "q/1/s/deep/g.jsonl",
		"m/proj1/x.jsonl", "m/proj2/y.jsonl", "m/top.jsonl",
		"r/h.jsonl.bak.123", "r/i.jsonl",
		`w/c\d.jsonl`, "w/a*.jsonl", "w/ab.jsonl", "w/x[1]/k.jsonl",
		"z/never.jsonl",
	} {
		n++
		session := fmt.Sprintf("s%02d", n)
		path := h.write(name, piFile(session, 0, 1))
		info, err := os.Stat(path)
		require.NoError(t, err)
		id, ok := formats.IDOf(info)
		require.True(t, ok)
		sessionOf[id] = session
	}
	h.write("p/notes.txt", "not read\n")
	h.write("m/proj1/x.meta.json", "{}\n")
	root := h.dir
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "p", "fifo.jsonl"), 0o644))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(root, "p", "zero.jsonl")))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "l"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(root, "p", "a.jsonl"), filepath.Join(root, "l", "link.jsonl")))
	require.NoError(t, os.Symlink(filepath.Join(root, "z"), filepath.Join(root, "l", "linkdir")))
	require.NoError(t, os.Symlink(filepath.Join(root, "nowhere"), filepath.Join(root, "l", "dangling.jsonl")))
	require.NoError(t, os.Symlink(filepath.Join(root, "r"), filepath.Join(root, "linkroot")))

	args := []string{
		filepath.Join(root, "p"),                      // a directory: dotfiles, a FIFO, a link to a device, a name not read
		filepath.Join(root, "q", "*", "s", "*.jsonl"), // a glob of files: not q/1/s/deep, not q/2/x
		filepath.Join(root, "m", "*"),                 // a glob of directories and files: everything under m
		filepath.Join(root, "l"),                      // links: to p/a.jsonl (one file), to z (not followed), to nowhere
		filepath.Join(root, "linkroot"),               // a link to a directory, given: followed
		filepath.Join(root, "w", `a\*.jsonl`),         // '\' escapes: a*.jsonl, not ab.jsonl
		filepath.Join(root, "w", `c\d.jsonl`),         // a name holding '\' that exists
		filepath.Join(root, "w", `x\[1\]`, "*.jsonl"), // escapes in the base
	}

	var skipped []error
	found, err := formats.Walk(args, func(err error) { skipped = append(skipped, err) })
	require.NoError(t, err)
	var offline []string
	for _, f := range found {
		info, err := os.Stat(f.Path)
		require.NoError(t, err)
		id, _ := formats.IDOf(info)
		offline = append(offline, sessionOf[id])
	}
	slices.Sort(offline)
	// p; q/*/s/*.jsonl; m/*; linkroot; c\d.jsonl; a\*.jsonl; x\[1\]/*.jsonl
	require.Equal(t, []string{"s01", "s02", "s03", "s04", "s05", "s06", "s09", "s10", "s11", "s12", "s13", "s14", "s15", "s17"}, offline)
	require.Len(t, skipped, 3, "the FIFO, the link to a device, the link to nowhere: %v", skipped)

	h.start(func(c *Config) { c.Watch, c.RescanInterval = args, time.Hour })
	msgs := h.stays(2 * len(offline)) // a header and a line each
	var live []string
	for _, g := range msgs {
		require.Nil(t, g.dead, "dead letter")
		live = append(live, g.entry.SessionID)
	}
	slices.Sort(live)
	live = slices.Compact(live)
	require.Equal(t, offline, live)
}
