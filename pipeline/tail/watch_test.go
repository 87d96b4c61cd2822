package tail

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/logtest"
	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats"
)

// logTo returns a config change that logs to buf.
func logTo(buf *logtest.Buffer) func(*Config) {
	return func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
}

func TestTailer_Watch(t *testing.T) {
	t.Run("directory", func(t *testing.T) {
		// tailer --watch DIR follows everything under DIR, at any depth.
		h := newHarness(t)
		h.write("s1.jsonl", piFile("s1", 0, 1))
		h.write("a/b/c/s2.jsonl", piFile("s2", 0, 2))
		h.start(func(c *Config) { c.Watch = []string{h.dir} })
		h.waitMsgs(5)
		h.write("new/s3.jsonl", piFile("s3", 0, 0))
		msgs := h.stays(6)
		require.Equal(t, wantIDs("s2", 0, 2), ids(t, msgs, "s2"))
		require.Equal(t, []WatchFiles{{Watch: h.dir, Files: 3}}, h.tl.Metrics().Snapshot().Watches)
	})
	t.Run("file", func(t *testing.T) {
		h := newHarness(t)
		path := h.write("s1.jsonl", piFile("s1", 0, 1))
		h.write("s2.jsonl", piFile("s2", 0, 1))
		h.write("sub/s3.jsonl", piFile("s3", 0, 1))
		h.start(func(c *Config) { c.Watch = []string{path} })
		h.waitMsgs(2)
		h.appendTo(path, piLine(2))
		msgs := h.stays(3)
		require.Equal(t, wantIDs("s1", 0, 2), ids(t, msgs, "s1"))
		require.Equal(t, int64(1), h.tl.Metrics().Snapshot().Files)
	})
	t.Run("directory made later", func(t *testing.T) {
		// A path that does not exist yet, in a directory that does, is
		// waited for: without a warning, and followed once it is there.
		var logs logtest.Buffer
		h := newHarness(t)
		later := filepath.Join(h.dir, "later")
		h.start(logTo(&logs), func(c *Config) { c.Watch = []string{later} })
		natstest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
			if !h.tl.Idle() {
				return fmt.Errorf("not idle")
			}
			return nil
		})
		h.write("later/x/s1.jsonl", piFile("s1", 0, 2))
		msgs := h.waitMsgs(3)
		require.Equal(t, wantIDs("s1", 0, 2), ids(t, msgs, "s1"))
		require.NotContains(t, logs.String(), "no directory to wait on")
		require.Contains(t, logs.String(), "watch matches no file yet")
	})
	t.Run("nothing to wait on", func(t *testing.T) {
		var logs logtest.Buffer
		h := newHarness(t)
		h.write("s1.jsonl", piFile("s1", 0, 0))
		gone := filepath.Join(h.dir, "no", "such", "dir")
		glob := filepath.Join(h.dir, "nowhere", "**", "*.jsonl")
		h.start(logTo(&logs), func(c *Config) { c.Watch = []string{h.dir, gone, glob} })
		h.waitMsgs(1)
		out := logs.String()
		for _, w := range []string{gone, glob} {
			require.Contains(t, out, `level=WARN msg="watch matches nothing and has no directory to wait on" component=tail watch=`+w)
		}
		require.Equal(t, 2, strings.Count(out, "no directory to wait on"))

		// Prometheus output: one sample per watch.
		var b strings.Builder
		_, err := h.tl.Metrics().WriteTo(&b)
		require.NoError(t, err)
		require.Contains(t, b.String(), fmt.Sprintf("sessionpipe_tail_watch_files{watch=%q} 1\n", h.dir))
		require.Contains(t, b.String(), fmt.Sprintf("sessionpipe_tail_watch_files{watch=%q} 0\n", gone))
		require.Contains(t, b.String(), fmt.Sprintf("sessionpipe_tail_watch_files{watch=%q} 0\n", glob))
	})
}

