package tail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// file is the state of one followed file, keyed by its identity.
//
// Fields under "tailer.mu" are guarded by the Tailer's mutex; fields under
// "mu" by the file's own, which the publisher's callbacks take; the rest
// belong to the worker holding the file (busy).
type file struct {
	id fileID

	// tailer.mu
	path     string
	busy     bool // a worker holds it
	queued   bool // waiting for a worker
	again    bool // changed while busy
	gone     bool // its path no longer leads to it
	seen     bool // found by the current rescan
	handle   *os.File
	lastUse  time.Time
	size     int64     // size at the last read
	mtime    time.Time // modification time at the last read
	meta     bool      // a sessions.json store, re-read whole on change
	doc      bool      // a whole-file document candidate (a .json name), read whole on change
	firstHit time.Time
	waiting  bool   // its first lines do not tell its format yet
	watch    int    // index of the watch its path matched
	seenAt   bool   // found at its path by the current rescan
	alias    string // another path it was found at by the current rescan
	// aliasWatch is the watch alias matched; aliasLogged: an alias was
	// logged for its path.
	aliasWatch  int
	aliasLogged bool
	// lruPrev and lruNext link the files with an open handle, in the
	// order of their last use (Tailer.handles).
	lruPrev, lruNext *file

	// worker; the worker writes the first four under mu too, as
	// checkpoints read them
	fpSum    uint64
	fpLen    int
	format   schema.Format
	skipped  bool
	dec      *formats.Decoder // nil until the file is read (again) from its start
	static   bool             // present at the first scan of a one-shot run: will not grow
	readPos  int64            // start of the next line to read
	lines    int64            // lines before readPos
	resumeAt int64            // lines ending at or before it were acknowledged before: not published again
	metaSum  uint64
	end      mark // of the last line read, before readPos
	recheck  bool // the file changed while read: check end at the next read
	huge     bool // its decoder parsed a line over hugeLine
	// loaded: the checkpoint's mark (acked) is not checked against the
	// file yet; the first read does.
	loaded bool
	// A document's: the XXH3 of the content last read, whether one was,
	// and the digests of the entries handed to the publisher (see
	// DocState).
	docSum  uint64
	docRead bool
	docs    map[string]DocEntry

	// mu
	mu       sync.Mutex
	inflight int  // published, not completed
	readEnd  mark // end of the last line handed to the publisher
	acked    mark // every line ending here or before is acknowledged
	stuck    bool // a message failed: acked is frozen until restart
	// epoch counts the resets: a message published before the file was
	// rewritten covers offsets of its old content, so its completion
	// must not move acked.
	epoch uint64
	// A document's digests handed to the publisher (docPending) and
	// those acknowledged (docAcked, the checkpoint's): docPending becomes
	// docAcked once nothing is in flight.
	docPending, docAcked *DocState
}

// state returns the checkpoint of f, and false when nothing was learned
// of it yet; tailer.mu must be held.
func (f *file) state() (FileState, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.format == "" && !f.skipped && !f.meta && f.fpLen == 0 {
		return FileState{}, false
	}
	s := FileState{
		Dev: f.id.Dev, Ino: f.id.Ino,
		Fingerprint: f.fpSum, FingerprintLen: f.fpLen,
		Path: f.path, Offset: f.acked.at, CheckLen: int(f.acked.n), CheckSum: f.acked.sum,
		LineAt: f.acked.hAt, LineCheckLen: int(f.acked.hn), LineCheckSum: f.acked.hsum,
		Format: f.format, Skipped: f.skipped, Size: f.size,
	}
	if !f.mtime.IsZero() {
		s.MTime = f.mtime.UnixNano()
	}
	s.Doc = f.docAcked
	return s, true
}

// reset forgets what was read of f: its content was replaced.
func (f *file) reset() {
	f.dec = nil
	f.readPos, f.lines, f.resumeAt = 0, 0, 0
	f.end = mark{}
	f.mu.Lock()
	f.format, f.skipped = "", false
	f.fpSum, f.fpLen = 0, 0
	f.readEnd, f.acked = mark{}, mark{}
	f.epoch++
	f.loaded = false
	f.mu.Unlock()
}

