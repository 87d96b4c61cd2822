package amp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

// SubtypeLedgerEvent is the Subtype of a ledger event's entry that no
// assistant message of the thread stands for.
const SubtypeLedgerEvent = "ledger_event"

// maxCount is the largest token counter accepted.
const maxCount = 1_000_000_000_000

// ErrBadCounter reports a token counter that is not an integer in
// 0…10¹².
var ErrBadCounter = errors.New("amp: token counter is not an integer in 0…10¹²")

// Detect reports whether the top-level fields of a JSON document are an
// Amp thread's: a string id and a usageLedger object, or a messages array
// with the thread's version v or creation time created beside it.
func Detect(fields map[string]parse.Element) bool {
	id, ok := fields["id"]
	if !ok || len(id.Raw) == 0 || id.Raw[0] != '"' {
		return false
	}
	if l, ok := fields["usageLedger"]; ok && len(l.Raw) > 0 && l.Raw[0] == '{' {
		return true
	}
	m, ok := fields["messages"]
	if !ok || len(m.Raw) == 0 || m.Raw[0] != '[' {
		return false
	}
	_, v := fields["v"]
	_, created := fields["created"]
	return v || created
}

type thread struct {
	ID      string          `json:"id"`
	Created json.RawMessage `json:"created"`
	Title   string          `json:"title"`
	Env     struct {
		Initial struct {
			Trees []struct {
				URI string `json:"uri"`
			} `json:"trees"`
		} `json:"initial"`
	} `json:"env"`
}

type message struct {
	Role      string          `json:"role"`
	MessageID json.RawMessage `json:"messageId"`
	Content   json.RawMessage `json:"content"`
	Usage     *usage          `json:"usage"`
	Meta      struct {
		SentAt json.RawMessage `json:"sentAt"`
	} `json:"meta"`
	State struct {
		Type       string `json:"type"`
		StopReason string `json:"stopReason"`
	} `json:"state"`
}

type usage struct {
	Model      string          `json:"model"`
	Input      json.RawMessage `json:"inputTokens"`
	Output     json.RawMessage `json:"outputTokens"`
	CacheWrite json.RawMessage `json:"cacheCreationInputTokens"`
	CacheRead  json.RawMessage `json:"cacheReadInputTokens"`
	Total      json.RawMessage `json:"totalTokens"`
	Timestamp  string          `json:"timestamp"`
}

