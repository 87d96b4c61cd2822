package tail

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/goose"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/hermes"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/opencode"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
)

// A database is not a file to tail: an agent that keeps its sessions in
// SQLite (OpenCode's opencode.db) updates rows in place. The tailer polls
// each database it finds under the watches (by its name, see
// opencode.IsDatabaseName; then its content must be OpenCode's), on a
// read-only connection that never locks the agent out (WAL: a reader
// neither waits for the writer nor holds it up), for the rows whose
// (time_updated, id) is past a checkpointed position, and publishes their
// entries as batch messages through the same publisher as the files'.
// The position moves only past rows whose every message was acknowledged,
// and is saved atomically beside the files' checkpoints
// (databaseCheckpointFile), so a restart or a kill neither loses nor
// doubles: what was published and not yet checkpointed is sent again, with
// the same entry keys and usage keys, and counted once by the consumers.
//
// A row written in another transaction than the one that took its
// time_updated may commit after a later row was read: each poll reads
// again the rows of the last databaseOverlap before the position, leaving
// out the versions it already published.
//
// A table of one row per session whose rows change without any column
// telling when (Hermes's sessions: a background writer adds to the token
// counters and stamps no time) is read whole at each change instead
// (wholeTable): a row is published when its version (a hash of its
// columns) differs from the one acknowledged, and the versions
// acknowledged are checkpointed with the position (DatabaseState.Versions),
// so a restart publishes exactly the rows that changed meanwhile.

// DefaultDatabasePoll is how often a database is asked for new rows (one
// PRAGMA data_version when nothing changed).
const DefaultDatabasePoll = time.Second

// databaseOverlap is how far before the position a poll reads again (ms).
const databaseOverlap = 2000

// databaseCheckpointFile holds the databases' positions, in the state
// directory.
const databaseCheckpointFile = "databases.json"

// DatabaseState is the checkpoint of one database.
type DatabaseState struct {
	Path string `json:"path"`
	Dev  uint64 `json:"dev"`
	Ino  uint64 `json:"ino"`
	// Position is the last row whose entries were acknowledged, in
	// (time_updated, id) order.
	Position opencode.Position `json:"position"`
	// Versions holds, for a table read whole (Hermes's sessions, whose
	// rows change without their position moving), the version of each
	// row acknowledged, by id.
	Versions map[string]string `json:"versions,omitempty"`
}

type databaseDoc struct {
	Version   int             `json:"version"`
	Databases []DatabaseState `json:"databases"`
}

// database is one database followed.
type database struct {
	path     string
	id       fileID
	db       dbReader
	pos      opencode.Position // acknowledged
	saved    bool              // pos is in the checkpoint file
	known    bool              // a checkpoint was found, or the start decided
	notOurs  bool              // not an OpenCode database (checked at this size and mtime)
	size     int64
	mtime    int64
	retry    bool               // the last poll failed: read again though nothing changed
	sent     map[string]sentRow // id → the version of the rows published within the overlap
	caughtUp bool               // the last poll read everything there was
	// acked is, for a table read whole (wholeTable), the version of every
	// row acknowledged, by id; nil for the others.
	acked map[string]string
}

// sentRow is the version of a row published.
type sentRow struct {
	updated int64
	version string
}

// databases follows the databases found under the watches.
type databases struct {
	t     *Tailer
	mu    sync.Mutex
	byDB  map[string]*database
	saved map[string]DatabaseState // loaded checkpoints, by path
	found atomic.Int64             // databases known (found and not yet polled count as busy)
}

func newDatabases(t *Tailer) *databases {
	return &databases{t: t, byDB: make(map[string]*database)}
}

// add notes a database found under the watches (a rescan).
func (s *databases) add(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byDB[path]; !ok {
		s.byDB[path] = &database{path: path}
		s.found.Add(1)
	}
}

// idle reports whether every database found was read to its end at its
// last poll.
func (s *databases) idle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.byDB {
		if !d.caughtUp && !d.notOurs {
			return false
		}
	}
	return true
}