// worker holds what one reading goroutine reuses from file to file.
type worker struct {
	rd    *jsonl.Reader
	src   checkedReader
	win   window           // the bytes before the line end being marked
	check [checkBytes]byte // a mark's bytes, read back to check it

	// The marks of the lines read and not yet handed out (the decoder
	// holds lines while the format is undecided), from marks[mi], and
	// the mark of the last line handed out.
	marks []mark
	mi    int
	last  mark

	// The lines read but not yet handed to the publisher: their
	// entries' JSON lines in jsonl (one batch message carries them all,
	// see sendBatch), their entry count, and their bytes (entries and
	// original lines). Publishing a run of lines as one message lets
	// the server store, and each consumer take, many entries per message,
	// per acknowledgement and per system call.
	pending  []pendingLine
	read     time.Time // when pending's first line was read
	jsonl    []byte
	npending int // entries in pending
	bpending int // their bytes

	// The file being read, and what the raw chunk of the batch gathers
	// (Config.Archive): see rawChunk.
	h           *os.File
	raw, rawOut []byte
	rawSessions []string
	rawTS       time.Time
}

// pendingLine is a line whose entries wait in a worker's batch, with
// the marks of the line end before it and of its own end.
type pendingLine struct {
	from, to      int         // its entries' JSON lines: jsonl[from:to]
	entries       int         // how many
	msgs          []*nats.Msg // messages of its own: a dead letter
	before, after mark
	line, offset  int64     // where the line is, for the dead letter of a message the server refuses
	tooLong       bool      // its bytes were not kept: no raw copy either
	read          time.Time // when it was read (a batch's lines: its first line's); zero: not measured
}

// A worker hands its batch to the publisher once it holds publishBatch
// entries or lines, or publishBatchBytes bytes of entries and original
// lines (a message of about a quarter of that once compressed, well
// within a server's default 1 MiB max_payload). A file read to its end is
// flushed whatever the batch holds, so batching adds no latency to live
// appends.
const (
	publishBatch      = 1024
	publishBatchBytes = 1 << 20
)

// queue adds one line to w's batch, and hands the batch to the publisher
// once it is full.
func (t *Tailer) queue(ctx context.Context, w *worker, f *file, p pendingLine) error {
	if len(w.pending) == 0 {
		w.read = time.Now() // one clock read per batch, not per line
	}
	p.read = w.read
	w.pending = append(w.pending, p)
	w.npending += p.entries
	w.bpending += p.to - p.from
	if t.archiving() && !p.tooLong {
		w.bpending += int(p.after.at - p.before.at) // its raw copy
	}
	// Lines that make no entry (bookkeeping lines, lines only queued to
	// move the checkpoint) count too, so that the batch stays bounded.
	if w.npending >= publishBatch || w.bpending >= publishBatchBytes || len(w.pending) >= publishBatch {
		return t.flush(ctx, w, f)
	}
	return nil
}

// flush hands w's batch to the publisher.
func (t *Tailer) flush(ctx context.Context, w *worker, f *file) error {
	defer func() {
		clear(w.pending)
		w.pending, w.npending, w.bpending = w.pending[:0], 0, 0
		w.jsonl = w.jsonl[:0]
		if cap(w.jsonl) > 4*publishBatchBytes {
			w.jsonl = nil // a huge line's entries: do not keep the buffer
		}
		w.rawSessions, w.rawTS = w.rawSessions[:0], time.Time{}
	}()
	if len(w.pending) == 0 {
		return nil
	}
	return t.sendBatch(ctx, w, f, w.pending)
}

