package discover

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// tree builds the files the cases of the offline commands' Walk and of
// the tailer's watches were written against, in one directory: nested
// directories, names not read, archives, dotfiles, names holding glob
// characters and '\', a FIFO, links to a file, a directory, a device and
// nowhere.
func tree(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	for _, name := range []string{
		"a/s1.jsonl", "a/sessions.json", "a/notes.txt", "b/s2.jsonl",
		"c/s.jsonl", "c/s.jsonl.bak-12-34", "c/sub/y.jsonl", "c/sub/x.meta.json",
		`e/c\d.jsonl`, "e/a*.jsonl", "e/ab.jsonl", "e/x[1]/k.jsonl",
		".h/.dot.jsonl", ".h/.d/v.jsonl",
		"g/1/s/q.jsonl", "g/1/s/deeper/no.jsonl", "g/2/s/r.jsonl", "g/2/x/no.jsonl",
		"transcript.log",
	} {
		p := filepath.Join(dir, name)
		require.NoError(tb, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(tb, os.WriteFile(p, []byte("{}\n"), 0o644))
	}
	require.NoError(tb, syscall.Mkfifo(filepath.Join(dir, "a", "fifo.jsonl"), 0o644))
	require.NoError(tb, os.Symlink("/dev/zero", filepath.Join(dir, "b", "zero.jsonl")))
	require.NoError(tb, os.MkdirAll(filepath.Join(dir, "d"), 0o755))
	require.NoError(tb, os.Symlink(filepath.Join(dir, "a", "s1.jsonl"), filepath.Join(dir, "d", "link.jsonl")))
	require.NoError(tb, os.Symlink(filepath.Join(dir, "a"), filepath.Join(dir, "d", "linkdir")))
	require.NoError(tb, os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "d", "dangling.jsonl")))
	require.NoError(tb, os.Symlink(filepath.Join(dir, "a"), filepath.Join(dir, "linkroot")))
	return dir
}

// byName is the name rule the cases walk with, a stand-in for the
// formats' and the tailer's: a named file whatever its name, else a
// .jsonl file or a session store.
func byName(path string, m Match) bool {
	return m.Named || strings.HasSuffix(path, ".jsonl") || filepath.Base(path) == "sessions.json"
}

