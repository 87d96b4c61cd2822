package kilo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/opencode"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// DatabaseName is the name of Kilo's database file.
const DatabaseName = "kilo.db"

// ErrNotDatabase reports a file that is not a Kilo database: not SQLite,
// or without a message table holding id, session_id and data.
var ErrNotDatabase = errors.New("kilo: not a Kilo database")

// IsDatabaseName reports whether a file name is Kilo's database's.
func IsDatabaseName(name string) bool { return name == DatabaseName }

// Open opens the Kilo database at path read-only. Kilo keeps OpenCode's
// message and session tables, so it is read as OpenCode's is (mode=ro, in
// WAL; see [opencode.Open]); a file that is none is an error wrapping
// [ErrNotDatabase].
func Open(ctx context.Context, path string) (*opencode.DB, error) {
	d, err := opencode.Open(ctx, path)
	if errors.Is(err, opencode.ErrNotDatabase) {
		return nil, fmt.Errorf("%w: %w", ErrNotDatabase, err)
	}
	return d, err
}

// Row returns the entry of one message row read from the database (Format
// "" when the row gives none; an error with the entry when a field is
// bad): the row handed to [Parser.Parse] as the line {"id",
// "session_id", "data"}, Line.Number its time_updated (its rowid in a
// table without one; else the rows given so far). The session's parent, directory (when the message has no
// path.cwd) and title come from the session table, as for OpenCode.
func (p *Parser) Row(r *opencode.Row) (schema.Entry, error) {
	p.rows++
	data := []byte(r.Data)
	if !json.Valid(data) {
		data, _ = json.Marshal(string(data)) // text: the parser reads a string holding the object
	}
	id, _ := json.Marshal(r.ID)
	sid, _ := json.Marshal(r.SessionID)
	p.line = append(p.line[:0], `{"id":`...)
	p.line = append(p.line, id...)
	p.line = append(p.line, `,"session_id":`...)
	p.line = append(p.line, sid...)
	p.line = append(p.line, `,"data":`...)
	p.line = append(p.line, data...)
	p.line = append(p.line, '}')
	n := r.TimeUpdated // as OpenCode's: each version of a row an occurrence of its own
	if n <= 0 {
		n = p.rows
	}
	es, err := p.Parse(p.out[:0], jsonl.Line{Bytes: p.line, Number: n})
	p.out = es[:0]
	if len(es) == 0 {
		return schema.Entry{}, err
	}
	e := es[0]
	if e.ParentSessionID == "" {
		e.ParentSessionID = r.ParentID
	}
	if e.CWD == "" {
		e.CWD = r.Directory
	}
	if e.Title == "" {
		e.Title = r.Title
	}
	return e, err
}

// ReadDB reads every message of the Kilo database at path and calls emit
// with each entry (the entry is reused after emit returns), onErr with
// each bad row (the reading goes on). It returns the number of rows read,
// and an error wrapping [ErrNotDatabase] for a file that is not a Kilo
// database, or the error that stopped the reading.
func ReadDB(ctx context.Context, path string, cfg parse.Config, emit func(*schema.Entry), onErr func(error)) (int64, error) {
	d, err := Open(ctx, path)
	if err != nil {
		return 0, err
	}
	defer d.Close()
	cfg.Path = path
	p := New(cfg)
	var (
		pos opencode.Position
		n   int64
	)
	for {
		rows, err := d.Rows(ctx, pos, opencode.ReadBatch, onErr)
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
		if len(rows) < opencode.ReadBatch {
			return n, nil
		}
		pos = rows[len(rows)-1].Position()
	}
}