// sendBatch publishes the lines of one batch: the dead letters of its
// bad lines, one batch message with its entries (bus.BatchMsg), then,
// when archiving, the original bytes of the lines as a raw chunk on the
// raw subject (bus.RawMsgs), after the batch message so that a raw
// message never heads what this tailer stored: the exporter purges the
// raw subject once archived (export.ExporterConfig.PurgeArchived), and
// a stream's first message must not go with it, or a consumer that has
// not read it yet would see a gap. A batch of lines with no entry is
// still a batch message, of none. The lines count as sent in the
// checkpoint once every message is acknowledged. A batch message larger
// than the server takes is split in two, down to one line; a single line
// too large for a message travels as its own messages (sendLine).
func (t *Tailer) sendBatch(ctx context.Context, w *worker, f *file, lines []pendingLine) error {
	first, last := &lines[0], &lines[len(lines)-1]
	var raw *bus.RawChunk
	if t.archiving() {
		var ok bool
		if raw, ok = t.rawChunk(w, f, lines); !ok {
			return errRawChanged
		}
	}
	count := 0
	var dead []*nats.Msg
	for i := range lines {
		count += lines[i].entries
		dead = append(dead, lines[i].msgs...)
	}
	batch := pendingLine{msgs: dead, before: first.before, after: last.after, line: first.line, offset: first.offset, read: first.read}
	if count == 0 && raw == nil {
		// Only bookkeeping lines and bad ones: nothing for a batch
		// message, but the checkpoint moves past them.
		return t.send(ctx, f, batch)
	}
	limit := t.payloadLimit()
	t.mu.Lock()
	path := f.path
	t.mu.Unlock()
	span := t.batchSpan(f, first.before.at, last.after.at, first.line, last.line-first.line+1)
	if raw != nil {
		span.Line, span.Lines = raw.Line, raw.Lines
	}
	m, err := bus.BatchMsg(t.cfg.Prefix, span, w.jsonl[first.from:last.to], count)
	if err == nil && len(m.Data)+bus.HeaderSize(m.Header)+len(m.Subject) > limit {
		bus.ReleaseBatchMsg(m) // never published
		if len(lines) > 1 {
			half := len(lines) / 2
			if err := t.sendBatch(ctx, w, f, lines[:half]); err != nil {
				return err
			}
			return t.sendBatch(ctx, w, f, lines[half:])
		}
		return t.sendLine(ctx, w, f, path, limit, first, raw)
	}
	if err != nil {
		return err
	}
	t.m.batches.Add(1)
	t.m.entries.Add(int64(count))
	batch.msgs = append(batch.msgs, m)
	batch.msgs = t.appendRaw(batch.msgs, path, raw, limit)
	return t.send(ctx, f, batch)
}

// batchSpan locates lines of f (bytes [offset, end), lines line to
// line+lines-1) for a batch message.
func (t *Tailer) batchSpan(f *file, offset, end, line, lines int64) bus.BatchSpan {
	return bus.BatchSpan{Host: t.cfg.Host, Format: string(f.format), File: fileToken(f.id), Offset: offset, End: end, Line: line, Lines: lines}
}

// appendRaw appends to msgs the messages of raw chunk raw (none when
// nil), or, when it cannot be sent, logs and counts that it is not
// archived.
func (t *Tailer) appendRaw(msgs []*nats.Msg, path string, raw *bus.RawChunk, limit int) []*nats.Msg {
	if raw == nil {
		return msgs
	}
	rm, err := bus.RawMsgs(t.cfg.Prefix, raw, limit)
	if err != nil {
		t.log.Warn("original lines not archived", KeyFile, path, "offset", raw.Offset, KeyError, err)
		t.m.rawSkipped.Add(1)
		return msgs
	}
	t.m.rawChunks.Add(int64(len(rm)))
	t.m.rawBytes.Add(raw.End - raw.Offset)
	t.m.rawHoles.Add(int64(len(raw.Holes)))
	return append(msgs, rm...)
}

