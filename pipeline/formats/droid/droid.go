package droid

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

// SubtypeSessionTotal is the Subtype of the entry carrying a session's
// token totals: a sum over the session's calls, not one call.
const SubtypeSessionTotal = "session_total"

// settingsSuffix ends a settings file's name; what precedes it is the
// session id.
const settingsSuffix = ".settings.json"

const maxCount = 1_000_000_000_000

// ErrBadCounter reports a token counter that is not an integer in
// 0…10¹².
var ErrBadCounter = errors.New("droid: token counter is not an integer in 0…10¹²")

// Detect reports whether the top-level fields of a JSON document are a
// Droid settings file's: a tokenUsage object.
func Detect(fields map[string]parse.Element) bool {
	u, ok := fields["tokenUsage"]
	return ok && len(u.Raw) > 0 && u.Raw[0] == '{'
}

type settings struct {
	Model      string `json:"model"`
	Provider   string `json:"providerLock"`
	ProviderTS string `json:"providerLockTimestamp"`
	SessionID  string `json:"sessionId"`
	TokenUsage struct {
		Input      json.RawMessage `json:"inputTokens"`
		Output     json.RawMessage `json:"outputTokens"`
		CacheWrite json.RawMessage `json:"cacheCreationTokens"`
		CacheRead  json.RawMessage `json:"cacheReadTokens"`
		Thinking   json.RawMessage `json:"thinkingTokens"`
		Total      json.RawMessage `json:"totalTokens"`
	} `json:"tokenUsage"`
}

// Parse appends the entry of one version of a Droid settings file to
// dst. cfg.Path names the session (its name without ".settings.json";
// else the file's stem); mtime is the file's modification time, the
// entry's time when the file records none. A document that is not a
// settings object, or a bad counter, gives a located *schema.DecodeError.
func Parse(dst []schema.Entry, cfg parse.Config, data []byte, fields map[string]parse.Element, mtime time.Time) ([]schema.Entry, []error) {
	at := fields["tokenUsage"]
	fail := func(err error) []error {
		return []error{&schema.DecodeError{Path: cfg.Path, Line: at.Line, Offset: at.Offset, Err: err}}
	}
	var s settings
	if err := json.Unmarshal(data, &s); err != nil {
		at = parse.Element{Line: 1}
		return dst, fail(err)
	}
	var u schema.Usage
	var thinking, total int64
	for _, c := range []struct {
		raw   json.RawMessage
		name  string
		field *int64
	}{
		{s.TokenUsage.Input, "inputTokens", &u.Input},
		{s.TokenUsage.Output, "outputTokens", &u.Output},
		{s.TokenUsage.CacheWrite, "cacheCreationTokens", &u.CacheWrite},
		{s.TokenUsage.CacheRead, "cacheReadTokens", &u.CacheRead},
		{s.TokenUsage.Thinking, "thinkingTokens", &thinking},
		{s.TokenUsage.Total, "totalTokens", &total},
	} {
		n, err := count(c.raw, c.name)
		if err != nil {
			return dst, fail(err)
		}
		*c.field = n
	}
	if u.Input+u.Output+u.CacheRead+u.CacheWrite+thinking == 0 {
		u.Output = total
	}
	u.Output += thinking
	u.Reasoning = thinking
	if u.Input+u.Output+u.CacheRead+u.CacheWrite == 0 {
		return dst, nil
	}
	session := SessionID(cfg.Path)
	e := schema.Entry{
		Format: schema.FormatDroid, Host: cfg.Host, Path: cfg.Path, Offset: at.Offset, Line: at.Line,
		SessionID: session, EntryID: "tokenUsage", Kind: schema.KindMessage, Role: schema.RoleAssistant,
		Meta: true, Subtype: SubtypeSessionTotal, Usage: &u, UsageKey: "droid:" + session,
	}
	provider := normalizeProvider(s.Provider)
	e.Model = NormalizeModel(s.Model)
	if e.Model == "" && cfg.Path != "" {
		e.Model = ModelFromTranscript(cfg.Path)
	}
	if provider == "" && e.Model != "" {
		provider = inferProvider(e.Model)
	}
	e.Provider = provider
	if ts, err := time.Parse(time.RFC3339Nano, s.ProviderTS); err == nil {
		e.TS = ts.UTC()
	} else if !mtime.IsZero() {
		e.TS = mtime.UTC().Truncate(time.Millisecond)
	}
	if cfg.Raw {
		var b bytes.Buffer
		if json.Compact(&b, data) == nil { // the document is pretty-printed
			e.Raw = b.Bytes()
		}
	}
	return append(dst, e), nil
}

