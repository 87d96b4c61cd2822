package hermes

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/internal/sqlitedb"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// DatabaseName is the name Hermes gives its database ($HERMES_HOME/state.db).
// The name is generic: a file of that name is Hermes's only when its
// sessions table has Hermes's columns (see [Open]).
const DatabaseName = "state.db"

// ErrNotDatabase reports a file that is not a Hermes database: not
// SQLite, or without a sessions table holding id, model, started_at,
// input_tokens and output_tokens (the columns ccusage 20.0.24 reads too).
var ErrNotDatabase = errors.New("hermes: not a Hermes database")

// ErrRow reports a session row whose columns cannot be read (a NULL id).
var ErrRow = errors.New("hermes: bad session")

// RowError locates a bad session row of a database.
type RowError struct {
	Path string // the database
	ID   string // the session id ("" when it is the fault)
	Err  error
}

func (e *RowError) Error() string { return fmt.Sprintf("%s: session %s: %v", e.Path, e.ID, e.Err) }
func (e *RowError) Unwrap() error { return e.Err }

// required are the sessions columns a Hermes database has (the schema of
// hermes_state.py since its first release, and ccusage's test schema).
var required = []string{"id", "model", "started_at", "input_tokens", "output_tokens"}

// rowColumns are the columns given to [Parser.Parse], in the JSON object
// of a row; a column the table lacks (an older Hermes) is left out.
var rowColumns = []string{
	"id", "model", "billing_provider", "started_at", "input_tokens", "output_tokens", "cache_read_tokens",
	"cache_write_tokens", "reasoning_tokens", "estimated_cost_usd", "actual_cost_usd", "parent_session_id",
	"title", "cwd",
}

// activityColumns tell when a row last changed, as far as Hermes records
// it: the position of a row (see [Row.Activity]).
var activityColumns = []string{"started_at", "ended_at", "last_activity_at"}

// Row is one row of the sessions table: its columns as a JSON object
// line, what [Parser.Parse] reads.
type Row struct {
	// ID is the session id (the row's primary key).
	ID string
	// RowID is SQLite's rowid: the entry's Line.
	RowID int64
	// Activity is the latest of started_at, ended_at and last_activity_at,
	// in Unix milliseconds (0 without any). Hermes's token counters are
	// written by a background writer that stamps none of them, so a row
	// can change without its activity moving: [Row.Version] tells.
	Activity int64
	// JSON is the row's columns as one JSON object.
	JSON []byte
}

// Version identifies the row's content: two reads of the row with the
// same version give the same entry.
func (r *Row) Version() string {
	h := fnv.New64a()
	h.Write(r.JSON)
	return strconv.FormatUint(h.Sum64(), 36)
}

// DB is a Hermes database opened read-only, on one connection. It is not
// safe for concurrent use.
type DB struct {
	path    string
	db      *sql.DB
	conn    *sql.Conn
	query   string
	cols    []string // the columns of query after rowid and activity
	version int64
}

// Open opens the Hermes database at path read-only (mode=ro, WAL-safe:
// Hermes runs in WAL mode and a reader never blocks its writer; never
// immutable) and checks its schema before any row is read: a file that is
// not SQLite, or whose sessions table lacks Hermes's columns, is an error
// wrapping [ErrNotDatabase] (a state.db of another program).
func Open(ctx context.Context, path string) (*DB, error) {
	db, conn, err := sqlitedb.Open(ctx, path, ErrNotDatabase)
	if err != nil {
		return nil, err
	}
	d := &DB{path: path, db: db, conn: conn}
	if err := d.inspect(ctx); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// inspect builds the query from the columns the sessions table has.
func (d *DB) inspect(ctx context.Context) error {
	have, err := sqlitedb.Columns(ctx, d.conn, d.path, "sessions")
	if err != nil {
		return err
	}
	for _, c := range required {
		if !have[c] {
			return fmt.Errorf("%w: %s: no sessions(%s) table", ErrNotDatabase, d.path, strings.Join(required, ", "))
		}
	}
	var act []string
	for _, c := range activityColumns {
		if have[c] {
			act = append(act, "coalesce(CAST("+c+" AS REAL), 0)")
		}
	}
	sel := []string{"rowid", "max(" + strings.Join(append(act, "0"), ", ") + ")"}
	d.cols = d.cols[:0]
	for _, c := range rowColumns {
		if have[c] {
			sel = append(sel, c)
			d.cols = append(d.cols, c)
		}
	}
	d.query = "SELECT " + strings.Join(sel, ", ") + " FROM sessions ORDER BY rowid"
	return nil
}

// Path returns the database's path.
func (d *DB) Path() string { return d.path }

// Close closes the database.
func (d *DB) Close() error {
	err := d.conn.Close()
	if e := d.db.Close(); e != nil && err == nil {
		err = e
	}
	return err
}

// Changed reports whether another connection committed since the last
// call (SQLite's data_version; true on the first call).
func (d *DB) Changed(ctx context.Context) (bool, error) {
	var v int64
	if err := d.conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
		return false, fmt.Errorf("read %s: %w", d.path, err)
	}
	changed := v != d.version || d.version == 0
	d.version = v
	return changed, nil
}

