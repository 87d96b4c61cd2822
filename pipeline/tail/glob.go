package tail

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/sessionpipe/sessionpipe/pipeline/formats"
)

// globSet matches paths against the configured patterns and walks the
// directories they can match.
type globSet struct {
	patterns []string
	roots    []string // static directory prefix of each pattern, deduplicated
}

func newGlobSet(patterns []string) globSet {
	g := globSet{patterns: patterns}
	for _, p := range patterns {
		base, _ := doublestar.SplitPattern(filepath.ToSlash(p))
		g.roots = append(g.roots, filepath.FromSlash(base))
	}
	slices.Sort(g.roots)
	g.roots = slices.Compact(g.roots)
	// Drop roots inside other roots: walking the outer one covers them.
	var kept []string
	for _, r := range g.roots {
		if len(kept) > 0 && within(r, kept[len(kept)-1]) {
			continue
		}
		kept = append(kept, r)
	}
	g.roots = kept
	return g
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// wanted reports whether path is a file to follow: it matches a pattern
// and its name may hold a transcript or is a session store.
func (g globSet) wanted(path string) bool {
	name := filepath.Base(path)
	if !formats.IsCandidate(name) && name != formats.SessionsJSON {
		return false
	}
	p := filepath.ToSlash(path)
	for _, pat := range g.patterns {
		if ok, _ := doublestar.Match(filepath.ToSlash(pat), p); ok {
			return true
		}
	}
	return false
}

// mayHold reports whether files under directory dir can match a pattern,
// so that it is worth watching.
func (g globSet) mayHold(dir string) bool {
	for _, r := range g.roots {
		if within(dir, r) {
			return true
		}
	}
	return false
}

// walk calls file for every wanted regular file and dir for every
// directory under the roots. Roots that do not exist are skipped; other
// errors go to onErr.
func (g globSet) walk(file func(path string, info fs.FileInfo), dir func(path string), onErr func(error)) {
	for _, root := range g.roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				onErr(err)
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				dir(path)
				return nil
			}
			if !g.wanted(path) {
				return nil
			}
			info, err := os.Stat(path)
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					onErr(err)
				}
				return nil
			}
			if info.Mode().IsRegular() {
				file(path, info)
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			onErr(err)
		}
	}
}
