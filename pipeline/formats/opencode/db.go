package opencode

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

// ErrNotDatabase reports a file that is not an OpenCode database: not
// SQLite, or without a message table holding id, session_id and data.
var ErrNotDatabase = errors.New("opencode: not an OpenCode database")

// BusyTimeout is how long a read waits for a writer's lock (SQLite's
// busy_timeout, in ms). In WAL mode a reader never waits for a writer
// but while the WAL is reset; it never blocks the writer.
const BusyTimeout = sqlitedb.BusyTimeout

// IsDatabaseName reports whether a file name is one OpenCode gives its
// database: opencode.db, or opencode-<channel>.db for the other release
// channels (ccusage's loader.rs: letters, digits, '_' and '-').
func IsDatabaseName(name string) bool {
	if name == "opencode.db" {
		return true
	}
	ch, ok := strings.CutPrefix(name, "opencode-")
	if !ok {
		return false
	}
	ch, ok = strings.CutSuffix(ch, ".db")
	if !ok || ch == "" {
		return false
	}
	for _, c := range ch {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// DB is an OpenCode database opened read-only, on one connection. It is
// not safe for concurrent use.
type DB struct {
	path string
	db   *sql.DB
	conn *sql.Conn
	// timed is true when message has time_created and time_updated (every
	// OpenCode since 1.2); rows are then read in (time_updated, id) order,
	// else (ccusage's fixtures: id, session_id, data) in rowid order.
	timed   bool
	session bool // a session table with parent_id, directory and title
	version int64
}

// Open opens the database at path read-only (mode=ro, never immutable:
// the agent writes it meanwhile; WAL readers never lock the writer out)
// and checks that it is an OpenCode database, else an error wrapping
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

// IsSQLite reports whether the file at path starts with SQLite's header
// ("SQLite format 3\x00"); false when it cannot be read.
func IsSQLite(path string) bool { return sqlitedb.IsSQLite(path) }

// inspect reads the columns of message and session.
func (d *DB) inspect(ctx context.Context) error {
	cols := func(table string) (map[string]bool, error) { return sqlitedb.Columns(ctx, d.conn, d.path, table) }
	m, err := cols("message")
	if err != nil {
		return err
	}
	if !m["id"] || !m["session_id"] || !m["data"] {
		return fmt.Errorf("%w: %s: no message(id, session_id, data) table", ErrNotDatabase, d.path)
	}
	d.timed = m["time_created"] && m["time_updated"]
	s, err := cols("session")
	if err != nil {
		return err
	}
	d.session = s["id"] && s["parent_id"] && s["directory"] && s["title"]
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
// call (SQLite's data_version; true on the first call): a poll with
// nothing new costs one pragma, not a scan of the table.
func (d *DB) Changed(ctx context.Context) (bool, error) {
	var v int64
	if err := d.conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
		return false, fmt.Errorf("read %s: %w", d.path, err)
	}
	changed := v != d.version || d.version == 0
	d.version = v
	return changed, nil
}

// query returns the SELECT of the rows after a position, in position
// order.
func (d *DB) query() string {
	var b strings.Builder
	b.WriteString("SELECT m.id, m.session_id, ")
	if d.timed {
		b.WriteString("coalesce(m.time_created, 0), coalesce(m.time_updated, 0), ")
	} else {
		b.WriteString("0, m.rowid, ")
	}
	b.WriteString("m.data, ")
	if d.session {
		b.WriteString("coalesce(s.parent_id, ''), coalesce(s.directory, ''), coalesce(s.title, '') FROM message m LEFT JOIN session s ON s.id = m.session_id ")
	} else {
		b.WriteString("'', '', '' FROM message m ")
	}
	upd := "m.rowid"
	if d.timed {
		upd = "coalesce(m.time_updated, 0)"
	}
	fmt.Fprintf(&b, "WHERE %[1]s > ?1 OR (%[1]s = ?1 AND m.id > ?2) ORDER BY %[1]s, m.id LIMIT ?3", upd)
	return b.String()
}

// Rows returns at most limit rows after position after, in (time_updated,
// id) order, in one short read transaction. A row whose columns are not
// text (a NULL id) is reported to onBad and left out.
func (d *DB) Rows(ctx context.Context, after Position, limit int, onBad func(error)) ([]Row, error) {
	rows, err := d.conn.QueryContext(ctx, d.query(), after.Updated, after.ID, limit)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", d.path, err)
	}
	defer rows.Close()
	var out []Row
	for rows.Next() {
		var (
			id, session, data  sql.NullString
			parent, dir, title string
			created, updated   int64
		)
		if err := rows.Scan(&id, &session, &created, &updated, &data, &parent, &dir, &title); err != nil {
			return out, fmt.Errorf("read %s: %w", d.path, err)
		}
		if !id.Valid || !session.Valid || !data.Valid {
			if onBad != nil {
				onBad(&RowError{Path: d.path, ID: id.String, Err: fmt.Errorf("%w: NULL id, session_id or data", ErrRow)})
			}
			continue
		}
		out = append(out, Row{ID: id.String, SessionID: session.String, TimeCreated: created, TimeUpdated: updated,
			Data: []byte(data.String), ParentID: parent, Directory: dir, Title: title})
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("read %s: %w", d.path, err)
	}
	return out, nil
}

// End returns the position of the last row: where a reader that starts
// at the end (tail.Config.FromEnd) begins.
func (d *DB) End(ctx context.Context) (Position, error) {
	var p Position
	var id sql.NullString
	q := "SELECT coalesce(time_updated, 0), id FROM message ORDER BY coalesce(time_updated, 0) DESC, id DESC LIMIT 1"
	if !d.timed {
		q = "SELECT rowid, id FROM message ORDER BY rowid DESC, id DESC LIMIT 1"
	}
	err := d.conn.QueryRowContext(ctx, q).Scan(&p.Updated, &id)
	if errors.Is(err, sql.ErrNoRows) {
		return Position{}, nil
	}
	if err != nil {
		return Position{}, fmt.Errorf("read %s: %w", d.path, err)
	}
	p.ID = id.String
	return p, nil
}

// ReadBatch is how many rows [ReadDB] and the tailer read at a time.
const ReadBatch = 1000

// ReadDB reads every message of the database at path and calls emit with
// each entry (the entry is reused after emit returns), onErr with each
// bad row (a *RowError; the reading goes on). It returns the number of
// rows read, and an error wrapping [ErrNotDatabase] for a file that is
// not an OpenCode database, or the error that stopped the reading.
func ReadDB(ctx context.Context, path string, cfg parse.Config, emit func(*schema.Entry), onErr func(error)) (int64, error) {
	d, err := Open(ctx, path)
	if err != nil {
		return 0, err
	}
	defer d.Close()
	cfg.Path = path
	p := New(cfg)
	var (
		pos Position
		n   int64
	)
	for {
		rows, err := d.Rows(ctx, pos, ReadBatch, onErr)
		if err != nil {
			return n, err
		}
		for i := range rows {
			n++
			e, err := p.Row(&rows[i])
			if err != nil && onErr != nil {
				onErr(err)
			}
			if e.Format != "" {
				emit(&e)
			}
		}
		if len(rows) < ReadBatch {
			return n, nil
		}
		pos = rows[len(rows)-1].Position()
	}
}
