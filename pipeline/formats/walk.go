package formats

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/sessionpipe/sessionpipe/pipeline/discover"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/goose"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/hermes"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/kilo"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/opencode"
)

// IsCandidate reports whether a file name may hold a transcript: it ends
// in ".jsonl", or is a pi/OpenClaw archive of one (".jsonl.bak.<ts>",
// ".jsonl.reset.<ts>", ".jsonl.deleted.<ts>", and the backup that
// OpenClaw's session file repair writes before dropping malformed lines,
// ".jsonl.bak-<pid>-<ms>"). Whether it really is a transcript is decided
// from its content by a [Decoder]. A repair backup holds the whole file
// as it was, so most of its records are also in the repaired file: the
// consumers count each record once (by its key and usage key).
func IsCandidate(name string) bool {
	if strings.HasSuffix(name, ".jsonl") {
		return true
	}
	i := strings.Index(name, ".jsonl.")
	if i < 0 {
		return false
	}
	rest := name[i+len(".jsonl."):]
	for _, reason := range []string{"bak.", "reset.", "deleted."} {
		if strings.HasPrefix(rest, reason) && len(rest) > len(reason) {
			return true
		}
	}
	return isRepairBackup(rest)
}

// isRepairBackup reports whether rest, what follows ".jsonl." in a name,
// is "bak-<pid>-<ms>" (OpenClaw's repairSessionFileIfNeeded:
// `${sessionFile}.bak-${process.pid}-${Date.now()}`): two runs of digits.
func isRepairBackup(rest string) bool {
	tail, ok := strings.CutPrefix(rest, "bak-")
	if !ok {
		return false
	}
	pid, ms, ok := strings.Cut(tail, "-")
	return ok && isDigits(pid) && isDigits(ms)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Found is a file found by [Walk].
type Found struct {
	Path string
	Size int64
	// Meta is true for session stores (sessions.json), false for
	// transcript candidates.
	Meta bool
	// Doc is true for a whole-file document candidate (see
	// [IsDocumentCandidate]): read whole, by [ReadDocument].
	Doc bool
	// Database is true for a SQLite database that may be an agent's
	// (OpenCode's opencode.db, Goose's sessions.db, Kilo's kilo.db,
	// Hermes's state.db; see [IsDatabaseName]): read by opencode.ReadDB,
	// goose.ReadDB, kilo.ReadDB or hermes.ReadDB, not by lines.
	Database bool
	// OpenCodeMessage is true for a whole-file JSON message of OpenCode
	// before 1.2 (storage/message/<session>/<message>.json): read whole,
	// one message.
	OpenCodeMessage bool
}

// IsDatabaseName reports whether a file name is one an agent gives its
// SQLite database (opencode.db and opencode-<channel>.db, kilo.db,
// Goose's sessions.db, Hermes's state.db). The name only makes a file a
// candidate: its tables decide whose it is, and a database of another
// program under such a name is skipped and counted.
func IsDatabaseName(name string) bool {
	return opencode.IsDatabaseName(name) || name == goose.DatabaseName || kilo.IsDatabaseName(name) || name == hermes.DatabaseName
}

// Walk finds the files that the paths a user gave name, by the one rule
// the tailer's watches follow too (package discover: what a path, a
// directory or a glob names, '\' an escape in a pattern, dotfiles, links).
// Each path is a file (read whatever its name; a ".json" name as a
// whole-file document), a directory (every transcript candidate, see
// [IsCandidate], and session store under it, at any depth) or a glob in
// doublestar syntax ("~/.claude/projects/**/*.jsonl"; a matched file is
// read whatever its name, a matched directory is walked as a directory
// given). A link to a directory given is followed, one met inside a
// directory is not. Each file is returned once, even when reached through
// several paths or links. Files are returned sorted by path within each
// path given.
//
// Only regular files are returned; the check is made before any file is
// opened. A path given that is missing, unreadable, not a regular file or
// directory, or a glob that matches nothing is the returned error (with
// nothing found). Inside a directory or among a glob's matches, what
// cannot be read and what is not a regular file (a FIFO, a device, a
// socket, a link to one; errors wrapping [ErrNotRegular]) is reported to
// onSkip and left out. Regular files under a directory whose names are
// neither transcript candidates nor session stores are left out silently:
// see [WalkAll] to hear of them.
func Walk(paths []string, onSkip func(error)) ([]Found, error) {
	return WalkAll(paths, onSkip, nil)
}

// WalkAll is [Walk] that also calls leftOut, when not nil, with every
// regular file under a directory given or matched that is left out
// because of its name (neither
// a transcript candidate, see [IsCandidate], nor a document candidate,
// see [IsDocumentCandidate], nor a session store: a sidecar such as
// .meta.json, a lock, notes), so
// that every file a user pointed at is either read or counted.
func WalkAll(paths []string, onSkip func(error), leftOut func(path string)) ([]Found, error) {
	w := walker{seen: make(map[FileID]bool), onSkip: onSkip, leftOut: leftOut}
	for _, p := range paths {
		start := len(w.out)
		if err := w.path(p); err != nil {
			return nil, err
		}
		slices.SortFunc(w.out[start:], func(a, b Found) int { return strings.Compare(a.Path, b.Path) })
	}
	return w.out, nil
}

type walker struct {
	out     []Found
	seen    map[FileID]bool
	onSkip  func(error)
	leftOut func(path string)
}

// path adds what one path given names (discover.Resolve): a file named
// is checked here, a directory or a glob walked by discover's rule.
func (w *walker) path(p string) error {
	set := discover.NewSet([]string{p})
	t := set.Target(0)
	switch t.Kind {
	case discover.KindDir:
		// Named explicitly: a directory that cannot be listed is an
		// error now, not an empty result later.
		d, err := os.Open(p)
		if err != nil {
			return err
		}
		d.Close()
		w.walk(set)
		return nil
	case discover.KindGlob:
		if !errors.Is(t.Err, fs.ErrNotExist) {
			return t.Err
		}
		if err := discover.Validate(p); err != nil {
			return fmt.Errorf("glob %s: %w", p, err)
		}
		w.walk(set)
		if set.Hits(0) == 0 {
			return fmt.Errorf("%s: %w", p, ErrNoMatch)
		}
		return nil
	case discover.KindMissing:
		return t.Err
	}
	if !t.Info.Mode().IsRegular() {
		return notRegular(p, t.Info.Mode())
	}
	// Named explicitly: a file that cannot be opened is an error now,
	// not an empty result later.
	f, err := OpenRegular(p)
	if err != nil {
		return err
	}
	f.Close()
	w.addNamed(p, t.Info)
	w.markDatabase(p, true)
	return nil
}

// HasMeta reports whether p holds a character a glob pattern treats
// specially: discover.HasMeta, the one rule of the offline commands, the
// tailer and their PATH checks.
func HasMeta(p string) bool { return discover.HasMeta(p) }

// walk adds the files set names: a file a glob matches whatever its
// name, a file under a directory (given, or matched by a glob) by its
// name.
func (w *walker) walk(set *discover.Set) {
	set.Walk(discover.Visitor{
		Take: func(path string, m discover.Match) bool { return m.Named || isReadName(path) },
		File: func(path string, info fs.FileInfo, m discover.Match) {
			if m.Named {
				w.addNamed(path, info)
				w.markDatabase(path, true)
				return
			}
			name := filepath.Base(path)
			w.add(path, info, name == SessionsJSON)
			w.markDatabase(path, false)
		},
		LeftOut: func(path string, _ fs.FileInfo, _ discover.Match) {
			if w.leftOut != nil {
				w.leftOut(path)
			}
		},
		NotRegular: func(path string, info fs.FileInfo, _ discover.Match) { w.onSkip(notRegular(path, info.Mode())) },
		Err:        w.onSkip,
	})
}

// isReadName reports whether a file under a directory is read by its
// name: a transcript candidate, a session store, a document candidate, an
// agent's database, an OpenCode message.
func isReadName(path string) bool {
	name := filepath.Base(path)
	return name == SessionsJSON || IsDatabaseName(name) || opencode.IsDocumentPath(path) || IsCandidate(name) || IsDocumentCandidate(name)
}

// addNamed adds a file named by a path given or a glob: read whatever
// its name, a ".json" name as a whole-file document.
func (w *walker) addNamed(path string, info fs.FileInfo) {
	meta := IsSessionStore(path)
	w.addAs(path, info, meta, !meta && strings.HasSuffix(path, ".json"))
}

// markDatabase marks the file just added as a database when it is named
// explicitly or by a glob (read whatever its name) and starts as a SQLite
// database, or, under a directory, when its name is an agent database's
// (there names decide what is read: the walk opens none of the files it
// finds, which cost an open and a read per transcript); and as an
// OpenCode message (not a whole-file document of another agent) when its
// path is one's.
func (w *walker) markDatabase(path string, named bool) {
	if len(w.out) == 0 || w.out[len(w.out)-1].Path != path {
		return // a second name of a file already added
	}
	f := &w.out[len(w.out)-1]
	switch {
	case named && opencode.IsSQLite(path), !named && IsDatabaseName(filepath.Base(path)):
		f.Database, f.Doc = true, false
	case opencode.IsDocumentPath(path):
		f.OpenCodeMessage, f.Doc = true, false
	}
}

func (w *walker) add(path string, info fs.FileInfo, meta bool) {
	w.addAs(path, info, meta, !meta && IsDocumentCandidate(filepath.Base(path)))
}

func (w *walker) addAs(path string, info fs.FileInfo, meta, doc bool) {
	if id, ok := IDOf(info); ok {
		if w.seen[id] {
			return
		}
		w.seen[id] = true
	}
	w.out = append(w.out, Found{Path: path, Size: info.Size(), Meta: meta, Doc: doc})
}

// FileID is a file's identity on its machine: its device and inode. Two
// paths with the same FileID are one file (a link, a bind mount, a
// symbolic link to a directory); a renamed file keeps it.
type FileID struct{ Dev, Ino uint64 }

// IDOf returns the identity of a file from its stat result; ok is false
// on a platform whose stat does not give one.
func IDOf(info fs.FileInfo) (id FileID, ok bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return FileID{}, false
	}
	return FileID{Dev: uint64(st.Dev), Ino: st.Ino}, true
}