// load reads the checkpoint file.
func (s *databases) load() error {
	data, err := os.ReadFile(filepath.Join(s.t.cfg.StateDir, databaseCheckpointFile))
	if errors.Is(err, fs.ErrNotExist) {
		s.saved = map[string]DatabaseState{}
		return nil
	}
	if err != nil {
		return fmt.Errorf("read database checkpoints: %w", err)
	}
	var doc databaseDoc
	if err := json.Unmarshal(data, &doc); err != nil || doc.Version != 1 {
		if err == nil {
			err = fmt.Errorf("version %d, this build reads 1", doc.Version)
		}
		return &CheckpointError{Path: filepath.Join(s.t.cfg.StateDir, databaseCheckpointFile), Err: err}
	}
	s.saved = make(map[string]DatabaseState, len(doc.Databases))
	for _, st := range doc.Databases {
		s.saved[st.Path] = st
	}
	return nil
}

// save writes the positions of the databases whose position moved.
func (s *databases) save() error {
	s.mu.Lock()
	dirty := false
	for _, d := range s.byDB {
		if d.known && !d.saved && !d.notOurs {
			dirty = true
			s.saved[d.path] = DatabaseState{Path: d.path, Dev: d.id.Dev, Ino: d.id.Ino, Position: d.pos, Versions: maps.Clone(d.acked)}
		}
	}
	if !dirty {
		s.mu.Unlock()
		return nil
	}
	doc := databaseDoc{Version: 1}
	for _, st := range s.saved {
		doc.Databases = append(doc.Databases, st)
	}
	s.mu.Unlock()
	slices.SortFunc(doc.Databases, func(a, b DatabaseState) int {
		switch {
		case a.Path < b.Path:
			return -1
		case a.Path > b.Path:
			return 1
		}
		return 0
	})
	data, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encode database checkpoints: %w", err)
	}
	if err := writeAtomic(s.t.cfg.StateDir, databaseCheckpointFile, data); err != nil {
		return err
	}
	s.mu.Lock()
	for _, d := range s.byDB {
		if st, ok := s.saved[d.path]; ok && st.Position == d.pos {
			d.saved = true
		}
	}
	s.mu.Unlock()
	return nil
}

