package codebuff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Parser turns the messages of one chat-messages.json into entries. A
// Parser is not safe for concurrent use; use one per file and reading.
type Parser struct {
	cfg     parse.Config
	session string
	chatTS  time.Time // the time the chat id names
}

// New returns a parser for one chat-messages.json; cfg.Path names it: in
// Codebuff's layout, <channel>/projects/<project>/chats/<chat id>/
// chat-messages.json names the session "<channel>/<project>/<chat id>".
func New(cfg parse.Config) *Parser {
	p := &Parser{cfg: cfg}
	if cfg.Path == "" {
		return p
	}
	chatDir := filepath.Dir(cfg.Path)
	chat := filepath.Base(chatDir)
	project := filepath.Base(filepath.Dir(filepath.Dir(chatDir)))
	channel := filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(chatDir)))))
	if filepath.Base(cfg.Path) == "chat-messages.json" && filepath.Base(filepath.Dir(chatDir)) == "chats" {
		p.session = channel + "/" + project + "/" + chat
		p.chatTS = chatTime(chat)
	} else {
		base := filepath.Base(cfg.Path)
		p.session = strings.TrimSuffix(base, filepath.Ext(base))
	}
	return p
}

// Format returns [schema.FormatCodebuff].
func (p *Parser) Format() schema.Format { return schema.FormatCodebuff }

// Parse appends the entry of one message, given as one JSON object, to
// dst. A value that is not an object, invalid JSON, a timestamp of the
// wrong type or a token counter that is not an integer in 0…10¹² give a
// *schema.DecodeError located at the message (for a bad counter, with the
// entry itself without usage). Entries never alias line.Bytes.
func (p *Parser) Parse(dst []schema.Entry, line jsonl.Line) ([]schema.Entry, error) {
	raw := bytes.TrimSpace(line.Bytes)
	if len(raw) == 0 {
		return dst, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return dst, parse.Fail(&p.cfg, line, 0, fmt.Errorf("%w: %w", parse.ErrBadField, err))
	}
	if end := int(dec.InputOffset()); len(bytes.TrimSpace(raw[end:])) > 0 {
		return dst, parse.Fail(&p.cfg, line, end, fmt.Errorf("%w: more than one value", parse.ErrBadField))
	}
	m, ok := v.(map[string]any)
	if !ok {
		return dst, parse.Fail(&p.cfg, line, 0, parse.ErrNotObject)
	}
	e := parse.Base(&p.cfg, schema.FormatCodebuff, line, 0)
	var err error
	fail := func(ferr error) {
		if err == nil {
			err = parse.Fail(&p.cfg, line, 0, ferr)
		}
	}
	e.SessionID = p.session
	e.MessageID = str(m, "id")
	e.EntryID = e.MessageID
	if e.EntryID == "" {
		e.EntryID = parse.LineID(line.Number, 0)
	}
	if p.cfg.Raw {
		e.Raw = append([]byte(nil), raw...)
	}
	meta, _ := m["metadata"].(map[string]any)
	ts, found, ok := timestamp(m["timestamp"])
	if !found {
		ts, found, ok = timestamp(m["createdAt"])
	}
	if !found && meta != nil {
		ts, found, ok = timestamp(meta["timestamp"])
	}
	switch {
	case !ok:
		fail(fmt.Errorf("%w: timestamp", parse.ErrBadField))
	case found:
		e.TS = ts
	default:
		e.TS = p.chatTS
	}
	role := str(m, "variant")
	if role == "" {
		role = str(m, "role")
	}
	e.Kind, e.Subtype = schema.KindEvent, role
	switch role {
	case "user":
		e.Kind, e.Role = schema.KindMessage, schema.RoleUser
		if p.cfg.Text {
			e.Text = text(m)
		}
	case "ai", "agent", "assistant":
		e.Kind, e.Role = schema.KindMessage, schema.RoleAssistant
		if p.cfg.Text {
			e.Text = text(m)
		}
		u, model, uerr := usageOf(meta)
		if uerr != nil {
			fail(uerr)
			break
		}
		if mm := str(meta, "model"); mm != "" {
			model = mm
		}
		e.Model = model
		e.Provider = provider(model)
		if u.Total() > 0 {
			e.Usage = &u
			e.UsageKey = "codebuff:" + e.SessionID + ":" + e.EntryID
		}
	}
	if e.SessionID == "" {
		if err == nil {
			err = parse.Fail(&p.cfg, line, 0, fmt.Errorf("%w: session (the file's path)", parse.ErrMissingField))
		}
		return dst, err
	}
	return append(dst, e), err
}

