package tail

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
)

// SurveyWatches finds, per watch, the files a running Tailer follows and
// the directories it watches: nested directories, globs with "*" and
// "**", links to files and to directories (inside a walk, not followed;
// as a watch, followed), a file by name, a directory to wait on and
// watches that match nothing.
func TestSurveyWatches_MatchesTailer(t *testing.T) {
	h := newHarness(t)
	for _, f := range []string{
		"a/x.jsonl", "a/b/y.jsonl", "a/b/c/z.txt", "a/b/c/w.jsonl.bak.123",
		"d/sessions.json", "d/e/v.jsonl",
		"e/deep/1/2/u.jsonl", "e/t.jsonl",
		"f/single.jsonl", "f/other.jsonl",
		"g/1/s/q.jsonl", "g/1/s/deeper/no.jsonl", "g/2/s/r.jsonl", "g/2/x/no.jsonl",
	} {
		h.write(f, piFile("s", 0, 1))
	}
	root := h.dir
	require.NoError(t, os.Symlink(filepath.Join(root, "a", "x.jsonl"), filepath.Join(root, "d", "link.jsonl")))
	require.NoError(t, os.Symlink(filepath.Join(root, "a"), filepath.Join(root, "e", "linkdir")))
	require.NoError(t, os.Symlink(filepath.Join(root, "a"), filepath.Join(root, "linkroot")))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "empty"), 0o755))
	watches := []string{
		filepath.Join(root, "a"),
		filepath.Join(root, "a", "b", "*.jsonl"),
		filepath.Join(root, "d"),
		filepath.Join(root, "e", "**", "*.jsonl"),
		filepath.Join(root, "f", "single.jsonl"),
		filepath.Join(root, "nothing", "missing"),
		filepath.Join(root, "g", "*", "s", "*.jsonl"),
		filepath.Join(root, "linkroot"),
		filepath.Join(root, "empty"),
		filepath.Join(root, "nowhere", "*", "*.jsonl"),
	}
	sv, err := SurveyWatches(watches)
	require.NoError(t, err)
	require.Empty(t, sv.Errors)

	h.start(func(c *Config) { c.Watch, c.RescanInterval = watches, time.Hour })
	natstest.CheckFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		if !h.tl.scanned.Load() {
			return errors.New("first scan not done")
		}
		return nil
	})
	followed := make([][]string, len(watches))
	h.tl.mu.Lock()
	for _, f := range h.tl.files {
		followed[f.watch] = append(followed[f.watch], f.path)
	}
	h.tl.mu.Unlock()
	watched := h.tl.watcher.Load().WatchList()

	require.Len(t, sv.Watches, len(watches))
	total := 0
	for i, w := range sv.Watches {
		require.Equal(t, watches[i], w.Watch)
		var paths []string
		for _, f := range w.Files {
			paths = append(paths, f.Path)
			require.True(t, f.Info.Mode().IsRegular(), f.Path)
		}
		slices.Sort(paths)
		slices.Sort(followed[i])
		require.Equal(t, followed[i], paths, "files of watch %s", w.Watch)
		total += len(paths)
	}
	require.Equal(t, 10, total) // the links are the files they lead to

	// A file the watches match but whose name is not read is reported,
	// by the survey and the Tailer alike (under every path reaching it).
	require.Equal(t, []string{
		filepath.Join(root, "a", "b", "c", "z.txt"),
		filepath.Join(root, "linkroot", "b", "c", "z.txt"),
	}, sv.LeftOut)
	require.EqualValues(t, len(sv.LeftOut), h.tl.Metrics().Snapshot().SkippedNames)
	require.Equal(t, len(watched), sv.Dirs, "directories watched: %v", watched)
	require.EqualValues(t, h.tl.watchedDirs(), sv.Dirs)

	// Files once each, under the first watch to find them.
	require.Len(t, sv.Watches[0].Files, 3) // x, y and the archive w.jsonl.bak.123
	require.Empty(t, sv.Watches[1].Files, "a/b/*.jsonl: found by a first")
	require.Empty(t, sv.Watches[7].Files, "linkroot: the files of a")

	for _, tt := range []struct {
		watch string
		dir   string
		waits bool
	}{
		{watches[5], filepath.Join(root, "nothing"), false},
		{watches[7], filepath.Join(root, "linkroot"), true},
		{watches[8], filepath.Join(root, "empty"), true},
		{watches[9], filepath.Join(root, "nowhere"), false},
	} {
		i := slices.Index(watches, tt.watch)
		require.Equal(t, tt.dir, sv.Watches[i].Dir, tt.watch)
		require.Equal(t, tt.waits, sv.Watches[i].Waits, tt.watch)
		require.Equal(t, tt.waits, h.tl.watches.waitsOn(i), tt.watch)
	}
}

// A watch the Tailer would refuse is a *ConfigError.
func TestSurveyWatches_Invalid(t *testing.T) {
	for _, w := range []string{"relative/*.jsonl", filepath.Join(t.TempDir(), "[")} {
		_, err := SurveyWatches([]string{w})
		var ce *ConfigError
		require.ErrorAs(t, err, &ce, w)
		require.ErrorIs(t, err, ErrInvalidConfig)
		require.Equal(t, "watch", ce.Field)
	}
}
