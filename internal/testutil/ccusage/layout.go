package ccusage

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Layout copies the transcript files into a new root under tb.TempDir in
// the shape the report of kind scans, and returns the root to pass to
// [Sessions], [Totals] or [MustRun]. See [Place] for where each file goes.
// Two files with one destination, or a file that cannot be placed or
// read, fail tb.
func Layout(tb testing.TB, kind Kind, files []string) string {
	tb.Helper()
	root := tb.TempDir()
	if err := LayoutInto(root, kind, files); err != nil {
		tb.Fatal(err)
	}
	return root
}

// LayoutInto is [Layout] into an existing directory root.
func LayoutInto(root string, kind Kind, files []string) error {
	seen := make(map[string]string, len(files))
	for _, f := range files {
		rel, err := Place(kind, f)
		if err != nil {
			return err
		}
		if prev, ok := seen[rel]; ok {
			return fmt.Errorf("%w: %s and %s both go to %s", ErrLayout, prev, f, rel)
		}
		seen[rel] = f
		if err := copyFile(f, filepath.Join(root, rel)); err != nil {
			return fmt.Errorf("ccusage: lay out %s: %w", f, err)
		}
	}
	return nil
}

// rolloutName matches a Codex rollout file name and captures its date.
var rolloutName = regexp.MustCompile(`^rollout-(\d{4})-(\d{2})-(\d{2})T`)