// sendLine publishes one line too large for a batch message as
// messages of its own, as sessionpipe did before batches: each entry as
// one message shortened to fit (bus.FitEntryMsg), its dead letter, then
// its original bytes as raw chunk parts (bus.RawMsgs), after the others
// as in sendBatch.
func (t *Tailer) sendLine(ctx context.Context, w *worker, f *file, path string, limit int, p *pendingLine, raw *bus.RawChunk) error {
	var msgs []*nats.Msg
	for b := w.jsonl[p.from:p.to]; len(b) > 0; {
		nl := bytes.IndexByte(b, '\n')
		var e schema.Entry
		if err := schema.UnmarshalEntry(b[:nl], &e); err != nil {
			// It was encoded by AppendJSON a moment ago.
			return fmt.Errorf("entry of %s line %d: %w", path, p.line, err)
		}
		b = b[nl+1:]
		msgs = append(msgs, t.fitEntryMsg(&e, limit))
		t.m.entries.Add(1)
	}
	line := *p
	line.msgs = append(msgs, p.msgs...)
	if raw != nil && len(line.msgs) == 0 {
		// A line of no entry: a batch message of none goes first.
		m, err := bus.BatchMsg(t.cfg.Prefix, t.batchSpan(f, raw.Offset, raw.End, raw.Line, raw.Lines), nil, 0)
		if err != nil {
			return err
		}
		line.msgs = append(line.msgs, m)
	}
	line.msgs = t.appendRaw(line.msgs, path, raw, limit)
	return t.send(ctx, f, line)
}

// fileToken is a file's identity on its host as messages name it:
// "<dev>:<ino>".
func fileToken(id fileID) string {
	return strconv.FormatUint(id.Dev, 10) + ":" + strconv.FormatUint(id.Ino, 10)
}

