package discover

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// HasMeta reports whether p holds a character a pattern treats specially:
// '*', '?', '[', '{', or the escape '\'. Such a path is a pattern unless a
// file or directory of that very name exists. It is the one rule of the
// offline commands, the tailer and their PATH checks.
func HasMeta(p string) bool { return strings.ContainsAny(p, `*?[{\`) }

// QuoteMeta returns the pattern that matches the literal path p only: its
// glob characters and '\' escaped.
func QuoteMeta(p string) string {
	if !HasMeta(p) {
		return p
	}
	var b strings.Builder
	for _, c := range p {
		if strings.ContainsRune(`*?[]{}\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// ExpandHome returns p with a leading "~" or "~/" replaced by home; any
// other path, and every path when home is empty, unchanged ("~user" is
// not expanded).
func ExpandHome(p, home string) string {
	switch {
	case home == "":
		return p
	case p == "~":
		return home
	case strings.HasPrefix(p, "~/"):
		return filepath.Join(home, p[2:])
	}
	return p
}

// Validate reports, as an error wrapping [ErrBadPattern], a path given
// that does not exist and is not a valid pattern. A path that exists is
// valid whatever it holds.
func Validate(p string) error {
	if _, err := os.Stat(p); err == nil {
		return nil
	}
	if !doublestar.ValidatePattern(filepath.ToSlash(filepath.Clean(p))) {
		return fmt.Errorf("%s: %w", p, ErrBadPattern)
	}
	return nil
}

// Kind is what a path given is, see [Resolve].
type Kind int

// The kinds of a path given.
const (
	KindFile    Kind = iota // exists and is not a directory: names itself
	KindDir                 // an existing directory: every file under it
	KindMissing             // not there, no glob character: a file or directory that may appear
	KindGlob                // not there (or not to be looked at), holds a glob character: a pattern
)

// Target is one path given, resolved by [Resolve].
type Target struct {
	Given string      // as given
	Kind  Kind        //
	Info  fs.FileInfo // of KindFile and KindDir (links followed)
	Err   error       // the stat error of KindMissing and KindGlob
	pats  []pattern
}

// pattern is one doublestar pattern (slash-separated) with the static
// directory it starts from and how deep below it a match may lie.
type pattern struct {
	pat   string
	base  string // OS path, unescaped
	depth int    // directories below base a match may be in; -1: any
	under bool   // a directory's "/**": what it matches is under a path given, not named
}

// Resolve resolves one path given (see the package documentation). The
// path is cleaned first; it is looked at once, so a path that appears
// later as a file or directory keeps its kind until resolved again.
func Resolve(given string) Target {
	t := Target{Given: given}
	p := filepath.Clean(given)
	info, err := os.Stat(p)
	q := QuoteMeta(filepath.ToSlash(p))
	switch {
	case err == nil && info.IsDir():
		t.Kind, t.Info = KindDir, info
		t.pats = []pattern{newPattern(q+"/**", true)}
	case err == nil:
		t.Kind, t.Info = KindFile, info
		t.pats = []pattern{newPattern(q, false)}
	case !HasMeta(p):
		t.Kind, t.Err = KindMissing, err
		t.pats = []pattern{newPattern(q, false), newPattern(q+"/**", true)}
	default:
		t.Kind, t.Err = KindGlob, err
		t.pats = []pattern{newPattern(filepath.ToSlash(p), false)}
	}
	return t
}

func newPattern(pat string, under bool) pattern {
	base, rest := doublestar.SplitPattern(pat)
	p := pattern{pat: pat, base: filepath.FromSlash(base), depth: strings.Count(rest, "/"), under: under}
	if strings.Contains(rest, "**") {
		p.depth = -1
	}
	return p
}

// Base returns the directory the matches of the target's first pattern
// start from: the directory given, the directory of a file given, a
// pattern's static prefix.
func (t Target) Base() string { return t.pats[0].base }

// within reports whether path is dir or below it; every relative path is
// below ".".
func within(path, dir string) bool {
	if dir == "." {
		return !filepath.IsAbs(path) && path != ".." && !strings.HasPrefix(path, ".."+string(filepath.Separator))
	}
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// depthBelow is the number of path elements of dir below base, which
// holds it.
func depthBelow(dir, base string) int {
	rel := dir
	if base != "." {
		rel = strings.TrimPrefix(dir[len(base):], string(filepath.Separator))
	} else if dir == "." {
		rel = ""
	}
	if rel == "" {
		return 0
	}
	return strings.Count(rel, string(filepath.Separator)) + 1
}
