package discover

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Visitor receives what [Set.Walk] finds. Every file that belongs to the
// set goes to exactly one of File, LeftOut, NotRegular and Err; nil
// functions drop what they would receive.
type Visitor struct {
	// Take says whether a file that belongs is wanted, from its path and
	// match (a name rule: formats.IsCandidate, the tailer's names). Nil
	// takes every file. It is asked before the file is looked at.
	Take func(path string, m Match) bool
	// File receives every regular file taken (links followed: info is
	// the target's).
	File func(path string, info fs.FileInfo, m Match)
	// LeftOut receives every regular file not taken, so that every file
	// a user named is either read or counted.
	LeftOut func(path string, info fs.FileInfo, m Match)
	// NotRegular receives every file that is not a regular file or
	// directory (a FIFO, a device, a socket, a link to one), taken or
	// not: it must not be opened.
	NotRegular func(path string, info fs.FileInfo, m Match)
	// Dir receives every directory walked, before its entries.
	Dir func(path string)
	// Err receives what could not be read: a directory that cannot be
	// listed (its entries read before the error are walked), a file that
	// cannot be looked at (a link to nowhere; fs.ErrNotExist also when a
	// file went away during the walk).
	Err func(error)
}

// Walk walks the set's directories as the package documentation says:
// roots that do not exist are skipped; a directory is listed once, its
// entries in name order, and only the names that belong are looked at. A
// file given by name is looked at directly and its directory not listed.
func (s *Set) Walk(v Visitor) {
	if len(s.known) > 2*s.visited+1024 {
		s.reset() // forget the paths gone since
	}
	s.visited = 0
	clear(s.hits)
	for _, root := range s.roots {
		if s.fileRoot(root, v) {
			continue
		}
		info, err := os.Stat(root)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) && v.Err != nil {
				v.Err(err)
			}
			continue
		}
		if info.IsDir() {
			s.walkDir(root, v)
		}
	}
}

// walkDir walks directory path: one ReadDir, no path cleaning, a stat
// only of the names that belong.
func (s *Set) walkDir(path string, v Visitor) {
	if !s.MayHold(path) {
		return
	}
	if v.Dir != nil {
		v.Dir(path)
	}
	d, err := os.Open(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && v.Err != nil {
			v.Err(err)
		}
		return
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil && v.Err != nil {
		v.Err(err) // and go on with what was read
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	prefix := path
	switch {
	case path == ".":
		prefix = ""
	case !strings.HasSuffix(prefix, string(filepath.Separator)):
		prefix += string(filepath.Separator)
	}
	for _, e := range entries {
		p := prefix + e.Name()
		if e.IsDir() {
			if o := s.dirOwner(p); o >= 0 && s.targets[o].Kind == KindGlob && s.dirs[path] != o {
				s.hits[o]++ // matched here, not inherited
			}
			s.walkDir(p, v)
			continue
		}
		m, ok := s.cachedMatch(p)
		if !ok {
			continue
		}
		s.file(p, m, v)
	}
}

// cachedMatch is Match, remembered across walks.
func (s *Set) cachedMatch(path string) (Match, bool) {
	s.visited++
	m, ok := s.known[path]
	if !ok {
		m = s.match(path)
		s.known[path] = m
	}
	return m, m.Target >= 0
}

// file hands one file that belongs to v.
func (s *Set) file(path string, m Match, v Visitor) {
	if m.Named && s.targets[m.Target].Kind != KindDir {
		s.hits[m.Target]++
	}
	take := v.Take == nil || v.Take(path, m)
	info, err := os.Stat(path) // follow links
	if err != nil {
		if v.Err != nil {
			v.Err(err)
		}
		return
	}
	switch {
	case info.IsDir():
		// A link to a directory: not followed inside a walk.
	case !info.Mode().IsRegular():
		if v.NotRegular != nil {
			v.NotRegular(path, info, m)
		}
	case take:
		if v.File != nil {
			v.File(path, info, m)
		}
	case v.LeftOut != nil:
		v.LeftOut(path, info, m)
	}
}

// fileRoot handles a root that only files given by name need: they are
// looked at directly, and their directory handed to v.Dir, without
// listing it. It reports false when root needs a walk.
func (s *Set) fileRoot(root string, v Visitor) bool {
	var files []string
	for i := range s.targets {
		t := &s.targets[i]
		for _, pt := range t.pats {
			if !within(pt.base, root) {
				continue
			}
			if t.Kind != KindFile {
				return false
			}
			files = append(files, filepath.Clean(t.Given))
		}
	}
	if _, err := os.Stat(root); err != nil {
		return true // not there (yet)
	}
	if v.Dir != nil {
		v.Dir(root)
	}
	for _, path := range files {
		m, ok := s.Match(path)
		if !ok {
			continue
		}
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			continue // gone: not an error, it may come back
		}
		s.file(path, m, v)
	}
	return true
}
