package trajectory

import (
	"os"
	"path/filepath"
	"strings"
)

// besideTranscript returns the transcript path of a trajectory file named
// <stem>.trajectory.jsonl, or an archive of one
// (<stem>.trajectory.jsonl.<reason>.<ts>: OpenClaw archives a session's
// trajectory with its transcript on reset and delete): <stem>.jsonl in
// the same directory.
func besideTranscript(path string) (string, bool) {
	dir, name := filepath.Split(path)
	i := strings.Index(name, ".trajectory.jsonl")
	if i <= 0 {
		return "", false
	}
	if rest := name[i+len(".trajectory.jsonl"):]; rest != "" && rest[0] != '.' {
		return "", false
	}
	return dir + name[:i] + ".jsonl", true
}

// sessionFromPath returns the session id a trajectory file name encodes:
// the name without ".trajectory.jsonl", else without ".jsonl"; "unknown"
// for an empty path.
func sessionFromPath(path string) string {
	name := filepath.Base(path)
	if path == "" || name == "." || name == string(filepath.Separator) {
		return "unknown"
	}
	if t, ok := besideTranscript(name); ok {
		return strings.TrimSuffix(t, ".jsonl")
	}
	if stem, ok := strings.CutSuffix(name, ".jsonl"); ok && stem != "" {
		return stem
	}
	return name
}

// archiveReasons are the OpenClaw archive suffixes of a transcript:
// <file>.jsonl.<reason>.<ts>, and the repair backup <file>.jsonl.bak-<pid>-<ms>.
var archiveReasons = []string{"bak.", "reset.", "deleted.", "bak-"}

// transcriptOnDisk reports whether the transcript at path, or an archive
// of it, is a file on disk.
func transcriptOnDisk(path string) bool {
	if info, err := os.Stat(path); err == nil && info.Mode().IsRegular() {
		return true
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return false
	}
	prefix := filepath.Base(path) + "."
	for _, de := range entries {
		rest, ok := strings.CutPrefix(de.Name(), prefix)
		if !ok || de.IsDir() {
			continue
		}
		for _, r := range archiveReasons {
			if strings.HasPrefix(rest, r) && len(rest) > len(r) {
				return true
			}
		}
	}
	return false
}
