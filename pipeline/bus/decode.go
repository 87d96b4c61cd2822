package bus

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unsafe"

	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// EntryDecoder decodes the canonical JSON of entries ([schema.Entry.AppendJSON])
// on the hot path of the consumers: it walks the object with the
// zero-allocation scanner of package jsonl, allocates only the strings it
// returns, and interns the short strings that repeat from entry to entry
// (format, host, path, session id, model, working directory…). It gives
// exactly what [schema.UnmarshalEntry] gives for any entry a publisher
// wrote; unknown fields are skipped, so newer producers may add fields.
//
// Lifetimes: no string, slice or map of a decoded entry aliases data or
// the decoder's buffers. Each string is an allocation of its own, or an
// interned one shared between entries (strings are immutable), so a
// consumer may keep any of them, or any part of one, after data is
// reused; keeping a substring keeps its whole string (at most
// LiteTextBytes of a Lite decoder's text). Strings (label keys included)
// are always valid UTF-8, as encoding/json makes them: the decoder checks
// every string that holds a byte above 0x7F and replaces each invalid
// byte by U+FFFD, whoever published the entry; raw JSON values (the raw
// record, tool inputs) are copied as they are, as encoding/json copies a
// json.RawMessage.
//
// An EntryDecoder is not safe for concurrent use; its zero value is ready.
type EntryDecoder struct {
	// Lite leaves out what counting does not read: tool call inputs, tool
	// result contents and the raw record are skipped (validated, not
	// copied), and the text is cut to its first [LiteTextBytes] bytes (on a
	// character boundary). The indexer decodes so; the exporter, which
	// keeps everything, does not.
	Lite bool

	s      jsonl.Scanner
	buf    []byte
	intern map[string]string
	last   [numSlots]string // per interned field, the string it gave last
}

// LiteTextBytes is how much text a Lite decoder keeps: more than any
// prompt head the indexer shows.
const LiteTextBytes = 1024

// maxInterned bounds the intern table; it is emptied when full.
const maxInterned = 4096

// errEntryType reports a field of the wrong JSON type.
var errEntryType = errors.New("wrong JSON type")

// Decode decodes data into e, which it zeroes first. On error e is zeroed
// and the error says which field failed.
func (d *EntryDecoder) Decode(data []byte, e *schema.Entry) error {
	*e = schema.Entry{}
	if err := d.decode(data, e); err != nil {
		*e = schema.Entry{}
		return fmt.Errorf("decode entry: %w", err)
	}
	return nil
}

func (d *EntryDecoder) decode(data []byte, e *schema.Entry) error {
	s := &d.s
	s.Reset(data)
	if !s.More() || !s.EnterObject() {
		if s.Err() != nil {
			return s.Err()
		}
		return errors.New("not a JSON object")
	}
	for s.NextField() {
		key := s.Key()
		known, err := d.entryField(e, key)
		if !known && err == nil {
			if name := d.unknown(key, entryFields); name != nil {
				_, err = d.entryField(e, name)
			}
		}
		if err != nil {
			return fmt.Errorf("field %q: %w", key, err)
		}
	}
	if !s.Finish() {
		return s.Err()
	}
	if s.More() {
		return errors.New("data after the entry")
	}
	return s.Err()
}

