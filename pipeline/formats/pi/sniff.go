package pi

import "github.com/sessionpipe/sessionpipe/pipeline/jsonl"

// Sniff reports whether one line looks like a pi transcript line, by the
// detection rule of the format spec (§8):
//
//   - a session header: an object with type "session", a string id and a
//     string cwd, and neither jid (Fluux) nor userId (m4dtimes); or
//   - for files whose first line is not a header (OpenClaw transcripts cut
//     by gateway compaction): an object with type "message" whose
//     message.role is user, toolResult, bashExecution, custom (v2:
//     hookMessage), or assistant with a usage.cacheRead counter.
//
// Claude Code lines (type "user"/"assistant") never match. Only the first
// JSON value of the line is read, and it must be valid JSON. Sniff does
// not allocate.
func Sniff(line []byte) bool {
	var s jsonl.Scanner
	s.Reset(line)
	if !s.EnterObject() {
		return false
	}
	var typ, role jsonl.Value
	var hasID, hasCWD, foreign, cacheRead bool
	for s.NextField() {
		switch string(s.Key()) {
		case "type":
			typ = s.Value()
		case "id":
			hasID = s.Value().Kind() == jsonl.String
		case "cwd":
			hasCWD = s.Value().Kind() == jsonl.String
		case "jid", "userId":
			foreign = true
		case "message":
			if !s.EnterObject() {
				continue
			}
			for s.NextField() {
				switch string(s.Key()) {
				case "role":
					role = s.Value()
				case "usage":
					if s.EnterObject() {
						for s.NextField() {
							if string(s.Key()) == "cacheRead" {
								cacheRead = s.Value().Kind() == jsonl.Number
							}
						}
					}
				}
			}
		}
	}
	if s.Err() != nil {
		return false
	}
	switch {
	case typ.Equal("session"):
		return hasID && hasCWD && !foreign
	case typ.Equal("message"):
		switch {
		case role.Equal("assistant"):
			return cacheRead
		case role.Equal("user"), role.Equal("toolResult"), role.Equal("bashExecution"),
			role.Equal("custom"), role.Equal("hookMessage"):
			return true
		}
	}
	return false
}
