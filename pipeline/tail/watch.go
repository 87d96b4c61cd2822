package tail

import (
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/sessionpipe/sessionpipe/pipeline/discover"
	"github.com/sessionpipe/sessionpipe/pipeline/formats"
)

// watchSet is the configured watches: which files they name and how to
// walk them is discover's rule, the one of the offline commands
// (formats.Walk); what is followed of them is decided here, by name.
//
// A watchSet is owned by one goroutine (the tailer's loop).
type watchSet struct {
	set     *discover.Set
	watches []watch

	// left, when set, receives during walk every regular file that a
	// watch names but that is not followed because of its name (not a
	// transcript candidate, see formats.IsCandidate, nor a session store
	// or a document candidate): a file under a watch is either followed
	// or reported.
	left func(path string)
}

// watch is one configured watch.
type watch struct {
	given string // as configured
}

func newWatchSet(given []string) watchSet {
	s := watchSet{set: discover.NewSet(given)}
	for _, g := range given {
		s.watches = append(s.watches, watch{given: g})
	}
	return s
}

// isFollowedName reports whether a file name may be followed: a
// transcript candidate, a session store or a whole-file document
// candidate.
func isFollowedName(name string) bool {
	return formats.IsCandidate(name) || name == formats.SessionsJSON || formats.IsDocumentCandidate(name)
}

// match returns the index of the first watch that names path, or -1.
// Only names that may hold a transcript, and session stores, match.
func (s *watchSet) match(path string) int {
	if !isFollowedName(filepath.Base(path)) {
		return -1
	}
	if m, ok := s.set.Match(path); ok {
		return m.Target
	}
	return -1
}

// wanted reports whether path is a file to follow.
func (s *watchSet) wanted(path string) bool { return s.match(path) >= 0 }

// mayHold reports whether directory dir, or a directory below it, can
// hold files that match, so that it is worth walking and watching.
func (s *watchSet) mayHold(dir string) bool { return s.set.MayHold(dir) }

// walk calls file for every regular file to follow, with the index of the
// watch it matched, and dir for every directory worth watching (see
// discover.Set.Walk). Files that vanish during the walk are no error;
// other errors go to onErr.
func (s *watchSet) walk(file func(path string, info fs.FileInfo, watch int), dir func(path string), onErr func(error)) {
	s.set.Walk(discover.Visitor{
		Take: func(path string, _ discover.Match) bool { return isFollowedName(filepath.Base(path)) },
		File: func(path string, info fs.FileInfo, m discover.Match) { file(path, info, m.Target) },
		LeftOut: func(path string, _ fs.FileInfo, _ discover.Match) {
			if s.left != nil {
				s.left(path)
			}
		},
		Dir: dir,
		Err: func(err error) {
			if !errors.Is(err, fs.ErrNotExist) {
				onErr(err)
			}
		},
	})
}

// waitsOn reports whether watch i has a directory to wait on: the
// directory its matches start from exists.
func (s *watchSet) waitsOn(i int) bool {
	_, ok := s.set.WaitDir(i)
	return ok
}

// waitDir returns the first directory the matches of watch i start from
// that exists, and true; else the first one, and false.
func (s *watchSet) waitDir(i int) (string, bool) { return s.set.WaitDir(i) }