// A symbolic link to a watched directory inside another watched
// directory (~/.config/claude -> ../.claude, both in the default watches)
// makes every file visible under two paths: it is one file, followed
// under the path first seen, logged once, never "renamed" back and forth.
func TestTailer_SymlinkedAlias(t *testing.T) {
	var logs logtest.Buffer
	h := newHarness(t)
	real := h.write(".claude/projects/p/s1.jsonl", piFile("s1", 0, 2))
	require.NoError(t, os.MkdirAll(filepath.Join(h.dir, ".config"), 0o755))
	require.NoError(t, os.Symlink("../.claude", filepath.Join(h.dir, ".config", "claude")))
	h.start(logTo(&logs), func(c *Config) {
		c.Watch = []string{
			filepath.Join(h.dir, ".claude", "projects", "**", "*.jsonl"),
			filepath.Join(h.dir, ".config", "claude", "projects", "**", "*.jsonl"),
		}
		c.RescanInterval = 20 * time.Millisecond
	})
	h.waitMsgs(3)
	rescans := h.tl.Metrics().Snapshot().Rescans
	natstest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if n := h.tl.Metrics().Snapshot().Rescans; n < rescans+10 {
			return fmt.Errorf("%d rescans", n-rescans)
		}
		return nil
	})
	h.appendTo(real, piLine(3))
	msgs := h.stays(4)
	for _, g := range msgs {
		require.Equal(t, real, g.entry.Path)
	}
	s := h.tl.Metrics().Snapshot()
	require.Zero(t, s.Renames)
	require.Equal(t, int64(1), s.Files)
	require.Equal(t, 1, strings.Count(logs.String(), "file seen under another name"), "logged once")
	require.NotContains(t, logs.String(), "file renamed")
	h.stop()
	states := h.loadStates()
	require.Len(t, states, 1)
	require.Equal(t, real, states[0].Path)
}

// The agents' well-known locations that do not exist here (agents not
// installed) are no warning: only paths a user named are.
func TestTailer_DefaultWatchesQuiet(t *testing.T) {
	var logs logtest.Buffer
	h := newHarness(t)
	h.write("s1.jsonl", piFile("s1", 0, 0))
	missing := filepath.Join(h.dir, "nowhere", "sessions", "**", "*.jsonl")
	h.start(logTo(&logs), func(c *Config) {
		c.Watch = []string{h.dir, missing}
		c.DefaultWatches = true
	})
	h.waitMsgs(1)
	require.NotContains(t, logs.String(), "level=WARN")
}

// A file is left out by its name only when a watch's patterns match it:
// one a glob does not match is not the tailer's to report.
func TestWatchSet_LeftOut(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"s.jsonl", "s.jsonl.bak-12-34", "notes.txt", "sub/x.meta.json", "sub/y.jsonl"} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("{}\n"), 0o644))
	}
	for _, tc := range []struct {
		name    string
		watches []string
		files   int
		left    []string
	}{
		{"Directory", []string{dir}, 3, []string{"notes.txt", "sub/x.meta.json"}},
		// "*" matches the directory sub too: a directory a glob matches
		// names every file under it, as a directory given does, offline
		// and live alike (package discover).
		{"GlobOfEverything", []string{filepath.Join(dir, "*")}, 3, []string{"notes.txt", "sub/x.meta.json"}},
		{"GlobOfJSONL", []string{filepath.Join(dir, "**", "*.jsonl")}, 2, nil},
		{"NamedFile", []string{filepath.Join(dir, "notes.txt")}, 0, []string{"notes.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := newWatchSet(tc.watches)
			var left []string
			ws.left = func(p string) {
				rel, err := filepath.Rel(dir, p)
				require.NoError(t, err)
				left = append(left, filepath.ToSlash(rel))
			}
			files := 0
			ws.walk(func(string, os.FileInfo, int) { files++ }, func(string) {}, func(err error) { t.Error(err) })
			require.Equal(t, tc.files, files)
			slices.Sort(left) // a walk does not sort
			require.Equal(t, tc.left, left)
		})
	}
}

// The tailer's watches and the offline commands' Walk read a PATH by one
// rule (formats.HasMeta): a name that exists is that file, even when it
// holds the escape '\\'.
func TestWatchSet_SameGlobRuleAsWalk(t *testing.T) {
	dir := t.TempDir()
	given := filepath.Join(dir, `c\d.jsonl`)
	require.NoError(t, os.WriteFile(given, []byte("{}\n"), 0o644))
	var live []string
	ws := newWatchSet([]string{given})
	ws.walk(func(p string, _ os.FileInfo, _ int) { live = append(live, p) }, func(string) {}, func(err error) { t.Error(err) })
	require.Equal(t, []string{given}, live, "tailer")
	found, err := formats.Walk([]string{given}, func(err error) { t.Error(err) })
	require.NoError(t, err, "Walk")
	require.Len(t, found, 1, "Walk")
	require.Equal(t, given, found[0].Path, "Walk")
}
