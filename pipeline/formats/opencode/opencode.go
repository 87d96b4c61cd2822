package opencode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Row is one row of OpenCode's message table, with the columns of its
// session row that an entry needs (LEFT JOIN: empty when the session row
// is missing). Its JSON form (the golden tests' input, `sessionpipe`'s
// dumps) uses the column names; data is the message JSON, as an object
// or as a string holding it.
type Row struct {
	ID          string          `json:"id"`
	SessionID   string          `json:"session_id"`
	TimeCreated int64           `json:"time_created"`
	TimeUpdated int64           `json:"time_updated"`
	Data        json.RawMessage `json:"data"`
	ParentID    string          `json:"parent_id,omitempty"` // session.parent_id: a subagent's parent session
	Directory   string          `json:"directory,omitempty"` // session.directory
	Title       string          `json:"title,omitempty"`     // session.title
}

// Position is where a reader of the message table is: the last row read
// in (time_updated, id) order.
type Position struct {
	Updated int64  `json:"updated"`
	ID      string `json:"id"`
}

// Before reports whether p comes before q in (time_updated, id) order.
func (p Position) Before(q Position) bool {
	return p.Updated < q.Updated || p.Updated == q.Updated && p.ID < q.ID
}

// Position returns the row's position.
func (r *Row) Position() Position { return Position{Updated: r.TimeUpdated, ID: r.ID} }

// ErrRow reports a message row or document that cannot be read: data
// that is not a JSON object, a field of the wrong type, a counter out of
// 0…10¹².
var ErrRow = errors.New("opencode: bad message")

// RowError locates a bad message: the database (or document) and the
// message id.
type RowError struct {
	Path string // the database, or the message document
	ID   string // the message id, "" when unknown
	Err  error
}

func (e *RowError) Error() string {
	if e.ID == "" {
		return fmt.Sprintf("%s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("%s: message %s: %v", e.Path, e.ID, e.Err)
}

func (e *RowError) Unwrap() error { return e.Err }

// message is the part of OpenCode's MessageV2.Info that entries need.
type message struct {
	ID         string          `json:"id"`        // documents only: rows have it as a column
	SessionID  string          `json:"sessionID"` // documents only
	Role       string          `json:"role"`
	ParentID   string          `json:"parentID"`
	ModelID    string          `json:"modelID"`
	ProviderID string          `json:"providerID"`
	Model      *modelRef       `json:"model"` // a user message's chosen model
	Mode       string          `json:"mode"`
	Agent      string          `json:"agent"`
	Finish     string          `json:"finish"`
	Summary    json.RawMessage `json:"summary"`
	Cost       *float64        `json:"cost"`
	Time       struct {
		Created *int64 `json:"created"`
	} `json:"time"`
	Path struct {
		CWD string `json:"cwd"`
	} `json:"path"`
	Tokens *tokens         `json:"tokens"`
	Error  json.RawMessage `json:"error"`
}

type modelRef struct {
	ProviderID string `json:"providerID"`
	ModelID    string `json:"modelID"`
}

type tokens struct {
	Total     json.Number `json:"total"`
	Input     json.Number `json:"input"`
	Output    json.Number `json:"output"`
	Reasoning json.Number `json:"reasoning"`
	Cache     struct {
		Read  json.Number `json:"read"`
		Write json.Number `json:"write"`
	} `json:"cache"`
}

// Parser turns message rows (or documents) into entries. It keeps no
// state between rows: each row is a whole message. Path names the
// database (or the storage directory) in entries and errors.
type Parser struct {
	cfg parse.Config
}

// New returns a parser; cfg.Path is the database's path.
func New(cfg parse.Config) *Parser { return &Parser{cfg: cfg} }

// Format returns [schema.FormatOpenCode].
func (p *Parser) Format() schema.Format { return schema.FormatOpenCode }

// Parse appends the entry of one line holding a [Row] in its JSON form, or
// a message document of OpenCode before 1.2 (storage/message/<session>/
// msg_<id>.json: the message JSON with its id and sessionID). A line that
// is neither gives a *schema.DecodeError and no entry; a message with a bad
// field gives its entry (without usage for a bad counter) and the error.
func (p *Parser) Parse(dst []schema.Entry, line jsonl.Line) ([]schema.Entry, error) {
	var probe struct {
		Data json.RawMessage `json:"data"`
	}
	b := bytes.TrimSpace(line.Bytes)
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &probe) != nil {
		return dst, parse.Fail(&p.cfg, line, 0, fmt.Errorf("%w: not a message row", parse.ErrNotObject))
	}
	var (
		e   schema.Entry
		err error
	)
	if probe.Data != nil {
		var r Row
		if jerr := json.Unmarshal(b, &r); jerr != nil {
			return dst, parse.Fail(&p.cfg, line, 0, fmt.Errorf("%w: %w", parse.ErrBadField, jerr))
		}
		e, err = p.Row(&r)
	} else {
		e, err = p.Document(b, "")
	}
	if err != nil {
		var re *RowError
		if errors.As(err, &re) {
			err = re.Err
		}
		err = parse.Fail(&p.cfg, line, 0, err)
	}
	if e.Format == "" {
		return dst, err // no message to keep
	}
	return append(dst, e), err
}

// Row returns the entry of one message row. A row whose data is not a
// JSON object is an error with no entry (EntryID empty); a bad field or
// counter is an error with the entry, without usage for a bad counter.
func (p *Parser) Row(r *Row) (schema.Entry, error) {
	data := []byte(r.Data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return schema.Entry{}, p.fail(r.ID, fmt.Errorf("%w: data: %v", ErrRow, err))
		}
		data = []byte(s)
	}
	var m message
	if err := decodeMessage(data, &m); err != nil {
		return schema.Entry{}, p.fail(r.ID, err)
	}
	m.ID, m.SessionID = r.ID, r.SessionID
	e, err := p.entry(&m, r.TimeCreated, r.TimeUpdated)
	e.ParentSessionID = r.ParentID
	if e.CWD == "" {
		e.CWD = r.Directory
	}
	e.Title = r.Title
	if p.cfg.Raw {
		e.Raw = append(json.RawMessage(nil), data...)
	}
	return e, err
}

