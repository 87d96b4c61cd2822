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

// watchSet matches paths against the configured watches and walks the
// directories they can match.
//
// A watch is a file, a directory (every file under it, at any depth) or a
// glob ("**" for any number of directories). A path that exists is taken
// as it is, even if its name holds glob characters; one that does not
// exist and holds none is a file or directory that may appear later.
//
// A watchSet is owned by one goroutine (the tailer's loop): walk keeps
// the matches of the paths it saw, so that a rescan of thousands of
// known files matches none of them against the patterns again.
type watchSet struct {
	watches []watch
	roots   []string // directories to walk: the outermost bases

	known   map[string]int // path → watch index, of the paths walks saw
	visited int            // paths the last walk matched

	// left, when set, receives during walk every regular file that a
	// watch's patterns match but that is not followed because of its name
	// (not a transcript candidate, see formats.IsCandidate, nor a session
	// store): a file under a watch is either followed or reported.
	left    func(path string)
	outside map[string]bool // path → a watch's patterns match it, of the names not read
}

// watch is one configured watch, resolved.
type watch struct {
	given string // as configured
	file  string // a regular file given by name: stat it, walk nothing
	pats  []pattern
}

// pattern is one doublestar pattern (slash-separated) with the static
// directory it starts from and how deep below it a match may lie.
type pattern struct {
	pat   string
	base  string // OS path
	depth int    // directories below base a match may be in; -1: any
}

func newWatchSet(given []string) watchSet {
	var s watchSet
	for _, g := range given {
		w := watch{given: g}
		p := filepath.Clean(g)
		info, err := os.Stat(p)
		switch {
		case err == nil && info.IsDir():
			w.pats = []pattern{newPattern(quoteMeta(filepath.ToSlash(p)) + "/**")}
		case err == nil:
			w.file = p
			w.pats = []pattern{newPattern(quoteMeta(filepath.ToSlash(p)))}
		case !formats.HasMeta(p):
			// Not there yet: a file, or a directory, may appear.
			q := quoteMeta(filepath.ToSlash(p))
			w.pats = []pattern{newPattern(q), newPattern(q + "/**")}
		default:
			w.pats = []pattern{newPattern(filepath.ToSlash(p))}
		}
		s.watches = append(s.watches, w)
		for _, pt := range w.pats {
			s.roots = append(s.roots, pt.base)
		}
	}
	slices.Sort(s.roots)
	s.roots = slices.Compact(s.roots)
	// Drop roots inside other roots: walking the outer one covers them.
	var kept []string
	for _, r := range s.roots {
		if len(kept) > 0 && within(r, kept[len(kept)-1]) {
			continue
		}
		kept = append(kept, r)
	}
	s.roots = kept
	return s
}

func newPattern(pat string) pattern {
	base, rest := doublestar.SplitPattern(pat)
	p := pattern{pat: pat, base: filepath.FromSlash(base), depth: strings.Count(rest, "/")}
	if strings.Contains(rest, "**") {
		p.depth = -1
	}
	return p
}