// readFile reads what is new in f and publishes it. It returns the
// context's error if ctx ended, and other errors for the file (logged by
// the caller, the file is retried at the next change or rescan).
func (t *Tailer) readFile(ctx context.Context, w *worker, f *file, h *os.File, path string) (err error) {
	defer t.changes.Add(1) // offsets, sizes, fingerprints, formats
	info, err := h.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	size := info.Size()
	w.h = h
	defer func() { w.h = nil }()
	if f.meta {
		return t.readMeta(ctx, f, h, path, size, info.ModTime())
	}
	if f.doc {
		return t.readDoc(ctx, w, f, h, path, size, info.ModTime())
	}

	// A file that shrank, or whose first bytes changed, was replaced in
	// place: read it again from the start. Entries already published
	// keep their keys and are dropped as duplicates by the stream. One
	// read of the first bytes both checks the fingerprint and extends
	// it, so that a rewrite in between cannot pass for the old content.
	var head [fingerprintBytes]byte
	n, err := readHead(h, size, head[:])
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	replaced := size < f.readPos || f.fpLen > 0 && (n < f.fpLen || fnv64a(head[:f.fpLen]) != f.fpSum)
	// The content before the offset must still be the one read: the
	// checkpoint's mark at the first read after a start, the last line
	// handed out whenever the size or modification time moved since.
	var before []byte
	if !replaced {
		t.mu.Lock()
		moved := size != f.size || !info.ModTime().Equal(f.mtime)
		t.mu.Unlock()
		m := f.end
		if f.loaded {
			f.mu.Lock()
			m = f.acked
			f.mu.Unlock()
		}
		if f.loaded || (moved || f.recheck) && m.at > 0 {
			ok, b, err := checkMark(h, size, m, &w.check)
			if err != nil {
				return fmt.Errorf("read %s: %w", path, err)
			}
			replaced = !ok
			if ok && !f.loaded && m.at == f.readPos {
				before = b
			}
		}
	}
	if replaced {
		t.log.Info("file rewritten, reading it again", KeyFile, path, "size", size, "was", max(f.readPos, f.resumeAt))
		t.m.rewrites.Add(1)
		f.reset()
		before = nil
	}
	f.loaded, f.recheck = false, false
	if f.fpLen < n {
		f.mu.Lock()
		f.fpSum, f.fpLen = fnv64a(head[:n]), n
		f.mu.Unlock()
	}
	t.setStat(f, size, info.ModTime())
	if f.skipped || size == f.readPos {
		return nil
	}

	if f.dec == nil {
		dec, err := formats.NewDecoder(formats.DecoderConfig{
			Config: t.parseConfig(path), Format: f.format, MaxLineBytes: t.cfg.MaxLineBytes,
			OnFileError: func(err error) { t.log.Warn("reading file sidecar", KeyFile, path, KeyError, err) },
		})
		if err != nil {
			return err
		}
		f.dec = dec
		// Replay the file from its start to rebuild the parser's state;
		// what was published before (acknowledged before a restart, or
		// handed to the publisher before an idle decoder was let go) is
		// not published again.
		f.mu.Lock()
		f.resumeAt = max(f.resumeAt, f.acked.at, f.readEnd.at)
		f.mu.Unlock()
		f.readPos, f.lines, f.end = 0, 0, mark{}
		before = nil
	}

	w.src = newCheckedReader(h, f.readPos, size, f.fpLen, f.fpSum, before)
	w.rd.Reset(&w.src, f.readPos, f.lines)
	w.win.seed(f.readPos, before)
	w.last = w.win.mark()
	w.marks, w.mi = w.marks[:0], 0
	deliver := func(res *formats.Result) error { return t.deliver(ctx, w, f, path, res) }
	mtime := info.ModTime()
	rewind := false // undecided: read the first lines again next time
	defer func() {
		// Every line handed out is handed to the publisher, whatever
		// ends the loop.
		if ferr := t.flush(ctx, w, f); ferr != nil && err == nil {
			err = ferr
		}
		f.readPos, f.lines, f.end = w.rd.Offset(), w.rd.Lines(), w.last
		w.rd.Reset(nil, 0, 0) // an idle worker keeps no buffer grown by a long line
		switch {
		case rewind && f.dec != nil:
			f.dec.Reset()
			f.readPos, f.lines, f.end = 0, 0, mark{}
		case err == nil && f.dec != nil && f.dec.Format() != "" && time.Since(mtime) >= t.cfg.IdleTimeout:
			// Not written to for a while (an archive, a finished
			// session): keep no parser state for it, as for files that
			// became idle.
			t.dropDecoder(f)
		}
	}()
	for n := 0; ; n++ {
		if n&255 == 0 && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		line, err := w.rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var tooLong *jsonl.LineTooLongError
		switch {
		case err == nil:
			t.m.lines.Add(1)
			t.m.bytes.Add(line.End - line.Offset)
			w.win.add(line)
			w.marks = append(w.marks, w.win.mark())
			err = f.dec.Decode(line, deliver)
		case errors.As(err, &tooLong):
			w.win.reset(w.rd.Offset()) // its bytes are not kept: its end is marked without a checksum
			w.marks = append(w.marks, w.win.mark())
			err = f.dec.TooLong(tooLong, w.rd.Offset(), deliver)
		case errors.Is(err, errRewritten):
			// Read it again at once: the next read sees the new
			// fingerprint, or checks the last line read, and starts
			// over if it changed.
			f.recheck = true
			t.mu.Lock()
			f.again = true
			t.mu.Unlock()
			rewind = f.dec.Format() == ""
			return nil
		default:
			return fmt.Errorf("read %s: %w", path, err)
		}
		if errors.Is(err, formats.ErrUnknownFormat) {
			t.skip(f, path)
			return nil
		}
		if err != nil {
			return err
		}
	}
	if f.dec.Format() != "" {
		return nil
	}

	// No line told the format yet. A growing file is waited for, up to
	// DetectWait; a static one, or one waited for long enough, is
	// decided from what it holds.
	t.mu.Lock()
	if f.firstHit.IsZero() {
		f.firstHit = time.Now()
	}
	final := f.static || time.Since(f.firstHit) >= t.cfg.DetectWait
	t.mu.Unlock()
	err = f.dec.End(final, deliver)
	if errors.Is(err, formats.ErrUnknownFormat) {
		t.skip(f, path)
		return nil
	}
	if err != nil {
		return err
	}
	waiting := f.dec.Format() == ""
	t.mu.Lock()
	f.waiting = waiting
	t.mu.Unlock()
	rewind = waiting
	return nil
}

