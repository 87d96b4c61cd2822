package tail

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/goose"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/hermes"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/kilo"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/opencode"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

// errNotDatabase reports a file under the watches named like an agent's
// database that is none of the agents'.
var errNotDatabase = errors.New("tail: not an OpenCode, Kilo, Goose nor Hermes database")

// isDatabaseName reports whether a file name is an agent database's: it
// is polled, not tailed (formats.IsDatabaseName).
func isDatabaseName(name string) bool { return formats.IsDatabaseName(name) }

// dbRecord is one row of an agent's database, parsed.
type dbRecord struct {
	pos     opencode.Position // where the row is, in the order it is read
	version string            // what tells two versions of the row apart
	entry   schema.Entry      // Format "" when the row gives no entry
	err     error             // a bad row: its dead letter
}

// dbReader is an agent's database opened read-only.
type dbReader interface {
	// Changed reports whether another connection committed since the
	// last call (true on the first).
	Changed(ctx context.Context) (bool, error)
	// Records returns at most limit rows after position after, in
	// position order.
	Records(ctx context.Context, after opencode.Position, limit int, onBad func(error)) ([]dbRecord, error)
	// End returns the position of the last row.
	End(ctx context.Context) (opencode.Position, error)
	Close() error
}

// openDatabase opens path as Kilo's database when it is named kilo.db
// (Kilo keeps OpenCode's tables), else as OpenCode's, else Goose's, else
// Hermes's; a file that is none is an error wrapping errNotDatabase.
func openDatabase(ctx context.Context, path string, cfg parse.Config) (dbReader, error) {
	cfg.Path = path
	db, err := opencode.Open(ctx, path)
	if err == nil {
		if kilo.IsDatabaseName(filepath.Base(path)) {
			return &messageReader{db: db, row: kilo.New(cfg).Row}, nil
		}
		return &messageReader{db: db, row: opencode.New(cfg).Row}, nil
	}
	if !errors.Is(err, opencode.ErrNotDatabase) {
		return nil, err
	}
	g, gerr := goose.Open(ctx, path)
	if gerr == nil {
		return &gooseReader{db: g, p: goose.New(cfg)}, nil
	}
	if !errors.Is(gerr, goose.ErrNotDatabase) {
		return nil, gerr
	}
	h, herr := hermes.Open(ctx, path)
	if herr == nil {
		return &hermesReader{db: h, p: hermes.New(cfg), bad: make(map[string]bool)}, nil
	}
	if errors.Is(herr, hermes.ErrNotDatabase) {
		return nil, errors.Join(errNotDatabase, err, gerr, herr)
	}
	return nil, herr
}

// messageReader reads a message table of OpenCode's shape: OpenCode's,
// and Kilo's (which keeps OpenCode's tables); row parses one row as the
// agent's parser does.
type messageReader struct {
	db  *opencode.DB
	row func(*opencode.Row) (schema.Entry, error)
}

func (r *messageReader) Changed(ctx context.Context) (bool, error) { return r.db.Changed(ctx) }
func (r *messageReader) End(ctx context.Context) (opencode.Position, error) {
	return r.db.End(ctx)
}
func (r *messageReader) Close() error { return r.db.Close() }

func (r *messageReader) Records(ctx context.Context, after opencode.Position, limit int, onBad func(error)) ([]dbRecord, error) {
	rows, err := r.db.Rows(ctx, after, limit, onBad)
	out := make([]dbRecord, len(rows))
	for i := range rows {
		e, perr := r.row(&rows[i])
		out[i] = dbRecord{pos: rows[i].Position(), version: strconv.FormatInt(rows[i].TimeUpdated, 10), entry: e, err: perr}
	}
	return out, err
}

// gooseReader reads Goose's sessions table: one row per session, read
// whole at each change; a session's position is its updated_at (to the
// second) and id, its version updated_at and its usage (two updates in
// one second are two versions).
type gooseReader struct {
	db *goose.DB
	p  *goose.Parser
}

func (r *gooseReader) Changed(ctx context.Context) (bool, error) { return r.db.Changed(ctx) }
func (r *gooseReader) Close() error                              { return r.db.Close() }

