// Package sqlitedb opens the agents' SQLite databases (OpenCode, Kilo,
// Goose, Hermes) the one way sessionpipe reads them: the file's header
// checked first, then opened read-only through modernc.org/sqlite, on one
// connection, WAL-safe (a reader never blocks the agent's writer, and the
// database is never opened immutable, so a change is seen).
package sqlitedb

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"

	_ "modernc.org/sqlite" // the "sqlite" driver
)

// BusyTimeout is how long a read waits for a writer's lock (SQLite's
// busy_timeout, in milliseconds) before it fails and is tried again at the
// next poll.
const BusyTimeout = 5000

// header is the first 16 bytes of every SQLite database file.
const header = "SQLite format 3\x00"

// IsSQLite reports whether the file at path starts with SQLite's header;
// false when it cannot be read.
func IsSQLite(path string) bool { return CheckHeader(path, errNotSQLite) == nil }

var errNotSQLite = fmt.Errorf("not a SQLite database")

// CheckHeader returns an error wrapping notDB when the file at path does
// not start as a SQLite database, and the error of opening it when it
// cannot be read.
func CheckHeader(path string, notDB error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var h [len(header)]byte
	if n, _ := f.Read(h[:]); n < len(h) || string(h[:]) != header {
		return fmt.Errorf("%w: %s: no SQLite header", notDB, path)
	}
	return nil
}

// Open checks the header of the database at path (an error wrapping notDB
// when it is not SQLite) and opens it read-only, with query_only and
// BusyTimeout, on one connection, which it returns with its pool; close
// the connection, then the pool.
func Open(ctx context.Context, path string, notDB error) (*sql.DB, *sql.Conn, error) {
	if err := CheckHeader(path, notDB); err != nil {
		return nil, nil, err
	}
	u := url.URL{Scheme: "file", Opaque: (&url.URL{Path: path}).EscapedPath(),
		RawQuery: fmt.Sprintf("mode=ro&_pragma=busy_timeout(%d)&_pragma=query_only(1)", BusyTimeout)}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, conn, nil
}

// Columns returns the names of table's columns (none when there is no
// such table); path names the database in errors.
func Columns(ctx context.Context, conn *sql.Conn, path, table string) (map[string]bool, error) {
	rows, err := conn.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, fmt.Errorf("read schema of %s: %w", path, err)
	}
	defer rows.Close()
	have := make(map[string]bool)
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, fmt.Errorf("read schema of %s: %w", path, err)
		}
		have[c] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read schema of %s: %w", path, err)
	}
	return have, nil
}