// usageOf returns an assistant message's usage and the model its usage
// names: metadata.usage, else metadata.codebuff.usage, else the last run
// step's.
func usageOf(meta map[string]any) (schema.Usage, string, error) {
	if meta == nil {
		return schema.Usage{}, "", nil
	}
	if u, ok := meta["usage"].(map[string]any); ok {
		us, err := counters(u, "metadata.usage.")
		if err != nil || us.Total() > 0 {
			return us, str(u, "model"), err
		}
	}
	if cb, ok := meta["codebuff"].(map[string]any); ok {
		if u, ok := cb["usage"].(map[string]any); ok {
			us, err := counters(u, "metadata.codebuff.usage.")
			if err != nil || us.Total() > 0 {
				return us, str(u, "model"), err
			}
		}
	}
	hist, _ := dig(meta, "runState", "sessionState", "mainAgentState", "messageHistory").([]any)
	for i := len(hist) - 1; i >= 0; i-- {
		step, _ := hist[i].(map[string]any)
		if str(step, "role") != "assistant" {
			continue
		}
		po, _ := step["providerOptions"].(map[string]any)
		if po == nil {
			continue
		}
		u, _ := po["usage"].(map[string]any)
		cb, _ := po["codebuff"].(map[string]any)
		if u == nil && cb != nil {
			u, _ = cb["usage"].(map[string]any)
		}
		if u == nil {
			continue
		}
		us, err := counters(u, "metadata.runState…providerOptions.usage.")
		if err != nil {
			return schema.Usage{}, "", err
		}
		if us.Total() == 0 {
			continue
		}
		model := str(cb, "model")
		if model == "" {
			model = str(u, "model")
		}
		return us, model, nil
	}
	return schema.Usage{}, "", nil
}

// Names of the counters, by kind, as the providers behind Codebuff write
// them.
var (
	inputNames  = []string{"inputTokens", "input_tokens", "promptTokens", "prompt_tokens"}
	outputNames = []string{"outputTokens", "output_tokens", "completionTokens", "completion_tokens"}
	readNames   = []string{"cacheReadInputTokens", "cache_read_input_tokens"}
	writeNames  = []string{"cacheCreationInputTokens", "cache_creation_input_tokens", "cacheCreationTokens", "cache_creation_tokens", "cachedTokensCreated", "cached_tokens_created"}
	totalNames  = []string{"totalTokens", "total_tokens", "total"}
)

// counters converts a usage object to the disjoint convention: cached
// tokens named within the prompt (OpenAI's details) are taken out of the
// input, those named apart (Anthropic's) are not; a total beyond the parts
// is output.
func counters(u map[string]any, prefix string) (schema.Usage, error) {
	var err error
	pick := func(names []string) int64 {
		for _, n := range names {
			v, ok := u[n]
			if !ok || v == nil {
				continue
			}
			c, ok := count(v)
			if !ok {
				if err == nil {
					err = fmt.Errorf("%w: %s%s", parse.ErrImplausibleCount, prefix, n)
					if _, num := v.(json.Number); !num {
						err = fmt.Errorf("%w: %s%s", parse.ErrBadField, prefix, n)
					}
				}
				continue
			}
			if c > 0 {
				return c
			}
		}
		return 0
	}
	in := pick(inputNames)
	out := pick(outputNames)
	read := pick(readNames)
	write := pick(writeNames)
	total := pick(totalNames)
	var within int64
	for _, d := range [][2]string{{"promptTokensDetails", "cachedTokens"}, {"prompt_tokens_details", "cached_tokens"}} {
		if det, ok := u[d[0]].(map[string]any); ok {
			within = max(within, pick2(det, d[1], &err, prefix+d[0]+"."))
		}
	}
	if err != nil {
		return schema.Usage{}, err
	}
	if read == 0 && within > 0 {
		read = min(within, in)
		in -= read
	}
	known := in + read + out + write
	return schema.Usage{Input: in, Output: out + max(total-known, 0), CacheRead: read, CacheWrite: write}, nil
}

