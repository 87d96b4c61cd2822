package formats

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// IsCandidate reports whether a file name may hold a transcript: it ends
// in ".jsonl", or is a pi/OpenClaw archive of one (".jsonl.bak.<ts>",
// ".jsonl.reset.<ts>", ".jsonl.deleted.<ts>"). Whether it really is a
// transcript is decided by [Detect] from its content.
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
	return false
}

// SessionsJSON is the name of the OpenClaw session store read beside pi
// transcripts for session metadata.
const SessionsJSON = "sessions.json"

// Found is a file found by [Walk].
type Found struct {
	Path string
	Size int64
	// Meta is true for session metadata files (sessions.json), false
	// for transcript candidates.
	Meta bool
}

// Walk finds the transcript candidates under roots, recursively, and the
// sessions.json metadata files beside them. A root that is a file is
// returned whatever its name. Each file is returned once, even when
// reached through several roots or links to the same file. Files are
// returned sorted by path within each root. Unreadable directories are
// reported to onErr and skipped; a root that does not exist is an error.
func Walk(roots []string, onErr func(error)) ([]Found, error) {
	var out []Found
	seen := make(map[fileID]bool)
	add := func(path string, info fs.FileInfo, meta bool) {
		if id, ok := idOf(info); ok {
			if seen[id] {
				return
			}
			seen[id] = true
		}
		out = append(out, Found{Path: path, Size: info.Size(), Meta: meta})
	}
	for _, root := range roots {
		info, err := os.Stat(root)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			add(root, info, filepath.Base(root) == SessionsJSON)
			continue
		}
		start := len(out)
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if path == root {
					return err
				}
				onErr(err)
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				return nil
			}
			name := d.Name()
			meta := name == SessionsJSON
			if !meta && !IsCandidate(name) {
				return nil
			}
			info, err := os.Stat(path) // follow links to files
			if err != nil {
				onErr(err)
				return nil
			}
			if info.Mode().IsRegular() {
				add(path, info, meta)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		slices.SortFunc(out[start:], func(a, b Found) int { return strings.Compare(a.Path, b.Path) })
	}
	return out, nil
}

type fileID struct{ dev, ino uint64 }

func idOf(info fs.FileInfo) (fileID, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino}, true
}
