package goose

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/internal/sqlitedb"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

// DatabaseName is the name Goose gives its database.
const DatabaseName = "sessions.db"

// ErrNotDatabase reports a file that is not a Goose database: not SQLite,
// or without a sessions table holding id and model_config_json.
var ErrNotDatabase = errors.New("goose: not a Goose database")

// columns are the sessions columns read, in Row's order; a column the
// table lacks (an older Goose) reads as NULL.
var columns = []string{
	"id", "name", "working_dir", "created_at", "updated_at", "provider_name", "model_config_json", "session_type",
	"total_tokens", "input_tokens", "output_tokens",
	"accumulated_total_tokens", "accumulated_input_tokens", "accumulated_output_tokens", "accumulated_cost",
}

// ReadDB reads every session of the Goose database at path, read-only
// (mode=ro, WAL-safe, in one short read), calling emit with the entry of
// each session with usage, onErr with each bad row (a *RowError). It
// returns an error wrapping [ErrNotDatabase] for a file that is not a
// Goose database.
func ReadDB(ctx context.Context, path string, cfg parse.Config, emit func(*schema.Entry), onErr func(error)) (int64, error) {
	rows, err := ReadRows(ctx, path)
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

// ReadRows returns every row of the sessions table of the Goose database
// at path.
func ReadRows(ctx context.Context, path string) ([]Row, error) {
	d, err := Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Rows(ctx)
}

// DB is a Goose database opened read-only, on one connection. It is not
// safe for concurrent use.
type DB struct {
	path    string
	db      *sql.DB
	conn    *sql.Conn
	query   string
	version int64
}

// Open opens the Goose database at path read-only (mode=ro, WAL-safe,
// never immutable) and checks that it is one, else an error wrapping
// [ErrNotDatabase].
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
	if !have["id"] || !have["model_config_json"] {
		return fmt.Errorf("%w: %s: no sessions(id, model_config_json) table", ErrNotDatabase, d.path)
	}
	sel := make([]string, len(columns))
	for i, c := range columns {
		switch {
		case !have[c]:
			sel[i] = "NULL"
		case i < 8:
			sel[i] = "CAST(" + c + " AS TEXT)"
		default:
			sel[i] = c
		}
	}
	d.query = "SELECT " + strings.Join(sel, ", ") + " FROM sessions ORDER BY id"
	return nil
}

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

// Rows returns every session row, in one read (a sessions table holds a
// row per session: hundreds, not millions).
func (d *DB) Rows(ctx context.Context) ([]Row, error) {
	q, err := d.conn.QueryContext(ctx, d.query)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", d.path, err)
	}
	defer q.Close()
	var out []Row
	for q.Next() {
		var (
			text [8]sql.NullString
			num  [6]sql.NullInt64
			cost sql.NullFloat64
		)
		if err := q.Scan(&text[0], &text[1], &text[2], &text[3], &text[4], &text[5], &text[6], &text[7],
			&num[0], &num[1], &num[2], &num[3], &num[4], &num[5], &cost); err != nil {
			return out, fmt.Errorf("read %s: %w", d.path, err)
		}
		r := Row{ID: text[0].String, Name: text[1].String, WorkingDir: text[2].String, CreatedAt: text[3].String,
			UpdatedAt: text[4].String, Provider: text[5].String, ModelConfig: text[6].String, SessionType: text[7].String}
		for i, dst := range []**int64{&r.Total, &r.Input, &r.Output, &r.AccTotal, &r.AccInput, &r.AccOutput} {
			if num[i].Valid {
				v := num[i].Int64
				*dst = &v
			}
		}
		if cost.Valid {
			c := cost.Float64
			r.AccCost = &c
		}
		out = append(out, r)
	}
	if err := q.Err(); err != nil {
		return out, fmt.Errorf("read %s: %w", d.path, err)
	}
	return out, nil
}
