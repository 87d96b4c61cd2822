package pi

import "strings"

// SessionIDFromPath returns the session id that a transcript path encodes:
// the file name without its directory (either separator, / or \), without
// ".jsonl" and any archive suffix after it (".jsonl.bak.<ts>",
// ".jsonl.reset.<ts>", ".jsonl.deleted.<ts>", any ".jsonl.<reason>.<ts>"),
// and without the "<ISO timestamp>_" prefix of pi file names
// ("2025-12-24T00-32-27-967Z_<uuid>.jsonl" gives "<uuid>").
//
// It is the session id of a file without header (an OpenClaw transcript
// cut by gateway compaction), which equals the header id of its .bak
// archive, and the parent session id named by a fork header's
// parentSession path. A name without ".jsonl" is returned whole; an empty
// path gives "".
func SessionIDFromPath(path string) string {
	name := path
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.Index(name, ".jsonl"); i >= 0 {
		if rest := name[i+len(".jsonl"):]; rest == "" || rest[0] == '.' {
			name = name[:i]
		}
	}
	if i := strings.IndexByte(name, '_'); i >= 0 && i+1 < len(name) && isFileTimestamp(name[:i]) {
		name = name[i+1:]
	}
	return name
}

// isFileTimestamp reports whether s looks like the timestamp of a pi file
// name: an ISO 8601 time with ':' and '.' replaced by '-', such as
// "2025-12-24T00-32-27-967Z".
func isFileTimestamp(s string) bool {
	if len(s) < len("2006-01-02T15") || s[4] != '-' || s[7] != '-' || s[10] != 'T' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && c != '-' && c != 'T' && c != 'Z' {
			return false
		}
	}
	return true
}
