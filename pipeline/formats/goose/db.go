package goose

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"

	_ "modernc.org/sqlite" // pure Go SQLite
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
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	var h [16]byte
	n, _ := f.Read(h[:])
	f.Close()
	if n < len(h) || string(h[:]) != "SQLite format 3\x00" {
		return nil, fmt.Errorf("%w: %s: no SQLite header", ErrNotDatabase, path)
	}
	u := url.URL{Scheme: "file", Opaque: (&url.URL{Path: path}).EscapedPath(),
		RawQuery: "mode=ro&_pragma=busy_timeout(5000)&_pragma=query_only(1)"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	have := map[string]bool{}
	tr, err := db.QueryContext(ctx, "SELECT name FROM pragma_table_info('sessions')")
	if err != nil {
		return nil, fmt.Errorf("read schema of %s: %w", path, err)
	}
	for tr.Next() {
		var c string
		if err := tr.Scan(&c); err != nil {
			tr.Close()
			return nil, fmt.Errorf("read schema of %s: %w", path, err)
		}
		have[c] = true
	}
	tr.Close()
	if !have["id"] || !have["model_config_json"] {
		return nil, fmt.Errorf("%w: %s: no sessions(id, model_config_json) table", ErrNotDatabase, path)
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
	q, err := db.QueryContext(ctx, "SELECT "+strings.Join(sel, ", ")+" FROM sessions ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
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
			return out, fmt.Errorf("read %s: %w", path, err)
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
	return out, q.Err()
}