// pick2 reads one counter of a details object.
func pick2(det map[string]any, name string, err *error, field string) int64 {
	v, ok := det[name]
	if !ok || v == nil {
		return 0
	}
	c, ok := count(v)
	if !ok && *err == nil {
		*err = fmt.Errorf("%w: %s%s", parse.ErrBadField, field, name)
	}
	return c
}

// count decodes a token counter: an integer from 0 to 10¹².
func count(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	if i, err := n.Int64(); err == nil {
		return i, i >= 0 && i <= parse.MaxTokens
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || f < 0 || f > parse.MaxTokens {
		return 0, false
	}
	return int64(f), true
}

// timestamp decodes a message time: RFC 3339, or Unix seconds (below
// 10¹⁰) or milliseconds. found is false for none; ok false for a bad one.
func timestamp(v any) (t time.Time, found, ok bool) {
	switch x := v.(type) {
	case nil:
		return time.Time{}, false, true
	case string:
		if x == "" {
			return time.Time{}, false, true
		}
		t, err := time.Parse(time.RFC3339Nano, x)
		if err != nil {
			return time.Time{}, true, false
		}
		return t.UTC(), true, true
	case json.Number:
		n, err := x.Int64()
		if err != nil || n <= 0 {
			return time.Time{}, true, false
		}
		if n < 10_000_000_000 {
			n *= 1000
		}
		t := time.UnixMilli(n).UTC()
		if t.Year() > 9999 {
			return time.Time{}, true, false
		}
		return t, true, true
	}
	return time.Time{}, true, false
}

// chatTime reads the time a chat id names: "2026-01-02T03-04-05.000Z".
func chatTime(id string) time.Time {
	date, clock, ok := strings.Cut(id, "T")
	if !ok {
		return time.Time{}
	}
	clock = strings.Replace(strings.Replace(clock, "-", ":", 1), "-", ":", 1)
	t, err := time.Parse(time.RFC3339Nano, date+"T"+clock)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// text returns a message's text: content or text, when a string.
func text(m map[string]any) string {
	if s := str(m, "content"); s != "" {
		return s
	}
	return str(m, "text")
}

// str returns m[key] trimmed when it is a string.
func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return strings.TrimSpace(s)
}

// dig follows keys through nested objects.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// provider names the provider a model's name tells, as ccusage infers it.
func provider(model string) string {
	m := strings.ToLower(model)
	switch {
	case strings.HasPrefix(m, "claude-"), strings.HasPrefix(m, "anthropic/"), strings.HasPrefix(m, "anthropic."):
		return "anthropic"
	case strings.HasPrefix(m, "gpt-"), strings.HasPrefix(m, "o1"), strings.HasPrefix(m, "o3"), strings.HasPrefix(m, "o4"), strings.HasPrefix(m, "openai/"):
		return "openai"
	case strings.HasPrefix(m, "gemini"), strings.HasPrefix(m, "google/"):
		return "google"
	case strings.HasPrefix(m, "grok"), strings.HasPrefix(m, "xai/"):
		return "xai"
	case strings.HasPrefix(m, "openrouter/"):
		return "openrouter"
	}
	return ""
}

// Elements splits a chat-messages.json document (a JSON array) into its
// messages, each a line located in the file: Number its position from 1,
// Offset its first byte. A document that is not an array, or broken
// JSON, gives an error wrapping parse.ErrBadField with the offset where it
// failed.
func Elements(data []byte) ([]jsonl.Line, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%w: chat-messages.json at offset %d: %v", parse.ErrBadField, dec.InputOffset(), err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("%w: chat-messages.json is not an array", parse.ErrBadField)
	}
	var out []jsonl.Line
	for dec.More() {
		var raw json.RawMessage
		start := dec.InputOffset()
		if err := dec.Decode(&raw); err != nil {
			return out, fmt.Errorf("%w: chat-messages.json at offset %d: %v", parse.ErrBadField, dec.InputOffset(), err)
		}
		// InputOffset before Decode may sit before the separating comma
		// and blanks: the element starts at its first byte.
		end := dec.InputOffset()
		off := end - int64(len(raw))
		if off < start {
			off = start
		}
		out = append(out, jsonl.Line{Number: int64(len(out) + 1), Offset: off, Bytes: data[off:end]})
	}
	if _, err := dec.Token(); err != nil {
		return out, fmt.Errorf("%w: chat-messages.json at offset %d: %v", parse.ErrBadField, dec.InputOffset(), err)
	}
	return out, nil
}