// quoteMeta escapes the glob characters of a literal path.
func quoteMeta(path string) string {
	if !formats.HasMeta(path) {
		return path
	}
	var b strings.Builder
	for _, c := range path {
		if strings.ContainsRune(`*?[]{}\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// isFollowedName reports whether a file name may be followed: a
// transcript candidate, a session store or a whole-file document
// candidate.
func isFollowedName(name string) bool {
	return formats.IsCandidate(name) || name == formats.SessionsJSON || formats.IsDocumentCandidate(name)
}

// match returns the index of the first watch that path matches, or -1.
// Only names that may hold a transcript, and session stores, match.
func (s *watchSet) match(path string) int {
	if !isFollowedName(filepath.Base(path)) {
		return -1
	}
	p := filepath.ToSlash(path)
	for i := range s.watches {
		for _, pt := range s.watches[i].pats {
			if ok, _ := doublestar.Match(pt.pat, p); ok {
				return i
			}
		}
	}
	return -1
}

// cachedMatch is match, remembered across walks.
func (s *watchSet) cachedMatch(path string) int {
	if !isFollowedName(filepath.Base(path)) {
		return -1
	}
	s.visited++
	w, ok := s.known[path]
	if !ok {
		w = s.match(path)
		s.known[path] = w
	}
	return w
}

// leftOut reports whether path, a name not read, is matched by a watch's
// patterns: a file the name filter alone leaves out. Remembered across
// walks, as cachedMatch.
func (s *watchSet) leftOut(path string) bool {
	out, ok := s.outside[path]
	if !ok {
		p := filepath.ToSlash(path)
	watches:
		for i := range s.watches {
			for _, pt := range s.watches[i].pats {
				if ok, _ := doublestar.Match(pt.pat, p); ok {
					out = true
					break watches
				}
			}
		}
		s.outside[path] = out
	}
	return out
}

// wanted reports whether path is a file to follow.
func (s *watchSet) wanted(path string) bool { return s.match(path) >= 0 }

// mayHold reports whether directory dir, or a directory below it, can
// hold files that match, so that it is worth walking and watching.
func (s *watchSet) mayHold(dir string) bool {
	for i := range s.watches {
		for _, pt := range s.watches[i].pats {
			if !within(dir, pt.base) {
				continue
			}
			if pt.depth < 0 || depthBelow(dir, pt.base) <= pt.depth {
				return true
			}
		}
	}
	return false
}

// depthBelow is the number of path elements of dir below base, which
// holds it.
func depthBelow(dir, base string) int {
	rel := strings.TrimPrefix(dir[len(base):], string(filepath.Separator))
	if rel == "" {
		return 0
	}
	return strings.Count(rel, string(filepath.Separator)) + 1
}

// walk calls file for every wanted regular file, with the index of the
// watch it matched, and dir for every directory worth watching under the
// roots. Symbolic links to files are followed, to directories not (a
// root that is one is). Roots that do not exist are skipped; other errors
// go to onErr.
func (s *watchSet) walk(file func(path string, info fs.FileInfo, watch int), dir func(path string), onErr func(error)) {
	if s.known == nil || len(s.known) > 2*s.visited+1024 {
		s.known = make(map[string]int) // forget the paths gone since
		s.outside = make(map[string]bool)
	}
	s.visited = 0
	for _, root := range s.roots {
		if s.fileRoot(root, file, dir, onErr) {
			continue
		}
		info, err := os.Stat(root)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				onErr(err)
			}
			continue
		}
		if info.IsDir() {
			s.walkDir(root, file, dir, onErr)
		}
	}
}

// walkDir walks directory path: one ReadDir, no sorting, no path
// cleaning, a stat only of the names that may match.
func (s *watchSet) walkDir(path string, file func(path string, info fs.FileInfo, watch int), dir func(path string), onErr func(error)) {
	if !s.mayHold(path) {
		return
	}
	dir(path)
	d, err := os.Open(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			onErr(err)
		}
		return
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		onErr(err) // and go on with what was read
	}
	prefix := path
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	for _, e := range entries {
		p := prefix + e.Name()
		if e.IsDir() {
			s.walkDir(p, file, dir, onErr)
			continue
		}
		w := s.cachedMatch(p)
		if w < 0 {
			if s.left != nil && !isFollowedName(e.Name()) && s.leftOut(p) {
				if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
					s.left(p)
				}
			}
			continue
		}
		info, err := os.Stat(p)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				onErr(err)
			}
			continue
		}
		if info.Mode().IsRegular() {
			file(p, info, w)
		}
	}
}

// fileRoot handles a root that only files given by name need: they are
// looked at directly, and their directory watched, without listing it.
// It reports false when root needs a walk.
func (s *watchSet) fileRoot(root string, file func(path string, info fs.FileInfo, watch int), dir func(path string), onErr func(error)) bool {
	var files []string
	for i := range s.watches {
		w := &s.watches[i]
		for _, pt := range w.pats {
			if !within(pt.base, root) {
				continue
			}
			if w.file == "" {
				return false
			}
			files = append(files, w.file)
		}
	}
	if _, err := os.Stat(root); err != nil {
		return true // not there (yet)
	}
	dir(root)
	for _, path := range files {
		info, err := os.Stat(path)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				onErr(err)
			}
			continue
		}
		switch w := s.match(path); {
		case !info.Mode().IsRegular():
		case w >= 0:
			file(path, info, w)
		case s.left != nil:
			s.left(path) // named by a watch, and its name is not read
		}
	}
	return true
}

// waitsOn reports whether watch i has a directory to wait on: the
// directory its matches start from exists.
func (s *watchSet) waitsOn(i int) bool {
	_, ok := s.waitDir(i)
	return ok
}

// waitDir returns the first directory the matches of watch i start from
// that exists, and true; else the first one, and false.
func (s *watchSet) waitDir(i int) (string, bool) {
	pats := s.watches[i].pats
	for _, pt := range pats {
		if info, err := os.Stat(pt.base); err == nil && info.IsDir() {
			return pt.base, true
		}
	}
	return pats[0].base, false
}