// deliver publishes what one line of f gave: its entries, and a dead
// letter if something in it was wrong. Lines acknowledged before a
// restart only rebuilt the parser's state.
func (t *Tailer) deliver(ctx context.Context, w *worker, f *file, path string, res *formats.Result) error {
	after := mark{at: res.Line.End}
	for w.mi < len(w.marks) {
		m := w.marks[w.mi]
		w.mi++
		if m.at == res.Line.End {
			after = m
			break
		}
	}
	if w.mi == len(w.marks) {
		w.marks, w.mi = w.marks[:0], 0
	}
	before := w.last
	w.last = after
	if res.Line.End-res.Line.Offset > hugeLine {
		f.huge = true
	}
	if f.format == "" {
		f.mu.Lock()
		f.format = f.dec.Format()
		f.mu.Unlock()
		t.mu.Lock()
		f.waiting = false
		t.mu.Unlock()
		t.log.Debug("following file", KeyFile, path, "format", f.format)
	}
	if res.Line.End <= f.resumeAt {
		clear(res.Entries) // published before: let go of their text at once
		return nil
	}
	var tooLong *jsonl.LineTooLongError
	long := errors.As(res.Err, &tooLong)
	if t.archiving() {
		w.noteRaw(res.Entries)
	}
	from := len(w.jsonl)
	for i := range res.Entries {
		e := &res.Entries[i]
		e.Path = path
		w.jsonl = t.appendEntry(w.jsonl, e)
	}
	n := len(res.Entries)
	// The decoder keeps its entries for the next line: let go of their
	// strings (a huge message's text) now that they are encoded.
	clear(res.Entries)
	var msgs []*nats.Msg
	if res.Err != nil {
		t.m.badLines.Add(1)
		t.log.Debug("bad line", KeyFile, path, "line", res.Line.Number, "err", res.Err)
		head := res.Line.Bytes
		if long {
			head = tooLong.Head
		}
		msgs = append(msgs, bus.DeadMsg(t.cfg.Prefix, &bus.DeadLetter{
			Host: t.cfg.Host, Path: path, Line: res.Line.Number, Offset: res.Line.Offset,
			Format: string(f.format), Error: res.Err.Error(), Head: bytes.Clone(head[:min(len(head), bus.MaxDeadHead)]),
		}))
	}
	return t.queue(ctx, w, f, pendingLine{
		from: from, to: len(w.jsonl), entries: n, msgs: msgs,
		before: before, after: after, line: res.Line.Number, offset: res.Line.Offset, tooLong: long,
	})
}

// skip marks f as not a transcript.
func (t *Tailer) skip(f *file, path string) {
	f.mu.Lock()
	f.skipped = true
	f.mu.Unlock()
	t.mu.Lock()
	f.waiting = false
	t.mu.Unlock()
	f.dec = nil
	t.m.skipped.Add(1)
	t.log.Info("not a transcript, skipping", KeyFile, path)
}

// send publishes the messages of one line, in order. The line's end is
// acknowledged once its last message is (and every earlier one); a
// message before the last covers the lines before it.
func (t *Tailer) send(ctx context.Context, f *file, p pendingLine) error {
	msgs, before, after := p.msgs, p.before, p.after
	f.mu.Lock()
	f.inflight += len(msgs)
	t.inflight.Add(int64(len(msgs)))
	f.readEnd = after
	if f.inflight == 0 && !f.stuck {
		f.acked = later(f.acked, after)
		f.docAckedLocked()
		t.changes.Add(1)
	}
	epoch := f.epoch
	f.mu.Unlock()
	for i, m := range msgs {
		at := before
		if i == len(msgs)-1 {
			at = after
		}
		if err := t.cfg.Publisher.Publish(t.pubCtx, m, func(err error) {
			t.completed(f, m, p, at, epoch, err)
			if err == nil {
				// Stored: nothing reads its body any more (a refused
				// one's dead letter keeps a piece of it).
				bus.ReleaseBatchMsg(m)
			}
		}); err != nil {
			f.mu.Lock()
			f.inflight -= len(msgs) - i
			t.inflight.Add(-int64(len(msgs) - i))
			f.stuck = true
			f.mu.Unlock()
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			return fmt.Errorf("publish: %w", err)
		}
		t.m.sent.Add(1)
	}
	return nil
}