// entryField decodes the value of the entry field name into e; it
// reports false, consuming nothing, for a name it does not know.
func (d *EntryDecoder) entryField(e *schema.Entry, key []byte) (known bool, err error) {
	switch string(key) {
	case "format":
		var f string
		f, err = d.istr(slotFormat)
		e.Format = schema.Format(f)
	case "host":
		e.Host, err = d.istr(slotHost)
	case "labels":
		e.Labels, err = d.labels(e.Labels)
	case "path":
		e.Path, err = d.istr(slotPath)
	case "offset":
		e.Offset, err = d.int()
	case "line":
		e.Line, err = d.int()
	case "object":
		var n int64
		n, err = d.int()
		e.Object = int(n)
	case "session_id":
		e.SessionID, err = d.istr(slotSession)
	case "entry_id":
		e.EntryID, err = d.str()
	case "parent_id":
		e.ParentID, err = d.str()
	case "parent_session_id":
		e.ParentSessionID, err = d.istr(slotParentSession)
	case "ts":
		e.TS, err = d.time()
	case "kind":
		var k string
		k, err = d.istr(slotKind)
		e.Kind = schema.Kind(k)
	case "role":
		var r string
		r, err = d.istr(slotRole)
		e.Role = schema.Role(r)
	case "subtype":
		e.Subtype, err = d.istr(slotSubtype)
	case "text":
		e.Text, err = d.text()
	case "meta":
		e.Meta, err = d.bool()
	case "copy":
		e.Copy, err = d.bool()
	case "truncated":
		e.Truncated, err = d.bool()
	case "model":
		e.Model, err = d.istr(slotModel)
	case "provider":
		e.Provider, err = d.istr(slotProvider)
	case "message_id":
		e.MessageID, err = d.str()
	case "request_id":
		e.RequestID, err = d.str()
	case "usage":
		e.Usage, err = d.usage()
	case "usage_key":
		e.UsageKey, err = d.str()
	case "cost_usd":
		e.CostUSD, err = d.float()
	case "stop_reason":
		e.StopReason, err = d.istr(slotStopReason)
	case "tool_calls":
		e.ToolCalls, err = d.toolCalls()
	case "tool_results":
		e.ToolResults, err = d.toolResults()
	case "tool_calls_omitted":
		var n int64
		n, err = d.int()
		e.ToolCallsOmitted = int(n)
	case "tool_results_omitted":
		var n int64
		n, err = d.int()
		e.ToolResultsOmitted = int(n)
	case "attachments":
		e.Attachments, err = d.attachments()
	case "reaction":
		e.Reaction, err = d.reaction()
	case "sender":
		e.Sender, err = d.istr(slotSender)
	case "cwd":
		e.CWD, err = d.istr(slotCWD)
	case "git_branch":
		e.GitBranch, err = d.istr(slotGitBranch)
	case "agent_version":
		e.AgentVersion, err = d.istr(slotAgentVersion)
	case "sidechain":
		e.Sidechain, err = d.bool()
	case "background":
		e.Background, err = d.bool()
	case "agent_id":
		e.AgentID, err = d.istr(slotAgentID)
	case "agent_type":
		e.AgentType, err = d.istr(slotAgentType)
	case "slug":
		e.Slug, err = d.istr(slotSlug)
	case "command":
		e.Command, err = d.istr(slotCommand)
	case "command_args":
		e.CommandArgs, err = d.str()
	case "title":
		e.Title, err = d.str()
	case "origin":
		e.Origin, err = d.origin()
	case "raw":
		if d.Lite {
			d.s.Skip()
			break
		}
		e.Raw, err = d.raw()
	default:
		return false, nil
	}
	return true, err
}

// entryFields are the names entryField should know: those of the field
// table (a test checks the switch knows each of them).
var entryFields = schema.FieldNames("")

// unknown handles a key the switch of a decoding function did not know:
// it returns the name of names the key equals but for case, as
// encoding/json matches names, for the switch to decode the value as that
// field, or skips the value and returns nil. The name is copied to a new
// slice (rare: a name in another case).
//
// The decoding functions take keys as bytes (switch string(key) costs
// nothing) and are called directly, not through func values, which cost
// an indirect call per field and, for a closure, its allocation.
func (d *EntryDecoder) unknown(key []byte, names []string) []byte {
	for _, n := range names {
		if bytesEqualFold(key, n) {
			return []byte(n)
		}
	}
	d.s.Skip()
	return nil
}

// field decodes one field of an object through set, which knows the
// field names in names (see unknown): for the nested objects that are
// rare enough for a call through a func value not to matter.
func (d *EntryDecoder) field(key []byte, names []string, set func(key []byte) (bool, error)) error {
	known, err := set(key)
	if !known && err == nil {
		if name := d.unknown(key, names); name != nil {
			_, err = set(name)
		}
	}
	return err
}

// bytesEqualFold is strings.EqualFold for a byte slice, without a copy.
func bytesEqualFold(b []byte, s string) bool {
	return strings.EqualFold(unsafe.String(unsafe.SliceData(b), len(b)), s)
}

// Slots of the interned fields: each keeps the string its field had in
// the last entry, which the next entry of a batch most often repeats
// (format, host, path, session, model, working directory…), so that the
// usual case is one comparison, not a hash and a lookup in the intern
// table. Fields that vary within an entry (labels, emojis, the origin's)
// share a slot and mostly go on to the table.
const (
	slotFormat = iota
	slotHost
	slotPath
	slotSession
	slotParentSession
	slotKind
	slotRole
	slotSubtype
	slotModel
	slotProvider
	slotStopReason
	slotSender
	slotCWD
	slotGitBranch
	slotAgentVersion
	slotAgentID
	slotAgentType
	slotSlug
	slotCommand
	slotSpeed
	slotToolName
	slotMimeType
	slotEmoji
	slotOrigin
	slotLabel
	numSlots
)

