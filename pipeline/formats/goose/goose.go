package goose

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// SubtypeSessionTotal is the Subtype of an entry carrying a whole
// session's usage: a sum over its replies, not one call.
const SubtypeSessionTotal = "session_total"

// Row is one row of Goose's sessions table, the columns entries need;
// a counter the table lacks or holds NULL is nil.
type Row struct {
	ID          string
	Name        string
	WorkingDir  string
	CreatedAt   string // as stored: text or a number
	UpdatedAt   string
	Provider    string
	ModelConfig string // model_config_json
	SessionType string

	Total, Input, Output          *int64 // the last reply's
	AccTotal, AccInput, AccOutput *int64 // the session's
	AccCost                       *float64
}

// ErrRow reports a session row that cannot be read.
var ErrRow = errors.New("goose: bad session")

// RowError locates a bad session row.
type RowError struct {
	Path string // the database
	ID   string // the session id
	Err  error
}

func (e *RowError) Error() string { return fmt.Sprintf("%s: session %s: %v", e.Path, e.ID, e.Err) }
func (e *RowError) Unwrap() error { return e.Err }

// Parser turns session rows into entries; cfg.Path names the database.
type Parser struct{ cfg parse.Config }

// New returns a parser.
func New(cfg parse.Config) *Parser { return &Parser{cfg: cfg} }

// Format returns [schema.FormatGoose].
func (p *Parser) Format() schema.Format { return schema.FormatGoose }

// ParseTime reads a Goose timestamp: Unix seconds or milliseconds, RFC
// 3339, or SQLite's "YYYY-MM-DD HH:MM:SS[.fff]" (UTC). ok is false for
// anything else.
func ParseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, false
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n > 1_000_000_000_000 {
			return time.UnixMilli(n).UTC(), true
		}
		if n > 0 {
			return time.Unix(n, 0).UTC(), true
		}
		return time.Time{}, false
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			if t.Year() < 1 || t.Year() > 9999 {
				return time.Time{}, false
			}
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// Row returns the entry of one session row, or ok false for a session
// that has no usage to count (no model configured, no counter above 0:
// an empty session). A bad counter or time is an error with the entry
// (without usage for a bad counter).
func (p *Parser) Row(r *Row) (e schema.Entry, ok bool, err error) {
	if r.ID == "" {
		return e, false, &RowError{Path: p.cfg.Path, Err: fmt.Errorf("%w: no session id", parse.ErrMissingField)}
	}
	e = schema.Entry{
		Format:    schema.FormatGoose,
		Host:      p.cfg.Host,
		Path:      p.cfg.Path + "#" + r.ID,
		SessionID: r.ID,
		EntryID:   "goose:" + r.ID,
		Kind:      schema.KindMessage,
		Role:      schema.RoleAssistant,
		Meta:      true,
		Subtype:   SubtypeSessionTotal,
		CWD:       r.WorkingDir,
		Title:     r.Name,
		Provider:  r.Provider,
	}
	fail := func(ferr error) {
		if err == nil {
			err = &RowError{Path: p.cfg.Path, ID: r.ID, Err: ferr}
		}
	}
	if t, tok := ParseTime(r.CreatedAt); tok {
		e.TS = t
	} else if strings.TrimSpace(r.CreatedAt) != "" {
		fail(fmt.Errorf("%w: created_at %q", parse.ErrBadField, r.CreatedAt))
	}
	if t, tok := ParseTime(r.UpdatedAt); tok {
		e.Line = t.UnixMilli()
	} else if !e.TS.IsZero() {
		e.Line = e.TS.UnixMilli()
	}
	if strings.TrimSpace(r.ModelConfig) != "" {
		var mc struct {
			ModelName string `json:"model_name"`
		}
		if jerr := json.Unmarshal([]byte(r.ModelConfig), &mc); jerr != nil {
			fail(fmt.Errorf("%w: model_config_json: %v", parse.ErrBadField, jerr))
		}
		e.Model = strings.TrimSpace(mc.ModelName)
	}
	if r.AccCost != nil && *r.AccCost > 0 {
		c := *r.AccCost
		e.CostUSD = &c
	}
	pick := func(acc, last *int64) *int64 {
		if acc != nil && *acc > 0 {
			return acc
		}
		if last != nil && *last > 0 {
			return last
		}
		return nil
	}
	var u schema.Usage
	for _, c := range []struct {
		name string
		v    *int64
		dst  *int64
	}{
		{"input", pick(r.AccInput, r.Input), &u.Input},
		{"output", pick(r.AccOutput, r.Output), &u.Output},
	} {
		if c.v == nil {
			continue
		}
		if *c.v > parse.MaxTokens {
			fail(fmt.Errorf("%w: %s_tokens %d", parse.ErrImplausibleCount, c.name, *c.v))
			return e, e.Model != "", err
		}
		*c.dst = *c.v
	}
	total := u.Input + u.Output
	if t := pick(r.AccTotal, r.Total); t != nil {
		if *t > parse.MaxTokens {
			fail(fmt.Errorf("%w: total_tokens %d", parse.ErrImplausibleCount, *t))
			return e, e.Model != "", err
		}
		total = *t
	}
	if extra := total - u.Input - u.Output; extra > 0 {
		// What the total holds beyond input and output: reasoning, billed
		// as output (ccusage does the same).
		u.Reasoning = extra
		u.Output += extra
	}
	if e.Model == "" || u.IsZero() {
		return e, false, err
	}
	e.Usage = &u
	e.UsageKey = "goose:" + r.ID
	return e, true, err
}