// MaxDocumentBytes is the largest message document read: a message
// document holds the message's metadata, not its text (that is in the
// part documents), a few kilobytes.
const MaxDocumentBytes = 1 << 20

// IsDocumentPath reports whether path names a message document of
// OpenCode before 1.2: a .json file directly in a session directory under
// storage/message.
func IsDocumentPath(path string) bool {
	if filepath.Ext(path) != ".json" {
		return false
	}
	dir := filepath.Dir(filepath.Dir(path))
	return filepath.Base(dir) == "message" && filepath.Base(filepath.Dir(dir)) == "storage"
}

// Document returns the entry of one message document of OpenCode before
// 1.2. Its session is the document's sessionID, else fallbackSession (the
// name of its directory); its version (the entry's Line) is its
// time.completed or time.created.
func (p *Parser) Document(doc []byte, fallbackSession string) (schema.Entry, error) {
	var m message
	if err := decodeMessage(doc, &m); err != nil {
		return schema.Entry{}, p.fail("", err)
	}
	if m.SessionID == "" {
		m.SessionID = fallbackSession
	}
	var created int64
	if m.Time.Created != nil {
		created = *m.Time.Created
	}
	e, err := p.entry(&m, created, created)
	if p.cfg.Raw {
		e.Raw = append(json.RawMessage(nil), doc...)
	}
	return e, err
}

func (p *Parser) fail(id string, err error) error {
	return &RowError{Path: p.cfg.Path, ID: id, Err: err}
}

func decodeMessage(data []byte, m *message) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(m); err != nil {
		return fmt.Errorf("%w: %w", ErrRow, err)
	}
	if _, err := d.Token(); err != io.EOF {
		return fmt.Errorf("%w: data after the message", ErrRow)
	}
	return nil
}