// stringValue returns the value at the cursor when it is a string; ok is
// false for null (err nil) and for any other kind (err says so).
func (d *EntryDecoder) stringValue() (v jsonl.Value, ok bool, err error) {
	v = d.s.Value()
	switch v.Kind() {
	case jsonl.String:
		return v, true, nil
	case jsonl.Null:
		return v, false, nil
	}
	return v, false, d.typeErr(v, "a string")
}

// str reads a string (null is ""), in a new allocation of its own.
func (d *EntryDecoder) str() (string, error) {
	v, ok, err := d.stringValue()
	if !ok {
		return "", err
	}
	if v.Plain() {
		return string(v.Raw()), nil
	}
	// Unescaped into the decoder's buffer, then copied into a string of
	// its size: a copy more, but no allocation larger than the text
	// (escapes shrink; a tool result's JSON is a tenth longer than its
	// text), which the exporter's garbage collector would pay for.
	d.buf = v.AppendText(d.buf[:0])
	return string(d.buf), nil
}

// istr reads a string (null is "") shared between entries: the one slot
// last gave when it is the same, else the intern table's.
func (d *EntryDecoder) istr(slot int) (string, error) {
	v, ok, err := d.stringValue()
	if !ok {
		return "", err
	}
	var b []byte
	if v.Plain() {
		b = v.Raw()
	} else {
		d.buf = v.AppendText(d.buf[:0])
		b = d.buf
	}
	if last := d.last[slot]; last == string(b) { // no allocation for the comparison
		return last, nil
	}
	s := d.internBytes(b)
	d.last[slot] = s
	return s, nil
}

// text reads the text, cut to LiteTextBytes in Lite mode.
func (d *EntryDecoder) text() (string, error) {
	if !d.Lite {
		return d.str()
	}
	v, ok, err := d.stringValue()
	if !ok {
		return "", err
	}
	raw := v.Raw()
	if len(raw) > litePrefix {
		// A long text: decode the first litePrefix bytes only. Their
		// text is the whole text's but for its last few bytes
		// (jsonl.AppendUnescaped), which lie beyond the cut when it is long
		// enough, as it is but for texts made mostly of escapes.
		out, ok := jsonl.AppendUnescaped(d.buf[:0], raw[:litePrefix])
		d.buf = out
		if ok && len(out) >= LiteTextBytes+16 {
			return cutText(out, LiteTextBytes), nil
		}
	}
	if v.Plain() {
		return cutText(raw, LiteTextBytes), nil
	}
	d.buf = v.AppendText(d.buf[:0])
	return cutText(d.buf, LiteTextBytes), nil
}

// litePrefix is how much of a text's JSON a Lite decoder decodes to
// keep its first LiteTextBytes.
const litePrefix = 2 * LiteTextBytes

// cutText returns the first n bytes of b, less to end on a character
// boundary.
func cutText(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	for n > 0 && b[n]&0xC0 == 0x80 {
		n--
	}
	return string(b[:n])
}

func (d *EntryDecoder) typeErr(v jsonl.Value, want string) error {
	if d.s.Err() != nil {
		return d.s.Err()
	}
	return fmt.Errorf("%w: want %s, got %s", errEntryType, want, v.Kind())
}

func (d *EntryDecoder) int() (int64, error) {
	v := d.s.Value()
	if v.Kind() == jsonl.Null {
		return 0, nil
	}
	n, ok := v.Int()
	if !ok {
		return 0, d.typeErr(v, "an integer")
	}
	return n, nil
}

func (d *EntryDecoder) float() (*float64, error) {
	v := d.s.Value()
	if v.Kind() == jsonl.Null {
		return nil, nil
	}
	f, ok := v.Float()
	if !ok {
		return nil, d.typeErr(v, "a number")
	}
	return &f, nil
}

func (d *EntryDecoder) bool() (bool, error) {
	v := d.s.Value()
	if v.Kind() == jsonl.Null {
		return false, nil
	}
	b, ok := v.Bool()
	if !ok {
		return false, d.typeErr(v, "a boolean")
	}
	return b, nil
}