// Place returns where file goes under a root of kind, as a relative path
// in the OS's form. A path that already has the kind's shape keeps it from
// the marker directory on: the last "projects" followed by 2 to 4
// elements for Claude, "sessions" followed by 1 to 4 for Codex and by
// exactly 2 for pi, "agents/<agent>/sessions/<file>" for OpenClaw,
// "tmp/<project>/chats/" followed by 1 or 2 for Gemini.
// "session-state/<session>/events.jsonl" for Copilot, "threads/<file>"
// for Amp, "sessions/<project>/<file>" for Droid,
// "sessions/<cwd>/<session>/updates.jsonl" for Grok,
// "projects/<project>/chats/<chat>/chat-messages.json" for Codebuff,
// "projects/<project>/chats/<file>" for Qwen,
// "sessions/<group>/<session>/wire.jsonl" for Kimi.
// Otherwise the file's directory names the project:
//
//	Claude    projects/<dir>/<file>; a file in <s>/subagents/ goes to
//	          projects/<dir of s>/<s>/subagents/<file>, so ccusage counts it
//	          in session <s>
//	Codex     sessions/YYYY/MM/DD/<file> for rollout-YYYY-MM-DDT….jsonl,
//	          else sessions/<file>
//	Pi        sessions/<dir>/<file>
//	OpenClaw  agents/<dir>/sessions/<file>
//	Gemini    tmp/<dir>/chats/<file>
//	Copilot   session-state/<dir>/events.jsonl (<dir> the session)
//	Amp       threads/<dir>/<file>
//	Droid     sessions/<dir>/<file>
//	Grok      sessions/<"/"+dir above, URL-encoded>/<dir>/updates.jsonl
//	          (<dir> the session)
//	Codebuff  projects/<dir above>/chats/<dir>/chat-messages.json
//	Qwen      projects/<dir>/chats/<file>
//	Kimi      sessions/<dir of dir>/<dir>/wire.jsonl (<dir> the session)
//	OpenCode  opencode.db for a database (any name ending in .db), else
//	          storage/message/<dir>/<file>
//	Goose     data/sessions/sessions.db
//	Hermes    state.db
//
// It returns [ErrUnknownKind] for an undefined kind and [ErrLayout] for a
// file too shallow to name a project.
func Place(kind Kind, file string) (string, error) {
	if err := kind.Validate(); err != nil {
		return "", err
	}
	parts := strings.Split(filepath.ToSlash(filepath.Clean(file)), "/")
	name := parts[len(parts)-1]
	dir := func(up int) (string, error) { // name of the up-th ancestor directory
		i := len(parts) - 1 - up
		if i < 0 || parts[i] == "" || parts[i] == "." || parts[i] == ".." {
			return "", fmt.Errorf("%w: %s: no directory %d levels up to name the project", ErrLayout, file, up)
		}
		return parts[i], nil
	}
	join := func(elems ...string) string { return filepath.Join(elems...) }

	switch kind {
	case Claude:
		if rest, ok := after(parts, "projects", 2, 4); ok {
			return join(append([]string{"projects"}, rest...)...), nil
		}
		if p, _ := dir(1); p == "subagents" {
			session, err := dir(2)
			if err != nil {
				return "", err
			}
			project, err := dir(3)
			if err != nil {
				return "", err
			}
			return join("projects", project, session, "subagents", name), nil
		}
		project, err := dir(1)
		if err != nil {
			return "", err
		}
		return join("projects", project, name), nil
	case Codex:
		if rest, ok := after(parts, "sessions", 1, 4); ok {
			return join(append([]string{"sessions"}, rest...)...), nil
		}
		if m := rolloutName.FindStringSubmatch(name); m != nil {
			return join("sessions", m[1], m[2], m[3], name), nil
		}
		return join("sessions", name), nil
	case Pi:
		if rest, ok := after(parts, "sessions", 2, 2); ok {
			return join(append([]string{"sessions"}, rest...)...), nil
		}
		project, err := dir(1)
		if err != nil {
			return "", err
		}
		return join("sessions", project, name), nil
	case Gemini:
		if rest, ok := after(parts, "tmp", 3, 4); ok && rest[1] == "chats" {
			return join(append([]string{"tmp"}, rest...)...), nil
		}
		project, err := dir(1)
		if err != nil {
			return "", err
		}
		return join("tmp", project, "chats", name), nil
	case Copilot:
		if rest, ok := after(parts, "session-state", 2, 2); ok {
			return join(append([]string{"session-state"}, rest...)...), nil
		}
		session, err := dir(1)
		if err != nil {
			return "", err
		}
		return join("session-state", session, "events.jsonl"), nil
	case Amp:
		if rest, ok := after(parts, "threads", 1, 1); ok {
			return join("threads", rest[0]), nil
		}
		project, err := dir(1)
		if err != nil {
			return "", err
		}
		return join("threads", project, name), nil // ccusage walks threads/ recursively
	case Droid:
		if rest, ok := after(parts, "sessions", 2, 2); ok {
			return join(append([]string{"sessions"}, rest...)...), nil
		}
		project, err := dir(1)
		if err != nil {
			return "", err
		}
		return join("sessions", project, name), nil
	case Grok:
		if rest, ok := after(parts, "sessions", 3, 3); ok && rest[2] == "updates.jsonl" {
			return join(append([]string{"sessions"}, rest...)...), nil
		}
		session, err := dir(1)
		if err != nil {
			return "", err
		}
		project, err := dir(2)
		if err != nil {
			return "", err
		}
		return join("sessions", url.PathEscape("/"+project), session, "updates.jsonl"), nil
	case Codebuff:
		if rest, ok := after(parts, "projects", 4, 4); ok && rest[1] == "chats" && rest[3] == "chat-messages.json" {
			return join(append([]string{"projects"}, rest...)...), nil
		}
		chat, err := dir(1)
		if err != nil {
			return "", err
		}
		project, err := dir(2)
		if err != nil {
			return "", err
		}
		return join("projects", project, "chats", chat, "chat-messages.json"), nil
	case Qwen:
		if rest, ok := after(parts, "projects", 3, 3); ok && rest[1] == "chats" {
			return join(append([]string{"projects"}, rest...)...), nil
		}
		project, err := dir(1)
		if err != nil {
			return "", err
		}
		return join("projects", project, "chats", name), nil
	case Kimi:
		if rest, ok := after(parts, "sessions", 3, 3); ok {
			return join(append([]string{"sessions"}, rest...)...), nil
		}
		session, err := dir(1)
		if err != nil {
			return "", err
		}
		group, err := dir(2)
		if err != nil {
			return "", err
		}
		return join("sessions", group, session, "wire.jsonl"), nil
	case OpenCode:
		if rest, ok := after(parts, "storage", 3, 3); ok {
			return join(append([]string{"storage"}, rest...)...), nil
		}
		if strings.HasSuffix(name, ".db") {
			return "opencode.db", nil
		}
		session, err := dir(1)
		if err != nil {
			return "", err
		}
		return join("storage", "message", session, name), nil
	case Goose:
		return join("data", "sessions", "sessions.db"), nil
	case Hermes:
		return "state.db", nil
	default: // OpenClaw
		if rest, ok := after(parts, "agents", 3, 3); ok && rest[1] == "sessions" {
			return join(append([]string{"agents"}, rest...)...), nil
		}
		agent, err := dir(1)
		if err != nil {
			return "", err
		}
		return join("agents", agent, "sessions", name), nil
	}
}

// after returns the path elements after the last element equal to marker,
// if there are from lo to hi of them.
func after(parts []string, marker string, lo, hi int) ([]string, bool) {
	for i := len(parts) - 2; i >= 0; i-- {
		if parts[i] == marker {
			rest := parts[i+1:]
			return rest, len(rest) >= lo && len(rest) <= hi
		}
	}
	return nil, false
}

// copyFile copies src to dst, creating dst's directories.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