// SessionID returns the session a settings file at path is of: its name
// without ".settings.json", else its stem.
func SessionID(path string) string {
	base := filepath.Base(path)
	if s, ok := strings.CutSuffix(base, settingsSuffix); ok {
		return s
	}
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// NormalizeModel spells a Droid model name as ccusage does (so that the
// price table finds it): "custom:" and bracketed parts dropped, lower
// case, dots, spaces and runs of dashes made one dash.
func NormalizeModel(model string) string {
	raw := strings.TrimPrefix(model, "custom:")
	var b strings.Builder
	depth := 0
	for _, c := range raw {
		switch {
		case c == '[':
			depth++
		case c == ']':
			depth = max(depth-1, 0)
		case depth == 0:
			b.WriteRune(c)
		}
	}
	lower := strings.ToLower(strings.TrimRight(strings.TrimSpace(b.String()), "-"))
	var out strings.Builder
	dash := false
	for _, c := range lower {
		if c == '.' || c == '-' || c == ' ' || c == '\t' || c == '\n' {
			if !dash {
				out.WriteByte('-')
				dash = true
			}
			continue
		}
		out.WriteRune(c)
		dash = false
	}
	return strings.Trim(out.String(), "-")
}

func normalizeProvider(p string) string {
	switch v := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(p)), "-", "_"); v {
	case "":
		return ""
	case "claude", "anthropic":
		return "anthropic"
	case "google", "google_ai", "gemini", "vertex", "vertex_ai":
		return "google"
	case "xai", "x_ai", "grok":
		return "xai"
	default:
		return v
	}
}

func inferProvider(model string) string {
	switch {
	case strings.Contains(model, "claude"), strings.Contains(model, "opus"), strings.Contains(model, "sonnet"), strings.Contains(model, "haiku"):
		return "anthropic"
	case strings.HasPrefix(model, "gpt-"), strings.Contains(model, "-gpt-"), strings.Contains(model, "chatgpt"),
		len(model) > 1 && model[0] == 'o' && model[1] >= '0' && model[1] <= '9':
		return "openai"
	case strings.Contains(model, "gemini"):
		return "google"
	case strings.Contains(model, "grok"):
		return "xai"
	}
	return ""
}

func count(raw json.RawMessage, field string) (int64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(string(raw), 64)
		if ferr != nil || f != float64(int64(f)) {
			return 0, fmt.Errorf("%w: tokenUsage.%s = %s", ErrBadCounter, field, raw)
		}
		n = int64(f)
	}
	if n < 0 || n > maxCount {
		return 0, fmt.Errorf("%w: tokenUsage.%s = %s", ErrBadCounter, field, raw)
	}
	return n, nil
}

// transcriptLines is how many lines of a session's transcript are looked
// at for its model (ccusage: 500).
const transcriptLines = 500

// ModelFromTranscript returns the model a settings file at path leaves
// unnamed, as ccusage finds it: in the <session>.jsonl transcript beside
// it, the first "Model:" (Droid's system notice names it), up to a quote,
// a backslash or a bracket, normalised ([NormalizeModel]); "" when there
// is none (the call is then unpriced, visibly).
func ModelFromTranscript(path string) string {
	base, ok := strings.CutSuffix(path, settingsSuffix)
	if !ok {
		return ""
	}
	f, err := os.Open(base + ".jsonl")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for n := 0; n < transcriptLines && sc.Scan(); n++ {
		_, tail, ok := strings.Cut(sc.Text(), "Model:")
		if !ok {
			continue
		}
		if i := strings.IndexAny(tail, `\"[`); i >= 0 {
			tail = tail[:i]
		}
		if m := NormalizeModel(strings.TrimSpace(tail)); m != "" {
			return m
		}
	}
	return ""
}