// completed is the publisher's callback for message m of f, made of the
// line p (at its line number and offset, read at p.read), which covers
// the file up to at in the file's content of the given epoch.
func (t *Tailer) completed(f *file, m *nats.Msg, p pendingLine, at mark, epoch uint64, err error) {
	if errors.Is(err, bus.ErrRejected) && t.reject(f, m, p.line, p.offset, err) {
		err = nil // refused for good: its dead letter stands for it
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inflight--
	t.inflight.Add(-1)
	if err != nil {
		// Not stored (the context ended): keep the checkpoint before
		// it, so that a restart sends it again.
		f.stuck = true
		t.m.publishErrors.Add(1)
		return
	}
	t.m.acked.Add(1)
	t.m.ackedEntries.Add(int64(entriesIn(m)))
	if !p.read.IsZero() {
		t.m.publishLatency.Observe(time.Since(p.read).Seconds())
	}
	t.changes.Add(1)
	if f.stuck || epoch != f.epoch {
		// Frozen, or published from content the file no longer has (it
		// was rewritten since): at is no offset of the file as it is.
		return
	}
	if f.inflight == 0 {
		at = later(at, f.readEnd)
		f.docAckedLocked()
	}
	f.acked = later(f.acked, at)
}

// entriesIn returns how many entries message m carries.
func entriesIn(m *nats.Msg) int {
	if bus.IsBatch(m.Header) {
		n, _ := strconv.Atoi(m.Header.Get(bus.HeaderEntries))
		return n
	}
	if strings.Contains(m.Subject, ".entries.") {
		return 1
	}
	return 0
}

// reject queues a dead letter for a message the server refused for good
// (too large for it, or a subject outside the stream). It reports false
// when the queue is full: the file's checkpoint then stays before it.
func (t *Tailer) reject(f *file, m *nats.Msg, line, offset int64, err error) bool {
	t.mu.Lock()
	path := f.path
	t.mu.Unlock()
	f.mu.Lock()
	format := f.format
	f.mu.Unlock()
	t.m.publishErrors.Add(1)
	what := ""
	if bus.IsBatch(m.Header) {
		// The batch's entries are lost with it: say which lines held them
		// (the span: file identity, bytes, first line + count).
		span := strings.Fields(m.Header.Get(bus.HeaderSpan))
		lines := ""
		if len(span) == 3 {
			lines = " of lines " + span[2] + " (bytes " + span[1] + ")"
		}
		what = fmt.Sprintf("batch message of %s entries%s, ", m.Header.Get(bus.HeaderEntries), lines)
	}
	d := &bus.DeadLetter{
		Host: t.cfg.Host, Path: path, Line: line, Offset: offset, Format: string(format),
		Error: fmt.Sprintf("%v (%ssubject %s, id %s, %d bytes)", err, what, m.Subject, m.Header.Get(nats.MsgIdHdr), len(m.Data)),
		Head:  m.Data[:min(len(m.Data), bus.MaxDeadHead)],
	}
	select {
	case t.rejects <- d:
		return true
	default:
		return false
	}
}

// publishRejects sends the dead letters of refused messages until ctx
// ends.
func (t *Tailer) publishRejects(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case d := <-t.rejects:
			if err := t.cfg.Publisher.Publish(t.pubCtx, bus.DeadMsg(t.cfg.Prefix, d), nil); err != nil {
				t.log.Error("dead letter for a refused message lost", KeyFile, d.Path, KeyError, err)
			}
		}
	}
}

