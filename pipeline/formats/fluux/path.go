package fluux

import (
	"path/filepath"
	"strings"
)

// historyName is the active session file of a JID directory.
const historyName = "history.jsonl"

// archiveDir is the directory of archived sessions inside a JID directory.
const archiveDir = "sessions"

// jidDir returns the name of the JID directory of a transcript path, or ""
// when path is not one. A transcript path is <jid>/history.jsonl or
// <jid>/sessions/YYYYMMDD-HHMMSS.jsonl, where the JID directory's name
// contains '@'; knowledge.jsonl and every other file of the memory
// directory are not transcripts. Only the path is inspected; detection
// from content is package formats' Decoder.
func jidDir(path string) string {
	dir, name := filepath.Split(path)
	dir = filepath.Clean(dir)
	switch {
	case name == historyName:
	case isArchiveName(name) && filepath.Base(dir) == archiveDir:
		dir = filepath.Dir(dir)
	default:
		return ""
	}
	jid := filepath.Base(dir)
	if !strings.Contains(jid, "@") {
		return ""
	}
	return jid
}

// isArchiveName reports whether name is YYYYMMDD-HHMMSS.jsonl, the name
// chrono's "%Y%m%d-%H%M%S" gives an archived session.
func isArchiveName(name string) bool {
	stem, ok := strings.CutSuffix(name, ".jsonl")
	if !ok || len(stem) != 15 || stem[8] != '-' {
		return false
	}
	for i := 0; i < len(stem); i++ {
		if i != 8 && (stem[i] < '0' || stem[i] > '9') {
			return false
		}
	}
	return true
}

// fallbackSession returns the session id of a file without header:
// "<jid>/<stem>" for a transcript path, "<parent>/<stem>" for another path
// inside a named directory, the stem alone for a bare file name, and "-"
// for a stream without a name.
func fallbackSession(path string) string {
	if path == "" {
		return "-"
	}
	name := filepath.Base(path)
	stem := strings.TrimSuffix(name, filepath.Ext(name))
	if stem == "" || stem == "." || stem == string(filepath.Separator) {
		return "-"
	}
	jid := jidDir(path)
	if jid == "" {
		parent := filepath.Base(filepath.Dir(path))
		if parent == archiveDir {
			parent = filepath.Base(filepath.Dir(filepath.Dir(path)))
		}
		if parent != "." && parent != string(filepath.Separator) {
			jid = parent
		}
	}
	if jid == "" {
		return stem
	}
	return jid + "/" + stem
}
