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
	var err error
	for s.NextField() && err == nil {
		key := s.Key()
		err = d.field(key, entryFields, func(key []byte) (bool, error) { return d.entryField(e, key) })
		if err != nil {
			err = fmt.Errorf("field %q: %w", key, err)
		}
	}
	if err != nil {
		return err
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
		f, err = d.str(true)
		e.Format = schema.Format(f)
	case "host":
		e.Host, err = d.str(true)
	case "labels":
		e.Labels, err = d.labels(e.Labels)
	case "path":
		e.Path, err = d.str(true)
	case "offset":
		e.Offset, err = d.int()
	case "line":
		e.Line, err = d.int()
	case "object":
		var n int64
		n, err = d.int()
		e.Object = int(n)
	case "session_id":
		e.SessionID, err = d.str(true)
	case "entry_id":
		e.EntryID, err = d.str(false)
	case "parent_id":
		e.ParentID, err = d.str(false)
	case "parent_session_id":
		e.ParentSessionID, err = d.str(true)
	case "ts":
		e.TS, err = d.time()
	case "kind":
		var k string
		k, err = d.str(true)
		e.Kind = schema.Kind(k)
	case "role":
		var r string
		r, err = d.str(true)
		e.Role = schema.Role(r)
	case "subtype":
		e.Subtype, err = d.str(true)
	case "text":
		e.Text, err = d.text()
	case "meta":
		e.Meta, err = d.bool()
	case "copy":
		e.Copy, err = d.bool()
	case "truncated":
		e.Truncated, err = d.bool()
	case "model":
		e.Model, err = d.str(true)
	case "provider":
		e.Provider, err = d.str(true)
	case "message_id":
		e.MessageID, err = d.str(false)
	case "request_id":
		e.RequestID, err = d.str(false)
	case "usage":
		e.Usage, err = d.usage()
	case "usage_key":
		e.UsageKey, err = d.str(false)
	case "cost_usd":
		e.CostUSD, err = d.float()
	case "stop_reason":
		e.StopReason, err = d.str(true)
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
		e.Sender, err = d.str(true)
	case "cwd":
		e.CWD, err = d.str(true)
	case "git_branch":
		e.GitBranch, err = d.str(true)
	case "agent_version":
		e.AgentVersion, err = d.str(true)
	case "sidechain":
		e.Sidechain, err = d.bool()
	case "background":
		e.Background, err = d.bool()
	case "agent_id":
		e.AgentID, err = d.str(true)
	case "agent_type":
		e.AgentType, err = d.str(true)
	case "slug":
		e.Slug, err = d.str(true)
	case "command":
		e.Command, err = d.str(true)
	case "command_args":
		e.CommandArgs, err = d.str(false)
	case "title":
		e.Title, err = d.str(false)
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

// field decodes one field of an object through set, which knows the
// field names in names: by the key itself, else by the name the key
// equals but for case, as encoding/json matches names; an unknown field
// is skipped.
//
// The key goes to set as bytes (switch string(key) there costs nothing):
// a string made for a call through a func value would be allocated.
func (d *EntryDecoder) field(key []byte, names []string, set func(key []byte) (bool, error)) error {
	known, err := set(key)
	if known || err != nil {
		return err
	}
	for _, n := range names {
		if bytesEqualFold(key, n) {
			_, err = set([]byte(n)) // rare: a name in another case
			return err
		}
	}
	d.s.Skip()
	return nil
}

// bytesEqualFold is strings.EqualFold for a byte slice, without a copy.
func bytesEqualFold(b []byte, s string) bool {
	return strings.EqualFold(unsafe.String(unsafe.SliceData(b), len(b)), s)
}

// str reads a string (null is ""); intern shares the result between
// entries.
func (d *EntryDecoder) str(intern bool) (string, error) {
	v := d.s.Value()
	switch v.Kind() {
	case jsonl.Null:
		return "", nil
	case jsonl.String:
	default:
		return "", d.typeErr(v, "a string")
	}
	var b []byte
	if v.Plain() {
		b = v.Raw()
	} else {
		d.buf = v.AppendText(d.buf[:0])
		b = d.buf
	}
	if !intern {
		return string(b), nil
	}
	return d.internBytes(b), nil
}

// text reads the text, cut to LiteTextBytes in Lite mode.
func (d *EntryDecoder) text() (string, error) {
	if !d.Lite {
		return d.str(false)
	}
	v := d.s.Value()
	switch v.Kind() {
	case jsonl.Null:
		return "", nil
	case jsonl.String:
	default:
		return "", d.typeErr(v, "a string")
	}
	raw := v.Raw()
	if v.Plain() {
		return cutText(raw, LiteTextBytes), nil
	}
	// Unescape a little more than kept: escapes shrink.
	d.buf = v.AppendText(d.buf[:0])
	return cutText(d.buf, LiteTextBytes), nil
}

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
				u.Speed, err = d.str(true)
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
			tc.ID, err = d.str(false)
		case "name":
			tc.Name, err = d.str(true)
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
			tr.ToolCallID, err = d.str(false)
		case "is_error":
			tr.IsError, err = d.bool()
		case "content":
			if d.Lite {
				d.s.Skip()
				break
			}
			tr.Content, err = d.str(false)
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
			a.Filename, err = d.str(false)
		case "mime_type":
			a.MimeType, err = d.str(true)
		case "size":
			a.Size, err = d.str(false)
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
			r.MessageID, err = d.str(false)
		case "emojis":
			var seen bool
			seen, err = d.array(func() error {
				s, err := d.str(true)
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
			o.Provider, err = d.str(true)
		case "surface":
			o.Surface, err = d.str(true)
		case "chat_type":
			o.ChatType, err = d.str(true)
		case "from":
			o.From, err = d.str(true)
		case "label":
			o.Label, err = d.str(true)
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
		v, err := d.str(true)
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