func (d *EntryDecoder) time() (time.Time, error) {
	v := d.s.Value()
	switch v.Kind() {
	case jsonl.Null:
		return time.Time{}, nil
	case jsonl.String:
	default:
		return time.Time{}, d.typeErr(v, "an RFC 3339 time")
	}
	if t, ok := schema.ParseUTC(v.Raw()); ok {
		return t, nil
	}
	// time.Time's own JSON decoding of the quoted token, so that every
	// form it accepts (and rejects) is the same as encoding/json's.
	d.buf = append(append(append(d.buf[:0], '"'), v.Raw()...), '"')
	var t time.Time
	err := t.UnmarshalJSON(d.buf)
	return t, err
}

// raw copies a value's JSON text (json.RawMessage: null is kept as null,
// as encoding/json keeps it).
func (d *EntryDecoder) raw() (json.RawMessage, error) {
	v := d.s.Value()
	if v.Kind() == jsonl.Invalid {
		return nil, d.typeErr(v, "a value")
	}
	if v.Kind() == jsonl.String {
		// Value strips the quotes of a string; put them back.
		b := make([]byte, 0, len(v.Raw())+2)
		b = append(b, '"')
		b = append(b, v.Raw()...)
		return append(b, '"'), nil
	}
	return append(json.RawMessage(nil), v.Raw()...), nil
}

func (d *EntryDecoder) usage() (*schema.Usage, error) {
	s := &d.s
	if s.Peek() == jsonl.Null {
		s.Skip()
		return nil, nil
	}
	if !s.EnterObject() {
		return nil, d.typeErr(s.Value(), "an object")
	}
	u := &schema.Usage{}
	var err error
	for s.NextField() && err == nil {
		err = d.field(s.Key(), usageFields, func(key []byte) (known bool, err error) {
			switch string(key) {
			case "input":
				u.Input, err = d.int()
			case "output":
				u.Output, err = d.int()
			case "cache_read":
				u.CacheRead, err = d.int()
			case "cache_write":
				u.CacheWrite, err = d.int()
			case "cache_write_5m":
				u.CacheWrite5m, err = d.int()
			case "cache_write_1h":
				u.CacheWrite1h, err = d.int()
			case "reasoning":
				u.Reasoning, err = d.int()
			case "speed":
				u.Speed, err = d.istr(slotSpeed)
			default:
				return false, nil
			}
			return true, err
		})
	}
	return u, err
}

var usageFields = schema.FieldNames("usage")

// array calls elem for each element of an array (null is none).
func (d *EntryDecoder) array(elem func() error) (bool, error) {
	s := &d.s
	if s.Peek() == jsonl.Null {
		s.Skip()
		return false, nil
	}
	if !s.EnterArray() {
		return false, d.typeErr(s.Value(), "an array")
	}
	for s.NextElem() {
		if err := elem(); err != nil {
			return true, err
		}
	}
	return true, s.Err()
}

// object calls field for each field of an object element (null is a zero
// element, as encoding/json leaves it).
func (d *EntryDecoder) object(names []string, set func(key []byte) (bool, error)) error {
	s := &d.s
	if s.Peek() == jsonl.Null {
		s.Skip()
		return nil
	}
	if !s.EnterObject() {
		return d.typeErr(s.Value(), "an object")
	}
	for s.NextField() {
		if err := d.field(s.Key(), names, set); err != nil {
			return err
		}
	}
	return s.Err()
}

// objects decodes an array of objects into a slice of T, field by field
// (null is no slice, [] an empty one, a null element a zero T), as
// encoding/json does.
// The loops are written out, not built on array and object: a closure
// per element would cost an allocation on the consumers' hot path.
func objects[T any](d *EntryDecoder, names []string, set func(t *T, key []byte) (bool, error)) ([]T, error) {
	s := &d.s
	if s.Peek() == jsonl.Null {
		s.Skip()
		return nil, nil
	}
	if !s.EnterArray() {
		return nil, d.typeErr(s.Value(), "an array")
	}
	out := []T{}
	for s.NextElem() {
		var zero T
		out = append(out, zero)
		t := &out[len(out)-1]
		if s.Peek() == jsonl.Null {
			s.Skip()
			continue
		}
		if !s.EnterObject() {
			return out, d.typeErr(s.Value(), "an object")
		}
		for s.NextField() {
			if err := d.field(s.Key(), names, func(key []byte) (bool, error) { return set(t, key) }); err != nil {
				return out, err
			}
		}
		if err := s.Err(); err != nil {
			return out, err
		}
	}
	return out, s.Err()
}