// TestSet_Walk is the rule, with the cases of formats.Walk's tests (the
// hostile directory, globs of files and of directories, paths named) and
// of the tailer's watch tests (names left out, a glob of everything, the
// survey's nested globs and links, the name holding '\'), on one tree.
// Each file found is "rel named|under|left|not-regular|error"; hits are
// what each path given matched itself.
func TestSet_Walk(t *testing.T) {
	dir := tree(t)
	tests := []struct {
		name  string
		given []string
		want  []string
		hits  []int
	}{
		{"Directory", []string{"a", "b"}, []string{
			"a/fifo.jsonl not-regular", "a/notes.txt left", "a/s1.jsonl under", "a/sessions.json under",
			"b/s2.jsonl under 1", "b/zero.jsonl not-regular 1",
		}, []int{0, 0}},
		{"DirectoryNested", []string{"c"}, []string{
			"c/s.jsonl under", "c/s.jsonl.bak-12-34 left", "c/sub/x.meta.json left", "c/sub/y.jsonl under",
		}, []int{0}},
		{"GlobOfFiles", []string{"**/s*.json*"}, []string{
			"a/s1.jsonl named", "a/sessions.json named", "b/s2.jsonl named",
			"c/s.jsonl named", "c/s.jsonl.bak-12-34 named",
		}, []int{5}},
		// A directory a glob matches names every file under it; a link to
		// a directory inside a walk is not followed.
		{"GlobOfDirectories", []string{"?", "a/f*"}, []string{
			"a/fifo.jsonl not-regular", "a/notes.txt left", "a/s1.jsonl under", "a/sessions.json under",
			"b/s2.jsonl under", "b/zero.jsonl not-regular",
			"c/s.jsonl under", "c/s.jsonl.bak-12-34 left", "c/sub/x.meta.json left", "c/sub/y.jsonl under",
			"d/dangling.jsonl error", "d/link.jsonl under",
			`e/a*.jsonl under`, "e/ab.jsonl under", `e/c\d.jsonl under`, "e/x[1]/k.jsonl under",
			"g/1/s/deeper/no.jsonl under", "g/1/s/q.jsonl under", "g/2/s/r.jsonl under", "g/2/x/no.jsonl under",
		}, []int{6, 0}}, // a/fifo.jsonl is a's: the first path given names it
		{"GlobOfEverything", []string{"c/*"}, []string{
			"c/s.jsonl named", "c/s.jsonl.bak-12-34 named", "c/sub/x.meta.json left", "c/sub/y.jsonl under",
		}, []int{3}},
		{"GlobOfJSONL", []string{"c/**/*.jsonl"}, []string{"c/s.jsonl named", "c/sub/y.jsonl named"}, []int{2}},
		{"NestedGlobs", []string{"g/*/s/*.jsonl"}, []string{"g/1/s/q.jsonl named", "g/2/s/r.jsonl named"}, []int{2}},
		{"GlobWithoutMatch", []string{"**/*.parquet"}, nil, []int{0}},
		{"GlobUnderMissingBase", []string{"nowhere/*/x.jsonl"}, nil, []int{0}},
		{"NamedFiles", []string{"transcript.log", "a/fifo.jsonl", "b/zero.jsonl", "d/link.jsonl"}, []string{
			"a/fifo.jsonl not-regular 1", "b/zero.jsonl not-regular 2", "d/link.jsonl named 3", "transcript.log named",
		}, []int{1, 1, 1, 1}},
		{"NamedFileTwice", []string{"a/s1.jsonl", "a/s1.jsonl"}, []string{"a/s1.jsonl named", "a/s1.jsonl named"}, []int{2, 0}},
		{"FirstGivenWins", []string{"c/sub/*.jsonl", "c"}, []string{
			"c/s.jsonl under 1", "c/s.jsonl.bak-12-34 left 1", "c/sub/x.meta.json left 1", "c/sub/y.jsonl named",
		}, []int{1, 0}},
		// Links: a link to a directory given is followed, one met inside a
		// walk is not ("**" neither), a link to a file is.
		{"LinkToDirectoryGiven", []string{"linkroot"}, []string{
			"linkroot/fifo.jsonl not-regular", "linkroot/notes.txt left", "linkroot/s1.jsonl under", "linkroot/sessions.json under",
		}, []int{0}},
		{"LinkInsideWalk", []string{"d/**/*.jsonl"}, []string{"d/dangling.jsonl error", "d/link.jsonl named"}, []int{2}},
		{"DotFiles", []string{".h"}, []string{".h/.d/v.jsonl under", ".h/.dot.jsonl under"}, []int{0}},
		{"DotFilesByGlob", []string{"*/*.jsonl"}, []string{
			".h/.dot.jsonl named", "a/fifo.jsonl not-regular", "a/s1.jsonl named", "b/s2.jsonl named", "b/zero.jsonl not-regular",
			"c/s.jsonl named", "d/dangling.jsonl error", "d/link.jsonl named", `e/a*.jsonl named`, "e/ab.jsonl named", `e/c\d.jsonl named`,
		}, []int{11}},
		// '\' escapes in a pattern; a name that exists is that file.
		{"BackslashNameThatExists", []string{`e/c\d.jsonl`}, []string{`e/c\d.jsonl named`}, []int{1}},
		{"BackslashEscapesStar", []string{`e/a\*.jsonl`}, []string{`e/a*.jsonl named`}, []int{1}},
		{"BackslashEscaped", []string{`e/c\\d.jsonl`}, []string{`e/c\d.jsonl named`}, []int{1}},
		{"BackslashEscapesInBase", []string{`e/x\[1\]/*.jsonl`}, []string{"e/x[1]/k.jsonl named"}, []int{1}},
		{"BracketsInDirectoryGiven", []string{"e/x[1]"}, []string{"e/x[1]/k.jsonl under"}, []int{0}},
		{"BracketsAsClass", []string{"e/[ab]*.jsonl"}, []string{`e/a*.jsonl named`, "e/ab.jsonl named"}, []int{2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var given []string
			for _, g := range tc.given {
				given = append(given, filepath.Join(dir, g))
			}
			s := NewSet(given)
			var got []string
			note := func(path, what string, m Match) {
				rel, err := filepath.Rel(dir, path)
				require.NoError(t, err)
				if m.Target > 0 {
					what += fmt.Sprint(" ", m.Target)
				}
				got = append(got, filepath.ToSlash(rel)+" "+what)
				// A notification of the path gives the walk's answer.
				mm, ok := s.Match(path)
				require.True(t, ok, "Match(%s)", path)
				require.Equal(t, m, mm, "Match(%s)", path)
				require.True(t, s.MayHold(filepath.Dir(path)), "MayHold(%s)", filepath.Dir(path))
			}
			s.Walk(Visitor{
				Take: byName,
				File: func(path string, _ fs.FileInfo, m Match) {
					if m.Named {
						note(path, "named", m)
					} else {
						note(path, "under", m)
					}
				},
				LeftOut:    func(path string, _ fs.FileInfo, m Match) { note(path, "left", m) },
				NotRegular: func(path string, _ fs.FileInfo, m Match) { note(path, "not-regular", m) },
				Err: func(err error) {
					var pe *fs.PathError
					require.ErrorAs(t, err, &pe)
					m, _ := s.Match(pe.Path)
					note(pe.Path, "error", m)
				},
			})
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			require.Equal(t, want, got)
			for i := range tc.given {
				require.Equal(t, tc.hits[i], s.Hits(i), "Hits(%d) of %s", i, tc.given[i])
			}
		})
	}
}

