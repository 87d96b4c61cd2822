package claude

import (
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

// intern remembers the last string read for a field that repeats from line
// to line (sessionId, cwd, version, model, …), so that a repeat costs a
// comparison instead of an allocation.
type intern struct{ s string }

// get returns the text of string value v, or "" for any other kind.
func (c *intern) get(v jsonl.Value) string {
	if v.Kind() != jsonl.String {
		return ""
	}
	raw := v.Raw()
	if len(raw) == 0 {
		return ""
	}
	// Unescaped bytes equal to a valid string are themselves valid UTF-8,
	// so they decode to exactly that string.
	if !v.Escaped() && string(raw) == c.s {
		return c.s
	}
	c.s = v.String()
	return c.s
}

// maxLabels bounds the label table and the unknown-type log: a file with
// ever new values costs an allocation per line, not unbounded memory.
const maxLabels = 256

// labels interns the strings of small vocabularies: line types, subtypes,
// stop reasons, tool names, "progress:<data.type>".
type labels struct {
	m   map[string]string
	key []byte
}

// get returns prefix + ":" + the text of v, or prefix alone when v is not
// a non-empty string; with an empty prefix, the text of v alone.
func (l *labels) get(prefix string, v jsonl.Value) string {
	has := v.Kind() == jsonl.String && len(v.Raw()) > 0
	if !has {
		return prefix
	}
	k := append(l.key[:0], prefix...)
	if prefix != "" {
		k = append(k, ':')
	}
	if v.Escaped() {
		k = append(k, 0) // keeps escaped raw text apart from plain text
	}
	k = append(k, v.Raw()...)
	l.key = k
	if s, ok := l.m[string(k)]; ok {
		return s
	}
	s := v.String()
	if prefix != "" {
		s = prefix + ":" + s
	}
	if l.m == nil {
		l.m = make(map[string]string)
	}
	if len(l.m) < maxLabels {
		l.m[string(k)] = s
	}
	return s
}

// usageKey is the usage key of a line with the message and request ids
// cut from it.
type usageKey struct {
	key       string // "claude:<id>:<req>", "claude:<id>", or "" without id
	messageID string
	requestID string
}

// usageKeys remembers the last key built: the lines of one response,
// often adjacent, share it.
type usageKeys struct {
	last usageKey
	buf  []byte
}

// get returns the key for message id id and request id req (either may be
// absent).
func (u *usageKeys) get(id, req jsonl.Value) usageKey {
	hasID := id.Kind() == jsonl.String && len(id.Raw()) > 0
	hasReq := req.Kind() == jsonl.String && len(req.Raw()) > 0
	if !hasID {
		k := usageKey{}
		if hasReq {
			k.requestID = req.String()
		}
		return k
	}
	last := &u.last
	if !id.Escaped() && !req.Escaped() && last.key != "" &&
		string(id.Raw()) == last.messageID && hasReq == (last.requestID != "") &&
		(!hasReq || string(req.Raw()) == last.requestID) {
		return *last
	}
	b := append(u.buf[:0], "claude:"...)
	b = id.AppendText(b)
	n := len(b)
	if hasReq {
		b = append(b, ':')
		b = req.AppendText(b)
	}
	u.buf = b
	key := string(b)
	*last = usageKey{key: key, messageID: key[len("claude:"):n]}
	if hasReq {
		last.requestID = key[n+1:]
	}
	return *last
}