func (d *EntryDecoder) toolCalls() ([]schema.ToolCall, error) {
	return objects(d, toolCallFields, func(tc *schema.ToolCall, key []byte) (known bool, err error) {
		switch string(key) {
		case "id":
			tc.ID, err = d.str()
		case "name":
			tc.Name, err = d.istr(slotToolName)
		case "input":
			if d.Lite {
				d.s.Skip()
				break
			}
			tc.Input, err = d.raw()
		default:
			return false, nil
		}
		return true, err
	})
}

func (d *EntryDecoder) toolResults() ([]schema.ToolResult, error) {
	return objects(d, toolResultFields, func(tr *schema.ToolResult, key []byte) (known bool, err error) {
		switch string(key) {
		case "tool_call_id":
			tr.ToolCallID, err = d.str()
		case "is_error":
			tr.IsError, err = d.bool()
		case "content":
			if d.Lite {
				d.s.Skip()
				break
			}
			tr.Content, err = d.str()
		default:
			return false, nil
		}
		return true, err
	})
}

func (d *EntryDecoder) attachments() ([]schema.Attachment, error) {
	return objects(d, attachmentFields, func(a *schema.Attachment, key []byte) (known bool, err error) {
		switch string(key) {
		case "filename":
			a.Filename, err = d.str()
		case "mime_type":
			a.MimeType, err = d.istr(slotMimeType)
		case "size":
			a.Size, err = d.str()
		default:
			return false, nil
		}
		return true, err
	})
}

func (d *EntryDecoder) reaction() (*schema.Reaction, error) {
	if d.s.Peek() == jsonl.Null {
		d.s.Skip()
		return nil, nil
	}
	r := &schema.Reaction{}
	err := d.object(reactionFields, func(key []byte) (known bool, err error) {
		switch string(key) {
		case "message_id":
			r.MessageID, err = d.str()
		case "emojis":
			var seen bool
			seen, err = d.array(func() error {
				s, err := d.istr(slotEmoji)
				r.Emojis = append(r.Emojis, s)
				return err
			})
			if seen && r.Emojis == nil && err == nil {
				r.Emojis = []string{}
			}
		default:
			return false, nil
		}
		return true, err
	})
	return r, err
}

func (d *EntryDecoder) origin() (*schema.Origin, error) {
	if d.s.Peek() == jsonl.Null {
		d.s.Skip()
		return nil, nil
	}
	o := &schema.Origin{}
	err := d.object(originFields, func(key []byte) (known bool, err error) {
		switch string(key) {
		case "provider":
			o.Provider, err = d.istr(slotOrigin)
		case "surface":
			o.Surface, err = d.istr(slotOrigin)
		case "chat_type":
			o.ChatType, err = d.istr(slotOrigin)
		case "from":
			o.From, err = d.istr(slotOrigin)
		case "label":
			o.Label, err = d.istr(slotOrigin)
		default:
			return false, nil
		}
		return true, err
	})
	return o, err
}

// labels decodes a labels object into m, as encoding/json decodes a map:
// null is a nil map; the fields of an object are added to m (made when
// nil), a later one of the same key replacing the earlier, a null value
// giving ""; keys are kept as they are, in any case. Keys and values are
// interned: a host's labels repeat in every entry.
func (d *EntryDecoder) labels(m map[string]string) (map[string]string, error) {
	s := &d.s
	if s.Peek() == jsonl.Null {
		s.Skip()
		return nil, nil
	}
	if !s.EnterObject() {
		return nil, d.typeErr(s.Value(), "an object")
	}
	if m == nil {
		m = make(map[string]string, 4)
	}
	for s.NextField() {
		key := d.internBytes(s.Key())
		v, err := d.istr(slotLabel)
		if err != nil {
			return m, fmt.Errorf("label %q: %w", key, err)
		}
		m[key] = v
	}
	return m, s.Err()
}

// internBytes returns b as an interned string.
func (d *EntryDecoder) internBytes(b []byte) string {
	if len(b) > 256 {
		return string(b)
	}
	if s, ok := d.intern[string(b)]; ok { // no allocation for the lookup
		return s
	}
	if d.intern == nil || len(d.intern) >= maxInterned {
		d.intern = make(map[string]string, 256)
	}
	s := string(b)
	d.intern[s] = s
	return s
}

// The field names of the nested objects, from the field table, for
// matching a key that differs in case only.
var (
	toolCallFields   = schema.FieldNames("tool_calls")
	toolResultFields = schema.FieldNames("tool_results")
	attachmentFields = schema.FieldNames("attachments")
	reactionFields   = schema.FieldNames("reaction")
	originFields     = schema.FieldNames("origin")
)
