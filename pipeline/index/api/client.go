package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
)

// The answers of the API, as the handler writes them and the [Client]
// reads them.

// SessionsPage is the answer of GET /api/sessions.
type SessionsPage struct {
	Sessions   []index.Session `json:"sessions"`
	NextCursor string          `json:"next_cursor,omitempty"`
	Total      *int            `json:"total,omitempty"` // on the first page
}

// SessionDetail is the answer of GET /api/sessions/{id}.
type SessionDetail struct {
	Session index.Session `json:"session"`
	Turns   []index.Turn  `json:"turns"`
}

// UsagePage is the answer of GET /api/usage.
type UsagePage struct {
	GroupBy index.GroupBy    `json:"group_by"`
	Bucket  index.GroupBy    `json:"bucket,omitempty"`
	TZ      string           `json:"tz"`
	Rows    []index.UsageRow `json:"rows"`
	Total   index.UsageRow   `json:"total"`
}

// AlertsPage is the answer of GET /api/alerts.
type AlertsPage struct {
	Alerts          []alert.Event `json:"alerts"`
	Suppressed      []alert.Event `json:"suppressed"`
	SuppressedTotal uint64        `json:"suppressed_total"`
}

// errorBody is an error answer: {"error": "..."}, with the candidates
// of an ambiguous session id (409).
type errorBody struct {
	Error      string             `json:"error"`
	Candidates []index.SessionRef `json:"candidates,omitempty"`
}

// MaxAnswerBytes bounds an answer the Client reads.
const MaxAnswerBytes = 64 << 20

// Client is the Go client of the API: the indexer's query subcommands,
// sessionpipe top and the status line read the API through it.
type Client struct {
	URL   string       // the API, e.g. http://127.0.0.1:7474 (a trailing / is ignored)
	Token string       // bearer token, if the API wants one
	HTTP  *http.Client // nil: http.DefaultClient
}

// Error is an answer of the API other than 200 OK.
type Error struct {
	URL, Path string // what was asked (without the query)
	Code      int    // 404
	Status    string // "404 Not Found"
	// Message is the API's error message, as sent: it may hold any
	// character (a session id quoted); "" when the body is not the
	// API's JSON (a proxy's page).
	Message string
	// Candidates are, for 409 Conflict, the sessions a bare id names.
	Candidates []index.SessionRef
}

// Error formats the error as "URL PATH: STATUS MESSAGE".
func (e *Error) Error() string {
	return fmt.Sprintf("%s %s: %s %s", e.URL, e.Path, e.Status, e.Message)
}

// Raw asks for path (e.g. /api/sessions) with the query v and returns
// the answer's body. An answer other than 200 is an *[Error]; an API
// that cannot be reached is an error saying so, naming c.URL.
func (c *Client) Raw(ctx context.Context, path string, v url.Values) ([]byte, error) {
	base := strings.TrimRight(c.URL, "/")
	u := base + path
	if len(v) > 0 {
		u += "?" + v.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the indexer at %s: %w", base, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes))
	if err != nil {
		return nil, fmt.Errorf("read the answer of %s%s: %w", base, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		e := &Error{URL: base, Path: path, Code: resp.StatusCode, Status: resp.Status}
		var b errorBody
		if json.Unmarshal(body, &b) == nil {
			e.Message, e.Candidates = b.Error, b.Candidates
		}
		return nil, e
	}
	return body, nil
}

// Get is [Client.Raw] with the answer decoded into out.
func (c *Client) Get(ctx context.Context, path string, v url.Values, out any) error {
	body, err := c.Raw(ctx, path, v)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("decode the answer of %s%s: %w", strings.TrimRight(c.URL, "/"), path, err)
	}
	return nil
}

// Sessions lists sessions: GET /api/sessions with the filters v (host,
// format, since, sort, limit, cursor, ...).
func (c *Client) Sessions(ctx context.Context, v url.Values) (SessionsPage, error) {
	var p SessionsPage
	return p, c.Get(ctx, "/api/sessions", v, &p)
}

// Session reads one session and its turns: GET /api/sessions/{id}, with
// format and host in v when ids collide (a 409 *[Error] lists the
// candidates).
func (c *Client) Session(ctx context.Context, id string, v url.Values) (SessionDetail, error) {
	var d SessionDetail
	return d, c.Get(ctx, "/api/sessions/"+url.PathEscape(id), v, &d)
}

// Usage sums the API calls: GET /api/usage with v (group_by, bucket, tz,
// since, until and the filters).
func (c *Client) Usage(ctx context.Context, v url.Values) (UsagePage, error) {
	var p UsagePage
	return p, c.Get(ctx, "/api/usage", v, &p)
}

// Alerts lists the recent alerts: GET /api/alerts with v (limit).
func (c *Client) Alerts(ctx context.Context, v url.Values) (AlertsPage, error) {
	var p AlertsPage
	return p, c.Get(ctx, "/api/alerts", v, &p)
}

// IsNotFound reports whether err is the API's 404 (a session it does
// not know).
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == http.StatusNotFound
}
