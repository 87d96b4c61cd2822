package discover

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/bmatcuk/doublestar/v4"
)

// Match says how a path belongs to a [Set].
type Match struct {
	// Target is the index of the first path given that names the path.
	Target int
	// Named is true when the path is the file given or a pattern matches
	// it; false when it is under a directory given, or under a directory
	// a pattern matched. The offline commands read a named file whatever
	// its name, and a file under a directory only by its name.
	Named bool
}

// Set is the paths a user gave, resolved: it matches paths against them
// and walks the directories that can hold matches.
//
// A Set is owned by one goroutine: it remembers what it matched (the
// paths of the last walks, the directories met) so that a rescan of
// thousands of known files matches none of them against the patterns
// again.
type Set struct {
	targets []Target
	roots   []string // directories to walk: the outermost bases

	known   map[string]Match // path → its match (Target -1: none), of the files walks saw
	dirs    map[string]int   // directory → first target a pattern of which matches it or a directory above it; -1
	visited int              // paths the last walk matched
	hits    []int            // per target, the paths its patterns matched in the last walk
}

// NewSet resolves every path given ([Resolve]), in order: when several
// name one path, the first does.
func NewSet(given []string) *Set {
	s := &Set{hits: make([]int, len(given))}
	for _, g := range given {
		t := Resolve(g)
		s.targets = append(s.targets, t)
		for _, pt := range t.pats {
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
	s.reset()
	return s
}

func (s *Set) reset() {
	s.known = make(map[string]Match)
	s.dirs = make(map[string]int)
}

// Len returns the number of paths given.
func (s *Set) Len() int { return len(s.targets) }

// Target returns path given i, resolved.
func (s *Set) Target(i int) Target { return s.targets[i] }

// Hits returns how many paths (files of any type, and directories) target
// i named itself during the last [Set.Walk], and was the first path given
// to: for a pattern, 0 when it matches nothing (the files under a
// directory it matched are not counted); for a directory given, 0.
func (s *Set) Hits(i int) int { return s.hits[i] }

// Match reports whether path, a file, belongs to the set, and how. It
// does not look at the file system.
func (s *Set) Match(path string) (Match, bool) {
	m := s.match(path)
	return m, m.Target >= 0
}

func (s *Set) match(path string) Match {
	p := filepath.ToSlash(path)
	owner := s.dirOwner(filepath.Dir(path))
	for i := range s.targets {
		for _, pt := range s.targets[i].pats {
			if within(path, pt.base) {
				if ok, _ := doublestar.Match(pt.pat, p); ok {
					return Match{Target: i, Named: !pt.under}
				}
			}
		}
		if i == owner {
			break
		}
	}
	return Match{Target: owner}
}

// dirOwner returns the first target a pattern of which matches dir or a
// directory above it, or -1.
func (s *Set) dirOwner(dir string) int {
	if o, ok := s.dirs[dir]; ok {
		return o
	}
	owner := -1
	if parent := filepath.Dir(dir); parent != dir {
		owner = s.dirOwner(parent)
	}
	if i := s.matchDir(dir, owner); i >= 0 {
		owner = i
	}
	s.dirs[dir] = owner
	return owner
}

// matchDir returns the first target before limit (-1: any) a pattern of
// which matches directory dir itself, or -1.
func (s *Set) matchDir(dir string, limit int) int {
	p := filepath.ToSlash(dir)
	for i := range s.targets {
		if i == limit {
			break
		}
		for _, pt := range s.targets[i].pats {
			if pt.base != dir && within(dir, pt.base) {
				if ok, _ := doublestar.Match(pt.pat, p); ok {
					return i
				}
			}
		}
	}
	return -1
}

// MayHold reports whether directory dir, or a directory below it, can
// hold files that belong to the set, so that it is worth walking and
// watching.
func (s *Set) MayHold(dir string) bool {
	for i := range s.targets {
		for _, pt := range s.targets[i].pats {
			if !within(dir, pt.base) {
				continue
			}
			if pt.depth < 0 || depthBelow(dir, pt.base) <= pt.depth {
				return true
			}
		}
	}
	return s.dirOwner(dir) >= 0
}

// WaitDir returns the first directory the matches of target i start from
// that exists, and true; else the first one, and false.
func (s *Set) WaitDir(i int) (string, bool) {
	pats := s.targets[i].pats
	for _, pt := range pats {
		if info, err := os.Stat(pt.base); err == nil && info.IsDir() {
			return pt.base, true
		}
	}
	return pats[0].base, false
}