// entry builds the entry of message m, written at created and last
// updated at updated (Unix ms). A message without an id or a session is
// an error without an entry.
func (p *Parser) entry(m *message, created, updated int64) (schema.Entry, error) {
	if m.ID == "" || m.SessionID == "" {
		return schema.Entry{}, p.fail(m.ID, fmt.Errorf("%w: message id or session id", parse.ErrMissingField))
	}
	e := schema.Entry{
		Format:    schema.FormatOpenCode,
		Host:      p.cfg.Host,
		Path:      p.cfg.Path + "#" + m.SessionID,
		Line:      updated,
		SessionID: m.SessionID,
		EntryID:   m.ID,
		MessageID: m.ID,
		ParentID:  m.ParentID,
		Kind:      schema.KindMessage,
		CWD:       m.Path.CWD,
	}
	var err error
	if m.Time.Created != nil {
		created = *m.Time.Created
	}
	if created != 0 {
		t := time.UnixMilli(created).UTC()
		if t.Year() < 0 || t.Year() > 9999 {
			err = p.fail(m.ID, fmt.Errorf("%w: time.created %d", ErrRow, created))
		} else {
			e.TS = t
		}
	}
	role := m.Role
	if role == "" && m.Tokens != nil {
		role = "assistant" // only usage (ccusage's fixtures): a model's message
	}
	switch role {
	case "user":
		e.Role = schema.RoleUser
		if m.Model != nil {
			e.Model, e.Provider = m.Model.ModelID, m.Model.ProviderID
		}
	case "assistant":
		e.Role = schema.RoleAssistant
		e.Model, e.Provider = m.ModelID, m.ProviderID
		e.StopReason = m.Finish
		e.AgentType = m.Agent
		if e.AgentType == "" {
			e.AgentType = m.Mode
		}
		if m.Cost != nil {
			c := *m.Cost
			e.CostUSD = &c
		}
		if m.Tokens != nil {
			u, uerr := m.Tokens.usage()
			switch {
			case uerr != nil:
				if err == nil {
					err = p.fail(m.ID, uerr)
				}
			case !u.IsZero():
				e.Usage = &u
				e.UsageKey = "opencode:" + m.SessionID + ":" + m.ID
			}
		}
	default:
		e.Kind = schema.KindEvent
		e.Subtype = m.Role
	}
	return e, err
}

// usage converts OpenCode's counters (see the package documentation).
func (t *tokens) usage() (schema.Usage, error) {
	var u schema.Usage
	fields := []struct {
		name string
		v    json.Number
		dst  *int64
	}{
		{"input", t.Input, &u.Input},
		{"output", t.Output, &u.Output},
		{"reasoning", t.Reasoning, &u.Reasoning},
		{"cache.read", t.Cache.Read, &u.CacheRead},
		{"cache.write", t.Cache.Write, &u.CacheWrite},
	}
	for _, f := range fields {
		n, err := count(f.v)
		if err != nil {
			return schema.Usage{}, fmt.Errorf("%w: tokens.%s %s", err, f.name, f.v)
		}
		*f.dst = n
	}
	total, err := count(t.Total)
	if err != nil {
		return schema.Usage{}, fmt.Errorf("%w: tokens.total %s", err, t.Total)
	}
	u.Output += u.Reasoning
	if u.Total() == 0 && total > 0 {
		// Only a total (a provider that reports no breakdown): ccusage
		// counts it as output, and so do we.
		u.Output = total
	}
	return u, nil
}

// count decodes a token counter: absent is 0, an integer in 0…10¹² its
// value (5.0 and 1e3 too).
func count(n json.Number) (int64, error) {
	if n == "" {
		return 0, nil
	}
	if v, err := n.Int64(); err == nil {
		if v < 0 || v > parse.MaxTokens {
			return 0, parse.ErrImplausibleCount
		}
		return v, nil
	}
	f, err := n.Float64()
	if err != nil || f != float64(int64(f)) {
		return 0, parse.ErrBadField
	}
	if f < 0 || f > parse.MaxTokens {
		return 0, parse.ErrImplausibleCount
	}
	return int64(f), nil
}