// rowJSON is a [Row] in its JSON form: the sessions table's column names
// (the golden tests' input, `sqlite3 -json` output).
type rowJSON struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	WorkingDir  string          `json:"working_dir"`
	CreatedAt   json.RawMessage `json:"created_at"`
	UpdatedAt   json.RawMessage `json:"updated_at"`
	Provider    string          `json:"provider_name"`
	ModelConfig *string         `json:"model_config_json"`
	SessionType string          `json:"session_type"`
	Total       *int64          `json:"total_tokens"`
	Input       *int64          `json:"input_tokens"`
	Output      *int64          `json:"output_tokens"`
	AccTotal    *int64          `json:"accumulated_total_tokens"`
	AccInput    *int64          `json:"accumulated_input_tokens"`
	AccOutput   *int64          `json:"accumulated_output_tokens"`
	AccCost     *float64        `json:"accumulated_cost"`
}

// timeText returns a JSON string's text or a number's digits.
func timeText(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(v))
}

// Parse appends the entry of one line holding a session row in its JSON
// form (the sessions table's column names). A line that is not one gives
// a *schema.DecodeError and no entry; a session without usage gives none.
func (p *Parser) Parse(dst []schema.Entry, line jsonl.Line) ([]schema.Entry, error) {
	var j rowJSON
	d := json.NewDecoder(bytes.NewReader(line.Bytes))
	if err := d.Decode(&j); err != nil {
		return dst, parse.Fail(&p.cfg, line, 0, fmt.Errorf("%w: %w", parse.ErrBadField, err))
	}
	if _, err := d.Token(); err != io.EOF {
		return dst, parse.Fail(&p.cfg, line, 0, fmt.Errorf("%w: data after the session", parse.ErrBadField))
	}
	r := Row{ID: j.ID, Name: j.Name, WorkingDir: j.WorkingDir, CreatedAt: timeText(j.CreatedAt), UpdatedAt: timeText(j.UpdatedAt),
		Provider: j.Provider, SessionType: j.SessionType, Total: j.Total, Input: j.Input, Output: j.Output,
		AccTotal: j.AccTotal, AccInput: j.AccInput, AccOutput: j.AccOutput, AccCost: j.AccCost}
	if j.ModelConfig != nil {
		r.ModelConfig = *j.ModelConfig
	}
	e, ok, err := p.Row(&r)
	if err != nil {
		var re *RowError
		if errors.As(err, &re) {
			err = re.Err
		}
		err = parse.Fail(&p.cfg, line, 0, err)
	}
	if ok {
		dst = append(dst, e)
	}
	return dst, err
}