type part struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"toolUseID"`
	Run       struct {
		Status string          `json:"status"`
		Result json.RawMessage `json:"result"`
	} `json:"run"`
}

type ledgerEvent struct {
	ID          string          `json:"id"`
	Timestamp   string          `json:"timestamp"`
	Model       string          `json:"model"`
	ToMessageID json.RawMessage `json:"toMessageId"`
	Tokens      struct {
		Input  json.RawMessage `json:"input"`
		Output json.RawMessage `json:"output"`
		Total  json.RawMessage `json:"total"`
	} `json:"tokens"`
}

// Parse appends the entries of one version of an Amp thread document to
// dst: the thread's header, then one entry per message in order, then
// the ledger events no message stands for. fields are the document's
// top-level fields ([parse.Fields] of data). A message or event that
// cannot be read gives a located *schema.DecodeError (its line and
// offset in the file) and is left out, or kept without usage for a bad
// counter; the others are read all the same. Entries never alias data.
func Parse(dst []schema.Entry, cfg parse.Config, data []byte, fields map[string]parse.Element) ([]schema.Entry, []error) {
	var errs []error
	fail := func(at parse.Element, err error) {
		errs = append(errs, &schema.DecodeError{Path: cfg.Path, Line: at.Line, Offset: at.Offset, Err: err})
	}
	var th thread
	top := parse.Element{Raw: data, Line: 1}
	// The header's fields only: unmarshalling the document would scan
	// every message once more.
	head := []byte{'{'}
	for _, k := range []string{"id", "created", "title", "env"} {
		if f, ok := fields[k]; ok {
			if len(head) > 1 {
				head = append(head, ',')
			}
			head = append(head, '"')
			head = append(head, k...)
			head = append(head, '"', ':')
			head = append(head, f.Raw...)
		}
	}
	head = append(head, '}')
	if err := json.Unmarshal(head, &th); err != nil || th.ID == "" {
		if err == nil {
			err = fmt.Errorf("%w: id", parse.ErrMissingField)
		}
		fail(top, err)
		return dst, errs
	}
	session := th.ID
	base := func(at parse.Element) schema.Entry {
		return schema.Entry{Format: schema.FormatAmp, Host: cfg.Host, Path: cfg.Path, Offset: at.Offset, Line: at.Line, SessionID: session}
	}
	hdr := base(top)
	hdr.Kind, hdr.EntryID, hdr.Title = schema.KindSession, "thread", th.Title
	if ms, ok := millis(th.Created); ok {
		hdr.TS = ms
	}
	for _, t := range th.Env.Initial.Trees {
		if cwd, ok := strings.CutPrefix(t.URI, "file://"); ok && cwd != "" {
			hdr.CWD = cwd
			break
		}
	}
	dst = append(dst, hdr)

	// The ledger's events, by the message they end at.
	var events []ledgerEvent
	var eventAt []parse.Element
	byMessage := map[string]int{}
	ledger := false // the ledger's events are the calls
	if l, ok := fields["usageLedger"]; ok {
		var led struct {
			Events json.RawMessage `json:"events"`
		}
		if err := json.Unmarshal(l.Raw, &led); err != nil {
			fail(l, err)
		} else if len(led.Events) > 0 && led.Events[0] == '[' {
			ledger = true
			evs, err := eventElements(data, l)
			if err != nil {
				fail(l, err)
			}
			for _, at := range evs {
				var ev ledgerEvent
				if at.Raw[0] != '{' {
					fail(at, parse.ErrNotObject)
					continue
				}
				if err := json.Unmarshal(at.Raw, &ev); err != nil {
					fail(at, err)
					continue
				}
				if to := idString(ev.ToMessageID); to != "" {
					if _, dup := byMessage[to]; !dup {
						byMessage[to] = len(events)
					}
				}
				events = append(events, ev)
				eventAt = append(eventAt, at)
			}
		}
	}
	used := make([]bool, len(events))

	if m, ok := fields["messages"]; ok && string(m.Raw) != "null" {
		msgs, err := parse.Elements(data, m)
		if err != nil {
			fail(m, err)
		}
		var lastTS time.Time // a message without a time of its own takes the previous one's
		for i, at := range msgs {
			var msg message
			if at.Raw[0] != '{' {
				fail(at, parse.ErrNotObject)
				continue
			}
			if err := json.Unmarshal(at.Raw, &msg); err != nil {
				fail(at, err)
				continue
			}
			if msg.Role == "assistant" && msg.State.Type == "streaming" && msg.Usage == nil {
				// Still being written, without usage yet: not even its
				// time is known (the next version of the thread has it).
				continue
			}
			e := base(at)
			id := idString(msg.MessageID)
			if id == "" {
				id = "m" + strconv.Itoa(i)
			}
			e.EntryID, e.MessageID, e.Kind = id, id, schema.KindMessage
			if ms, ok := millis(msg.Meta.SentAt); ok {
				e.TS = ms
			}
			var parts []part
			if len(msg.Content) > 0 && msg.Content[0] == '[' {
				if err := json.Unmarshal(msg.Content, &parts); err != nil {
					fail(at, fmt.Errorf("%w: content: %v", parse.ErrBadField, err))
				}
			}
			text := content(&e, parts, cfg.Text)
			switch msg.Role {
			case "user":
				e.Role = schema.RoleUser
				if text == "" && len(e.ToolResults) > 0 {
					e.Role = schema.RoleTool
				}
			case "assistant":
				e.Role = schema.RoleAssistant
				e.StopReason = msg.State.StopReason
				if msg.Usage != nil {
					e.Model = msg.Usage.Model
					if ts, err := time.Parse(time.RFC3339Nano, msg.Usage.Timestamp); err == nil {
						e.TS = ts.UTC()
					}
				}
				if e.TS.IsZero() {
					e.TS = lastTS
				}
				switch {
				case ledger:
					if j, ok := byMessage[id]; ok {
						used[j] = true
						if err := setEvent(&e, session, &events[j], msg.Usage, false); err != nil {
							fail(at, err)
						}
					}
				case msg.Usage != nil:
					u, err := messageUsage(msg.Usage)
					if err != nil {
						fail(at, err)
					} else if u != nil {
						e.Usage, e.UsageKey = u, "amp:"+session+":"+id
					}
				}
			default:
				e.Kind, e.Subtype = schema.KindEvent, msg.Role
			}
			if e.TS.IsZero() {
				e.TS = lastTS
			}
			lastTS = e.TS
			if cfg.Text {
				e.Text = text
			}
			if cfg.Raw {
				e.Raw = compact(at.Raw)
			}
			dst = append(dst, e)
		}
	}
	for j := range events {
		if used[j] {
			continue
		}
		ev := &events[j]
		e := base(eventAt[j])
		e.Kind, e.Role, e.Meta, e.Subtype = schema.KindMessage, schema.RoleAssistant, true, SubtypeLedgerEvent
		e.EntryID = "ledger:" + ev.ID
		if ev.ID == "" {
			e.EntryID = "ledger:" + strconv.Itoa(j)
		}
		if err := setEvent(&e, session, ev, nil, true); err != nil {
			fail(eventAt[j], err)
		}
		if e.UsageKey == "" && e.Usage == nil && e.Model == "" {
			continue
		}
		dst = append(dst, e)
	}
	return dst, errs
}

// eventElements returns the elements of the ledger's events array with
// their positions in data.
func eventElements(data []byte, ledger parse.Element) ([]parse.Element, error) {
	f, err := parse.Fields(ledger.Raw)
	if err != nil {
		return nil, err
	}
	ev, ok := f["events"]
	if !ok {
		return nil, nil
	}
	// Positions within the ledger, made positions within data.
	start := int(ledger.Offset) + int(ev.Offset)
	ev = parse.Element{Raw: data[start : start+len(ev.Raw)], Offset: int64(start)}
	return parse.Elements(data, ev)
}

// setEvent makes e the call of ledger event ev: its usage, with the cache
// counters of the assistant message's usage mu (nil for none), and, for
// an entry of its own (own), its time. A message keeps its own time, so
// that it is the same before and after the ledger names it.
func setEvent(e *schema.Entry, session string, ev *ledgerEvent, mu *usage, own bool) error {
	if ev.Model != "" {
		e.Model = ev.Model
	}
	if ts, err := time.Parse(time.RFC3339Nano, ev.Timestamp); err == nil && own {
		e.TS = ts.UTC()
	}
	var u schema.Usage
	var err error
	if u.Input, err = count(ev.Tokens.Input, "tokens.input"); err != nil {
		return err
	}
	if u.Output, err = count(ev.Tokens.Output, "tokens.output"); err != nil {
		return err
	}
	total, err := count(ev.Tokens.Total, "tokens.total")
	if err != nil {
		return err
	}
	if mu != nil {
		if u.CacheWrite, err = count(mu.CacheWrite, "cacheCreationInputTokens"); err != nil {
			return err
		}
		if u.CacheRead, err = count(mu.CacheRead, "cacheReadInputTokens"); err != nil {
			return err
		}
	}
	if !fallback(&u, total) {
		return nil
	}
	id := ev.ID
	if id == "" {
		id = e.EntryID
	}
	e.Usage, e.UsageKey = &u, "amp:"+session+":ledger:"+id
	return nil
}

// messageUsage returns the usage an assistant message records, or nil
// when it records no tokens.
func messageUsage(mu *usage) (*schema.Usage, error) {
	var u schema.Usage
	var err error
	if u.Input, err = count(mu.Input, "inputTokens"); err != nil {
		return nil, err
	}
	if u.Output, err = count(mu.Output, "outputTokens"); err != nil {
		return nil, err
	}
	if u.CacheWrite, err = count(mu.CacheWrite, "cacheCreationInputTokens"); err != nil {
		return nil, err
	}
	if u.CacheRead, err = count(mu.CacheRead, "cacheReadInputTokens"); err != nil {
		return nil, err
	}
	total, err := count(mu.Total, "totalTokens")
	if err != nil {
		return nil, err
	}
	if !fallback(&u, total) {
		return nil, nil
	}
	return &u, nil
}

// fallback counts total as output when no part is recorded (ccusage's
// apply_total_token_fallback) and reports whether u holds any token.
func fallback(u *schema.Usage, total int64) bool {
	if u.Input+u.Output+u.CacheRead+u.CacheWrite == 0 {
		u.Output = total
	}
	return u.Input+u.Output+u.CacheRead+u.CacheWrite > 0
}

// content fills e's tool calls and results from the message's parts and
// returns its text (when text is wanted, or to tell a tool message).
func content(e *schema.Entry, parts []part, text bool) string {
	var b strings.Builder
	for _, p := range parts {
		switch p.Type {
		case "text":
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(p.Text)
		case "tool_use":
			c := schema.ToolCall{ID: p.ID, Name: p.Name}
			if text && len(p.Input) > 0 {
				c.Input = compact(p.Input)
			}
			e.ToolCalls = append(e.ToolCalls, c)
		case "tool_result":
			r := schema.ToolResult{ToolCallID: p.ToolUseID, IsError: p.Run.Status == "error"}
			if text && len(p.Run.Result) > 0 {
				var s string
				if json.Unmarshal(p.Run.Result, &s) == nil {
					r.Content = s
				} else {
					r.Content = string(compact(p.Run.Result))
				}
			}
			e.ToolResults = append(e.ToolResults, r)
		}
	}
	return b.String()
}

// count reads a token counter: absent or null is 0.
func count(raw json.RawMessage, field string) (int64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		// 12.0 is an integer too.
		f, ferr := strconv.ParseFloat(string(raw), 64)
		if ferr != nil || f != float64(int64(f)) {
			return 0, fmt.Errorf("%w: %s = %s", ErrBadCounter, field, raw)
		}
		n = int64(f)
	}
	if n < 0 || n > maxCount {
		return 0, fmt.Errorf("%w: %s = %s", ErrBadCounter, field, raw)
	}
	return n, nil
}

// millis reads a Unix time in milliseconds.
func millis(raw json.RawMessage) (time.Time, bool) {
	if len(raw) == 0 {
		return time.Time{}, false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f <= 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(int64(f)).UTC(), true
}

// idString reads a message id: an integer, or a string.
func idString(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return ""
	}
	return string(raw)
}

// compact returns a copy of the JSON value raw without insignificant
// white space (a pretty-printed thread indents it).
func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return append(json.RawMessage(nil), raw...)
	}
	return b.Bytes()
}
