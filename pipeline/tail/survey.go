package tail

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// A Survey is what a [Tailer] given the same watches would find under
// them now, without following anything: see [SurveyWatches].
type Survey struct {
	// Watches holds one WatchSurvey per watch, in the order given.
	Watches []WatchSurvey

	// Dirs is the number of directories a Tailer would add a file
	// notification watch on (none with Config.Poll): the inotify
	// watches it needs on Linux. A directory reached under two paths (a
	// watch that is a link to a directory another watch walks) counts
	// once, as inotify watches it once.
	Dirs int

	// LeftOut lists the regular files the watches match that a Tailer
	// would not follow because of their names (not transcript candidates,
	// see formats.IsCandidate, nor session stores), sorted by path.
	LeftOut []string

	// Databases lists the agents' SQLite databases the watches match
	// (OpenCode's opencode.db, Goose's sessions.db, by their names): a
	// Tailer polls them instead of tailing them. Sorted by path.
	Databases []string

	// Errors holds what could not be read under the watches (a
	// directory without read or search permission...): a Tailer skips
	// those and goes on, as the survey did.
	Errors []error
}

// WatchSurvey is what one watch matches now.
type WatchSurvey struct {
	Watch string // as given

	// Dir is the directory its matches start from: the first that
	// exists, else the first (the one to create).
	Dir string

	// Waits reports whether Dir exists: a Tailer waits on it for files
	// to appear.
	Waits bool

	// Files are the files a Tailer would follow for this watch: the
	// regular files, with names that may hold a transcript, that it is
	// the first watch to find. A file found under two names (a link)
	// is listed once, under the name found first.
	Files []SurveyFile
}

// SurveyFile is a file a watch matches, with its stat result (links
// followed).
type SurveyFile struct {
	Path string
	Info fs.FileInfo
}

// SurveyWatches walks watches as a [Tailer] with Config.Watch set to them
// walks them at start, with the same code: the same files, the same
// filtering, the same directories. It reads directories and stats files,
// and opens none of them; its result is a snapshot that changes as the
// files do.
//
// It returns a *[ConfigError] wrapping [ErrInvalidConfig] for the first
// watch that [Config.Validate] would refuse (not absolute, or not there
// and not a valid glob), and nothing else: what cannot be read is in
// [Survey.Errors].
func SurveyWatches(watches []string) (*Survey, error) {
	if err := validateWatches(watches); err != nil {
		return nil, err
	}
	ws := newWatchSet(watches)
	sv := &Survey{Watches: make([]WatchSurvey, len(ws.watches))}
	ws.left = func(path string) {
		if isDatabaseName(filepath.Base(path)) {
			sv.Databases = append(sv.Databases, path)
			return
		}
		sv.LeftOut = append(sv.LeftOut, path)
	}
	seen := make(map[fileID]bool)
	dirs := make(map[any]bool) // by identity: inotify watches an inode once, whatever the path
	ws.walk(
		func(path string, info fs.FileInfo, watch int) {
			// As Tailer.found: one file per identity, the first path.
			id, ok := idOf(info)
			if !ok || seen[id] {
				return
			}
			seen[id] = true
			sv.Watches[watch].Files = append(sv.Watches[watch].Files, SurveyFile{Path: path, Info: info})
		},
		func(dir string) {
			var key any = dir
			if info, err := os.Stat(dir); err == nil {
				if id, ok := idOf(info); ok {
					key = id
				}
			}
			dirs[key] = true
		},
		func(err error) { sv.Errors = append(sv.Errors, err) },
	)
	sv.Dirs = len(dirs)
	slices.Sort(sv.Databases)
	sv.Databases = slices.Compact(sv.Databases)
	slices.Sort(sv.LeftOut)
	sv.LeftOut = slices.Compact(sv.LeftOut)
	for i, w := range ws.watches {
		sv.Watches[i].Watch = w.given
		sv.Watches[i].Dir, sv.Watches[i].Waits = ws.waitDir(i)
	}
	return sv, nil
}