func (r *gooseReader) all(ctx context.Context) ([]dbRecord, error) {
	rows, err := r.db.Rows(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]dbRecord, 0, len(rows))
	for i := range rows {
		e, ok, perr := r.p.Row(&rows[i])
		if !ok {
			e = schema.Entry{}
		}
		rec := dbRecord{pos: opencode.Position{Updated: e.Line, ID: rows[i].ID}, entry: e, err: perr}
		if e.Line == 0 {
			if t, tok := goose.ParseTime(rows[i].UpdatedAt); tok {
				rec.pos.Updated = t.UnixMilli()
			}
		}
		rec.version = strconv.FormatInt(rec.pos.Updated, 10)
		if e.Usage != nil {
			rec.version += ":" + strconv.FormatInt(e.Usage.Total(), 10)
		}
		out = append(out, rec)
	}
	slices.SortFunc(out, func(a, b dbRecord) int {
		switch {
		case a.pos.Before(b.pos):
			return -1
		case b.pos.Before(a.pos):
			return 1
		}
		return 0
	})
	return out, nil
}

func (r *gooseReader) Records(ctx context.Context, after opencode.Position, limit int, _ func(error)) ([]dbRecord, error) {
	all, err := r.all(ctx)
	if err != nil {
		return nil, err
	}
	i, _ := slices.BinarySearchFunc(all, after, func(rec dbRecord, p opencode.Position) int {
		if rec.pos.Before(p) || rec.pos == p {
			return -1
		}
		return 1
	})
	all = all[i:]
	if len(all) > limit {
		all = all[:limit]
	}
	return all, nil
}

func (r *gooseReader) End(ctx context.Context) (opencode.Position, error) {
	all, err := r.all(ctx)
	if err != nil || len(all) == 0 {
		return opencode.Position{}, err
	}
	return all[len(all)-1].pos, nil
}

// wholeTable is a dbReader of a table read whole at every change whose
// rows change without their position moving (Hermes's sessions: its
// token counters are written by a background writer that stamps no
// time). A row is published when its version differs from the one
// acknowledged, whatever its position, and the versions acknowledged are
// checkpointed (DatabaseState.Versions).
type wholeTable interface {
	dbReader
	// Versions returns the version of every row as it is now, by id.
	Versions(ctx context.Context) (map[string]string, error)
}

// hermesReader reads Hermes's sessions table: one row per session, read
// whole at each change; a row's position is its activity (started_at,
// ended_at, last_activity_at, in ms) and id, its version the hash of its
// columns.
type hermesReader struct {
	db  *hermes.DB
	p   *hermes.Parser
	bad map[string]bool // rows without id reported (once each)
}

func (r *hermesReader) Changed(ctx context.Context) (bool, error) { return r.db.Changed(ctx) }
func (r *hermesReader) Close() error                              { return r.db.Close() }

func (r *hermesReader) all(ctx context.Context, onBad func(error)) ([]dbRecord, error) {
	rows, err := r.db.Rows(ctx, func(err error) {
		// A row without id is in every read of the table: its dead
		// letter is sent once.
		if k := err.Error(); onBad != nil && !r.bad[k] {
			r.bad[k] = true
			onBad(err)
		}
	})
	if err != nil {
		return nil, err
	}
	out := make([]dbRecord, 0, len(rows))
	for i := range rows {
		e, ok, perr := r.p.Row(&rows[i])
		if !ok {
			e = schema.Entry{}
		}
		out = append(out, dbRecord{pos: opencode.Position{Updated: rows[i].Activity, ID: rows[i].ID},
			version: rows[i].Version(), entry: e, err: perr})
	}
	slices.SortFunc(out, func(a, b dbRecord) int {
		switch {
		case a.pos.Before(b.pos):
			return -1
		case b.pos.Before(a.pos):
			return 1
		}
		return 0
	})
	return out, nil
}

func (r *hermesReader) Records(ctx context.Context, after opencode.Position, limit int, onBad func(error)) ([]dbRecord, error) {
	all, err := r.all(ctx, onBad)
	if err != nil {
		return nil, err
	}
	i, _ := slices.BinarySearchFunc(all, after, func(rec dbRecord, p opencode.Position) int {
		if rec.pos.Before(p) || rec.pos == p {
			return -1
		}
		return 1
	})
	all = all[i:]
	if len(all) > limit {
		all = all[:limit]
	}
	return all, nil
}

func (r *hermesReader) End(ctx context.Context) (opencode.Position, error) {
	all, err := r.all(ctx, nil)
	if err != nil || len(all) == 0 {
		return opencode.Position{}, err
	}
	return all[len(all)-1].pos, nil
}

func (r *hermesReader) Versions(ctx context.Context) (map[string]string, error) {
	all, err := r.all(ctx, nil)
	if err != nil {
		return nil, err
	}
	v := make(map[string]string, len(all))
	for _, rec := range all {
		v[rec.pos.ID] = rec.version
	}
	return v, nil
}