// run polls the databases until ctx ends, then closes them and saves the
// positions one last time.
func (s *databases) run(ctx context.Context) {
	tick := time.NewTicker(s.t.cfg.DatabasePoll)
	defer tick.Stop()
	defer func() {
		s.mu.Lock()
		for _, d := range s.byDB {
			if d.db != nil {
				d.db.Close()
				d.db = nil
			}
		}
		s.mu.Unlock()
		if err := s.save(); err != nil {
			s.t.log.Error("save database checkpoints", KeyError, err)
		}
	}()
	for {
		s.mu.Lock()
		list := make([]*database, 0, len(s.byDB))
		for _, d := range s.byDB {
			list = append(list, d)
		}
		s.mu.Unlock()
		for _, d := range list {
			if ctx.Err() != nil {
				return
			}
			if err := s.poll(ctx, d); err != nil && ctx.Err() == nil {
				s.t.m.readErrors.Add(1)
				s.t.log.Warn("poll database", KeyFile, d.path, KeyError, err)
				if d.db != nil {
					d.db.Close() // opened again at the next poll
					d.db = nil
				}
				d.retry = true
			}
		}
		if err := s.save(); err != nil {
			s.t.log.Error("save database checkpoints", KeyError, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// open opens d and decides where its reading starts.
func (s *databases) open(ctx context.Context, d *database) error {
	info, err := os.Stat(d.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			s.mu.Lock()
			delete(s.byDB, d.path) // found again by a rescan if it comes back
			s.mu.Unlock()
			return nil
		}
		return err
	}
	if d.notOurs && info.Size() == d.size && info.ModTime().UnixNano() == d.mtime {
		return nil
	}
	db, err := openDatabase(ctx, d.path, parse.Config{Host: s.t.cfg.Host, Text: s.t.cfg.Text, Raw: s.t.cfg.Raw})
	if errors.Is(err, errNotDatabase) {
		if !d.notOurs {
			s.t.m.skipped.Add(1)
			s.t.log.Info("not followed: not an agent's database", KeyFile, d.path, KeyError, err)
		}
		s.mu.Lock()
		d.notOurs, d.size, d.mtime = true, info.Size(), info.ModTime().UnixNano()
		s.mu.Unlock()
		return nil
	}
	if err != nil {
		return err
	}
	id, _ := idOf(info)
	s.mu.Lock()
	defer s.mu.Unlock()
	d.db, d.notOurs, d.sent = db, false, nil
	_, whole := db.(wholeTable)
	if d.known {
		if d.id != id {
			// Replaced by another database at the same path: from its
			// start.
			d.pos, d.saved, d.sent, d.acked = opencode.Position{}, false, nil, nil
		}
		if whole && d.acked == nil {
			d.acked = map[string]string{}
		}
		d.id = id
		return nil
	}
	d.id, d.known = id, true
	if st, ok := s.saved[d.path]; ok && st.Dev == id.Dev && st.Ino == id.Ino {
		d.pos, d.saved = st.Position, true
		if whole {
			d.acked = maps.Clone(st.Versions)
			if d.acked == nil {
				d.acked = map[string]string{}
			}
		}
		return nil
	}
	if whole {
		d.acked = map[string]string{}
	}
	if s.t.cfg.FromEnd {
		end, err := db.End(ctx)
		if err != nil {
			return err
		}
		d.pos = end
		if w, ok := db.(wholeTable); ok {
			// Every row as it is now is what is not new.
			if d.acked, err = w.Versions(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// poll publishes what is new in d.
func (s *databases) poll(ctx context.Context, d *database) error {
	if d.db == nil {
		if err := s.open(ctx, d); err != nil || d.db == nil {
			return err
		}
		d.retry = true
	}
	changed, err := d.db.Changed(ctx)
	if err != nil {
		return err
	}
	if !changed && !d.retry && d.caughtUp {
		return nil
	}
	d.retry = false
	from := opencode.Position{}
	var seen map[string]bool // a table read whole (every row; its version decides): the rows there are
	if d.acked != nil {
		seen = make(map[string]bool, len(d.acked))
	} else if d.pos.Updated > databaseOverlap {
		from.Updated = d.pos.Updated - databaseOverlap
	}
	for {
		rows, err := d.db.Records(ctx, from, opencode.ReadBatch, func(err error) { s.dead(ctx, err, d.path, 0) })
		if err != nil {
			return err
		}
		if err := s.publish(ctx, d, rows); err != nil {
			return err
		}
		if seen != nil {
			for i := range rows {
				seen[rows[i].pos.ID] = true
			}
		}
		if len(rows) < opencode.ReadBatch {
			s.mu.Lock()
			d.caughtUp = true
			for id := range d.acked {
				if !seen[id] {
					delete(d.acked, id) // deleted (Hermes's prune): forgotten
					d.saved = false
				}
			}
			s.mu.Unlock()
			return nil
		}
		from = rows[len(rows)-1].pos
	}
}

// publish publishes the entries of rows not yet published, waits for
// their acknowledgements and moves d's position past them.
func (s *databases) publish(ctx context.Context, d *database, rows []dbRecord) error {
	var (
		jsonl []byte
		count int
		msgs  []*nats.Msg
		first = -1
	)
	var news []int
	flush := func(upto int) error {
		if count == 0 {
			return nil
		}
		span := bus.BatchSpan{Host: s.t.cfg.Host, Format: string(rows[first].entry.Format), File: fileToken(d.id),
			Offset: rows[first].pos.Updated, End: rows[upto].pos.Updated, Line: 1, Lines: int64(count)}
		m, err := bus.BatchMsg(s.t.cfg.Prefix, span, jsonl, count)
		if err != nil {
			return err
		}
		if len(m.Data)+bus.HeaderSize(m.Header)+len(m.Subject) > s.t.payloadLimit() {
			// Too large for a batch: every entry in its own message.
			for i := first; i <= upto; i++ {
				if e := rows[i].entry; e.Format != "" {
					msgs = append(msgs, s.t.entryMsg(&e, s.t.payloadLimit()))
				}
			}
		} else {
			msgs = append(msgs, m)
			s.t.m.batches.Add(1)
		}
		s.t.m.entries.Add(int64(count))
		jsonl, count, first = jsonl[:0], 0, -1
		return nil
	}
	fresh := d.sent == nil
	if fresh {
		d.sent = make(map[string]sentRow)
	}
	for i := range rows {
		r := &rows[i]
		if d.acked != nil {
			if v, ok := d.acked[r.pos.ID]; ok && v == r.version {
				continue // published already
			}
		} else if !d.pos.Before(r.pos) {
			if fresh {
				// The first read since the database was opened: what the
				// checkpoint covers was acknowledged.
				d.sent[r.pos.ID] = sentRow{r.pos.Updated, r.version}
				continue
			}
			if v, ok := d.sent[r.pos.ID]; ok && v.version == r.version {
				continue // published already
			}
			// Committed after a later row was read, or updated again
			// within the same time: published now.
		}
		news = append(news, i)
		if r.err != nil {
			s.dead(ctx, r.err, d.path, r.pos.Updated)
		}
		e := r.entry
		if e.Format == "" {
			continue
		}
		if first < 0 {
			first = i
		}
		jsonl = s.t.appendEntry(jsonl, &e)
		count++
		if count >= publishBatch || len(jsonl) >= publishBatchBytes/2 {
			if err := flush(i); err != nil {
				return err
			}
		}
	}
	if err := flush(len(rows) - 1); err != nil {
		return err
	}
	if len(news) == 0 {
		return nil
	}
	if err := s.send(msgs); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, i := range news {
		r := &rows[i]
		d.sent[r.pos.ID] = sentRow{r.pos.Updated, r.version}
		if d.acked != nil {
			d.acked[r.pos.ID], d.saved = r.version, false
		}
		if d.pos.Before(r.pos) {
			d.pos, d.saved = r.pos, false
		}
	}
	for id, v := range d.sent {
		if v.updated < d.pos.Updated-databaseOverlap {
			delete(d.sent, id) // not read again
		}
	}
	return nil
}

// send publishes msgs and waits for every acknowledgement; the first
// error is returned (the rows are read again at the next poll).
func (s *databases) send(msgs []*nats.Msg) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for _, m := range msgs {
		wg.Add(1)
		s.t.m.sent.Add(1)
		n := entriesOf(m)
		err := s.t.cfg.Publisher.Publish(s.t.pubCtx, m, func(err error) {
			defer wg.Done()
			if err != nil {
				s.t.m.publishErrors.Add(1)
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
				return
			}
			s.t.m.acked.Add(1)
			s.t.m.ackedEntries.Add(n)
		})
		if err != nil {
			wg.Done()
			wg.Wait()
			return err
		}
	}
	wg.Wait()
	return first
}

// entriesOf returns the entry count of a message (Sessionpipe-Entries of
// a batch, 1 otherwise).
func entriesOf(m *nats.Msg) int64 {
	if n, err := strconv.ParseInt(m.Header.Get(bus.HeaderEntries), 10, 64); err == nil {
		return n
	}
	return 1
}

// dead publishes the dead letter of a bad row (not waited for: a row's
// error never holds its database up).
func (s *databases) dead(ctx context.Context, err error, path string, updated int64) {
	s.t.m.badLines.Add(1)
	id := ""
	var re *opencode.RowError
	var ge *goose.RowError
	var he *hermes.RowError
	switch {
	case errors.As(err, &re):
		id = re.ID
	case errors.As(err, &ge):
		id = ge.ID
	case errors.As(err, &he):
		id = he.ID
	}
	d := &bus.DeadLetter{Host: s.t.cfg.Host, Path: path + "#" + id, Line: updated, Error: err.Error()}
	if perr := s.t.cfg.Publisher.Publish(s.t.pubCtx, bus.DeadMsg(s.t.cfg.Prefix, d), nil); perr != nil && ctx.Err() == nil {
		s.t.log.Warn("dead letter lost", KeyFile, path, KeyError, perr)
	}
}
