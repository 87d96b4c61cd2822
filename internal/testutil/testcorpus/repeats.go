package testcorpus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Repeats counts what [WriteRepeats] added.
type Repeats struct {
	// Compactions is the number of sessions given a second compaction
	// that re-appends earlier history (one compact_boundary each).
	Compactions int
	// Forks names the background copies written: the copy's session id
	// to the id of the session it copies.
	Forks map[string]string
	// OwnCalls is, per background copy, the number of API calls (message
	// ids) of its own lines, which are all it may count.
	OwnCalls map[string]int
}

// WriteRepeats adds to the Claude Code sessions under dir the shapes in
// which Claude Code writes history again, with the original uuids,
// timestamps and message ids:
//
//   - on every second session, a second /compact: a compact_boundary
//     before the session's last real prompt, followed by the session's
//     first turn re-appended verbatim (up to its last assistant line);
//   - on every third session, a background hand-off or --fork-session:
//     a new <id>.jsonl beside it that replays the session's lines up to
//     an assistant line in its middle byte for byte under the new
//     sessionId with "sessionKind":"bg", then goes on with lines of its
//     own (new uuids and message ids) while the original goes on longer.
//
// Subagent files and files with too few turns are left alone. Each API
// call must still count once, in the session where it first happened.
func WriteRepeats(tb testing.TB, dir string) Repeats {
	tb.Helper()
	var files []string
	require.NoError(tb, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".jsonl") && !strings.Contains(path, "subagents") &&
			strings.Contains(filepath.ToSlash(path), "claude/projects/") {
			files = append(files, path)
		}
		return err
	}))
	out := Repeats{Forks: map[string]string{}, OwnCalls: map[string]int{}}
	for i, path := range files {
		data, err := os.ReadFile(path)
		require.NoError(tb, err)
		lines := bytes.SplitAfter(data, []byte("\n"))
		if len(lines[len(lines)-1]) == 0 {
			lines = lines[:len(lines)-1]
		}
		info := make([]lineInfo, len(lines))
		for j, l := range lines {
			info[j] = readLineInfo(l)
		}
		if i%2 == 0 {
			if re := reappend(lines, info); re != nil {
				require.NoError(tb, os.WriteFile(path, bytes.Join(re, nil), 0o644))
				out.Compactions++
			}
		}
		if i%3 == 0 {
			id, fork, calls := forkBG(lines, info, i)
			if fork != nil {
				require.NoError(tb, os.WriteFile(filepath.Join(filepath.Dir(path), id+".jsonl"), bytes.Join(fork, nil), 0o644))
				out.Forks[id] = info[firstSession(info)].session
				out.OwnCalls[id] = calls
			}
		}
	}
	return out
}

// lineInfo is what WriteRepeats needs to know of a line.
type lineInfo struct {
	typ, uuid, session, ts string
	prompt                 bool // a real user input
}

func readLineInfo(line []byte) lineInfo {
	var m struct {
		Type      string `json:"type"`
		UUID      string `json:"uuid"`
		Session   string `json:"sessionId"`
		TS        string `json:"timestamp"`
		Meta      bool   `json:"isMeta"`
		Sidechain bool   `json:"isSidechain"`
		Message   struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &m) != nil {
		return lineInfo{}
	}
	var text string
	prompt := m.Type == "user" && !m.Meta && !m.Sidechain && json.Unmarshal(m.Message.Content, &text) == nil &&
		text != "" && !strings.HasPrefix(text, "<")
	return lineInfo{typ: m.Type, uuid: m.UUID, session: m.Session, ts: m.TS, prompt: prompt}
}

func firstSession(info []lineInfo) int {
	for i := range info {
		if info[i].session != "" {
			return i
		}
	}
	return 0
}

// reappend returns the lines with a compact_boundary and the first turn
// re-appended before the last prompt, or nil if the file has no two
// turns.
func reappend(lines [][]byte, info []lineInfo) [][]byte {
	var prompts []int
	for j := range info {
		if info[j].prompt {
			prompts = append(prompts, j)
		}
	}
	if len(prompts) < 3 {
		return nil
	}
	first, last := prompts[0], prompts[len(prompts)-1]
	end := -1 // the first turn, up to its last assistant line
	for j := first; j < prompts[1]; j++ {
		if info[j].typ == "assistant" {
			end = j + 1
		}
	}
	if end < 0 || info[last].ts == "" {
		return nil
	}
	boundary := fmt.Sprintf(`{"parentUuid":null,"logicalParentUuid":%q,"isSidechain":false,"userType":"external","sessionId":%q,"version":"2.1.39","type":"system","subtype":"compact_boundary","content":"Conversation compacted","isMeta":false,"timestamp":%q,"uuid":%q,"level":"info","compactMetadata":{"trigger":"manual","preTokens":120000}}`+"\n",
		info[last-1].uuid, info[last].session, info[last].ts, info[last].uuid+"-cb2")
	out := make([][]byte, 0, len(lines)+end-first+1)
	out = append(out, lines[:last]...)
	out = append(out, []byte(boundary))
	out = append(out, lines[first:end]...)
	return append(out, lines[last:]...)
}

// forkBG returns the id and lines of a background copy of the file and
// the number of API calls of its own lines, or a nil copy if the file is
// too short.
func forkBG(lines [][]byte, info []lineInfo, n int) (string, [][]byte, int) {
	var assistants []int
	for j := range info {
		if info[j].typ == "assistant" {
			assistants = append(assistants, j)
		}
	}
	if len(assistants) < 8 {
		return "", nil, 0
	}
	cut := assistants[len(assistants)/3] + 1 // the copy replays lines[:cut]
	own := min(len(lines)-cut, max((len(lines)-cut)/3, 1))
	orig := info[firstSession(info)].session
	id := fmt.Sprintf("b9%06x-0000-4000-8000-%012x", n, n)
	from := []byte(fmt.Sprintf(`"sessionId":%q`, orig))
	to := []byte(fmt.Sprintf(`"sessionId":%q,"sessionKind":"bg"`, id))
	out := make([][]byte, 0, cut+own)
	for _, l := range lines[:cut] {
		out = append(out, bytes.ReplaceAll(l, from, to))
	}
	calls := map[string]bool{}
	for _, l := range lines[cut : cut+own] {
		var m map[string]any
		if json.Unmarshal(l, &m) != nil {
			continue
		}
		if m["sessionId"] != nil {
			m["sessionId"], m["sessionKind"] = id, "bg"
		}
		for _, k := range []string{"uuid", "parentUuid", "requestId"} {
			if s, ok := m[k].(string); ok {
				m[k] = s + "-bg"
			}
		}
		if ts, ok := m["timestamp"].(string); ok {
			if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
				m["timestamp"] = t.Add(time.Millisecond).UTC().Format("2006-01-02T15:04:05.000Z")
			}
		}
		if msg, ok := m["message"].(map[string]any); ok {
			if s, ok := msg["id"].(string); ok && m["type"] == "assistant" {
				msg["id"] = s + "_bg"
				if msg["usage"] != nil {
					calls[s] = true
				}
			}
		}
		b, err := json.Marshal(m)
		if err != nil {
			continue
		}
		out = append(out, append(b, '\n'))
	}
	return id, out, len(calls)
}