// appendEntry labels e with the configured labels, redacts it, and
// appends its JSON line to b.
func (t *Tailer) appendEntry(b []byte, e *schema.Entry) []byte {
	e.Labels = t.cfg.Labels
	if r := t.cfg.Redactor; r != nil {
		t.m.redacted(r.Entry(e))
	}
	return append(e.AppendJSON(b), '\n')
}

// entryMsg labels e and returns its own message, shortened to fit limit
// bytes if needed (see fitEntryMsg): for entries that do not travel in a
// batch (a session store's).
func (t *Tailer) entryMsg(e *schema.Entry, limit int) *nats.Msg {
	e.Labels = t.cfg.Labels
	if r := t.cfg.Redactor; r != nil {
		t.m.redacted(r.Entry(e))
	}
	return t.fitEntryMsg(e, limit)
}

// fitEntryMsg returns e's own message, shortened to fit limit bytes if
// needed (see bus.FitEntryMsg), or a dead letter for e's line if even
// that cannot fit.
func (t *Tailer) fitEntryMsg(e *schema.Entry, limit int) *nats.Msg {
	// Size the body from the text it holds: no growing while encoding.
	size := 512 + len(e.Text) + len(e.Raw)
	for i := range e.ToolResults {
		size += len(e.ToolResults[i].Content) + 64
	}
	for i := range e.ToolCalls {
		size += len(e.ToolCalls[i].Input) + 64
	}
	m, shortened, err := bus.FitEntryMsg(t.cfg.Prefix, e, limit, make([]byte, 0, min(size+size/8, limit+limit/8)))
	if shortened {
		t.m.truncated.Add(1)
	}
	if err != nil {
		t.m.badLines.Add(1)
		return bus.DeadMsg(t.cfg.Prefix, &bus.DeadLetter{
			Host: t.cfg.Host, Path: e.Path, Line: e.Line, Offset: e.Offset, Format: string(e.Format),
			Error: fmt.Sprintf("entry %s: %v (limit %d bytes)", e.EntryID, err, limit),
		})
	}
	return m
}

// payloadLimit is the largest message published: the configured one, or
// the connected server's max_payload if smaller.
func (t *Tailer) payloadLimit() int {
	limit := t.cfg.MaxPayload
	if n := t.cfg.Publisher.MaxPayload(); n > 0 && n < limit {
		limit = n
	}
	return limit
}

// readMeta publishes the session entries of an OpenClaw sessions.json
// store when its content changed.
func (t *Tailer) readMeta(ctx context.Context, f *file, h *os.File, path string, size int64, mtime time.Time) error {
	if size > formats.MaxSessionStoreBytes {
		return fmt.Errorf("%s: session store of %d bytes is too large", path, size)
	}
	t.setStat(f, size, mtime)
	data := make([]byte, size)
	read := time.Now()
	if _, err := h.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	sum, _, _ := fingerprint(bytes.NewReader(data), size)
	if sum == f.metaSum && f.readPos == size {
		return nil
	}
	entries, err := formats.ReadSessionStore(bytes.NewReader(data), t.parseConfig(path))
	if err != nil && len(entries) == 0 {
		return err
	}
	msgs := make([]*nats.Msg, 0, len(entries))
	limit := t.payloadLimit()
	for i := range entries {
		msgs = append(msgs, t.entryMsg(&entries[i], limit))
	}
	if err := t.send(ctx, f, pendingLine{msgs: msgs, after: mark{at: size}, line: 1, read: read}); err != nil {
		return err
	}
	f.metaSum, f.readPos = sum, size
	return nil
}

func (t *Tailer) parseConfig(path string) parse.Config {
	return parse.Config{Path: path, Host: t.cfg.Host, Text: t.cfg.Text, Raw: t.cfg.Raw, Logger: t.log}
}

func (t *Tailer) setStat(f *file, size int64, mtime time.Time) {
	t.mu.Lock()
	f.size, f.mtime = size, mtime
	t.mu.Unlock()
}

// isMeta reports whether path is a session store.
func isMeta(path string) bool { return formats.IsSessionStore(path) }