// Rows returns every session row in one read (a sessions table holds a
// row per session: hundreds or thousands, not millions), in rowid order.
// A row without id is reported to onBad (a *RowError) and left out.
func (d *DB) Rows(ctx context.Context, onBad func(error)) ([]Row, error) {
	q, err := d.conn.QueryContext(ctx, d.query)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", d.path, err)
	}
	defer q.Close()
	var out []Row
	vals := make([]any, 2+len(d.cols))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for q.Next() {
		if err := q.Scan(ptrs...); err != nil {
			return out, fmt.Errorf("read %s: %w", d.path, err)
		}
		r, err := d.row(vals)
		if err != nil {
			if onBad != nil {
				onBad(err)
			}
			continue
		}
		out = append(out, r)
	}
	if err := q.Err(); err != nil {
		return out, fmt.Errorf("read %s: %w", d.path, err)
	}
	return out, nil
}

// row builds a Row from the values of one result row.
func (d *DB) row(vals []any) (Row, error) {
	var r Row
	r.RowID, _ = vals[0].(int64)
	if a, ok := number(vals[1]); ok && a > 0 && a < 253402300800 {
		r.Activity = int64(math.Round(a * 1000))
	}
	obj := make(map[string]any, len(d.cols))
	for i, c := range d.cols {
		v := vals[2+i]
		switch x := v.(type) {
		case []byte:
			v = string(x)
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				v = strconv.FormatFloat(x, 'g', -1, 64) // a string: the parser reports it
			}
		}
		obj[c] = v
		if c == "id" {
			r.ID, _ = v.(string)
			if n, ok := v.(int64); ok {
				r.ID = strconv.FormatInt(n, 10)
				obj[c] = r.ID
			}
		}
	}
	if r.ID == "" {
		return r, &RowError{Path: d.path, Err: fmt.Errorf("%w: NULL or empty id (rowid %d)", ErrRow, r.RowID)}
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return r, &RowError{Path: d.path, ID: r.ID, Err: fmt.Errorf("%w: %w", ErrRow, err)}
	}
	r.JSON = data
	return r, nil
}

// number reads a SQLite value as a number.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	}
	return 0, false
}

// Row parses one row read by [DB.Rows] into its entry (the entry's Line
// is the row's rowid, its Path the database's). A bad field is a
// *RowError wrapping the parser's *schema.DecodeError, with the entry
// kept without it as [Parser.Parse] keeps it; ok is false when the row
// gives no entry.
func (p *Parser) Row(r *Row) (e schema.Entry, ok bool, err error) {
	es, perr := p.Parse(nil, jsonl.Line{Number: max(r.RowID, 1), Bytes: r.JSON})
	if perr != nil {
		err = &RowError{Path: p.cfg.Path, ID: r.ID, Err: perr}
	}
	if len(es) == 0 {
		return schema.Entry{}, false, err
	}
	return es[0], true, err
}

// ReadDB reads every session of the Hermes database at path, read-only,
// calling emit with the entry of each row that gives one and onErr with
// each bad row (a *RowError; the reading goes on). It returns the number
// of rows read, and an error wrapping [ErrNotDatabase] for a file that is
// not a Hermes database.
func ReadDB(ctx context.Context, path string, cfg parse.Config, emit func(*schema.Entry), onErr func(error)) (int64, error) {
	d, err := Open(ctx, path)
	if err != nil {
		return 0, err
	}
	defer d.Close()
	rows, err := d.Rows(ctx, onErr)
	if err != nil {
		return 0, err
	}
	cfg.Path = path
	p := New(cfg)
	for i := range rows {
		e, ok, err := p.Row(&rows[i])
		if err != nil && onErr != nil {
			onErr(err)
		}
		if ok {
			emit(&e)
		}
	}
	return int64(len(rows)), nil
}