func TestResolve(t *testing.T) {
	dir := tree(t)
	tests := []struct {
		path string
		want Kind
	}{
		{"a", KindDir},
		{"linkroot", KindDir},
		{"a/s1.jsonl", KindFile},
		{"a/fifo.jsonl", KindFile},
		{`e/c\d.jsonl`, KindFile},
		{"e/x[1]", KindDir},
		{"later/s.jsonl", KindMissing},
		{"*.jsonl", KindGlob},
		{"s?.jsonl", KindGlob},
		{"[ab].jsonl", KindGlob},
		{"{a,b}.jsonl", KindGlob},
		{`a\b.jsonl`, KindGlob},
	}
	for _, tc := range tests {
		got := Resolve(filepath.Join(dir, tc.path))
		require.Equal(t, tc.want, got.Kind, "Resolve(%q).Kind", tc.path)
	}
}

func TestValidate(t *testing.T) {
	dir := tree(t)
	for _, p := range []string{"a", `e/c\d.jsonl`, "**/*.jsonl", `a\*.jsonl`, "later"} {
		require.NoError(t, Validate(filepath.Join(dir, p)), "Validate(%q)", p)
	}
	for _, p := range []string{"[", "a/{b", `a\`} {
		err := Validate(filepath.Join(dir, p))
		require.ErrorIs(t, err, ErrBadPattern, "Validate(%q)", p)
	}
	// A name that exists is valid, whatever it holds.
	odd := filepath.Join(dir, "[")
	require.NoError(t, os.WriteFile(odd, nil, 0o644))
	require.NoError(t, Validate(odd))
	require.False(t, errors.Is(Validate(odd), ErrBadPattern))
}

func TestQuoteMeta(t *testing.T) {
	dir := tree(t)
	for _, name := range []string{`e/c\d.jsonl`, "e/a*.jsonl", "e/x[1]/k.jsonl"} {
		p := filepath.Join(dir, name)
		s := NewSet([]string{QuoteMeta(p)})
		m, ok := s.Match(p)
		require.True(t, ok, name)
		require.Equal(t, Match{Named: true}, m, name)
	}
	s := NewSet([]string{QuoteMeta(filepath.Join(dir, "e/a*.jsonl"))})
	_, ok := s.Match(filepath.Join(dir, "e/ab.jsonl"))
	require.False(t, ok, "a quoted '*' matches itself only")
}

func TestExpandHome(t *testing.T) {
	for _, tc := range []struct{ in, home, want string }{
		{"~/.claude/projects/**/*.jsonl", "/home/u", "/home/u/.claude/projects/**/*.jsonl"},
		{"~", "/home/u", "/home/u"},
		{"~other/x", "/home/u", "~other/x"},
		{"/abs/~/x", "/home/u", "/abs/~/x"},
		{"~/x", "", "~/x"},
	} {
		require.Equal(t, tc.want, ExpandHome(tc.in, tc.home), "ExpandHome(%q, %q)", tc.in, tc.home)
	}
}
