package tail

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/zeebo/xxh3"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/schema"
)

// isDoc reports whether path is a whole-file document candidate.
func isDoc(path string) bool { return formats.IsDocumentCandidate(filepath.Base(path)) }

// docAckedLocked makes the digests handed to the publisher the
// acknowledged ones: nothing is in flight; f.mu must be held.
func (f *file) docAckedLocked() {
	if f.docPending != nil && !f.stuck {
		f.docAcked, f.docPending = f.docPending, nil
	}
}

// readDoc reads a whole-file document again after a change and publishes
// the entries whose content was not published before (see DocState):
// a message that is new or grew goes out under its unchanged key, one
// already sent does not. A document that is not valid JSON (read while
// being rewritten in place) is counted and read again at its next change;
// one of no known shape is skipped as not a transcript, and read again
// when it changes.
func (t *Tailer) readDoc(ctx context.Context, w *worker, f *file, h *os.File, path string, size int64, mtime time.Time) error {
	t.mu.Lock()
	same := f.docRead && size == f.size && mtime.Equal(f.mtime)
	t.mu.Unlock()
	if same {
		return nil
	}
	if f.skipped {
		// Not a transcript when last read, but changed since: a document
		// may be written first with none of its agent's fields.
		f.mu.Lock()
		f.skipped = false
		f.mu.Unlock()
	}
	t.setStat(f, size, mtime)
	read := time.Now()
	data, err := formats.ReadWhole(h, path, size, t.cfg.MaxDocumentBytes)
	var tooLarge *formats.DocumentTooLargeError
	if errors.As(err, &tooLarge) {
		t.m.docTooLarge.Add(1)
	}
	if err != nil {
		return err
	}
	sum := xxh3.Hash(data)
	if f.docRead && sum == f.docSum {
		return nil
	}
	f.docSum, f.docRead = sum, true
	t.m.docReads.Add(1)
	t.m.bytes.Add(int64(len(data)))
	d, err := formats.ParseDocument(data, t.parseConfig(path), mtime)
	if errors.Is(err, formats.ErrUnknownFormat) {
		t.skip(f, path)
		return nil
	}
	if err != nil {
		t.m.docInvalid.Add(1)
		t.log.Info("document not valid JSON (being written?), read again at its next change", KeyFile, path, KeyError, err)
		return nil
	}
	if f.format == "" {
		f.mu.Lock()
		f.format = d.Format
		f.mu.Unlock()
		t.log.Debug("following document", KeyFile, path, "format", d.Format)
	}
	base := f.docs
	if base == nil {
		t.mu.Lock()
		base = t.docPaths[path]
		t.mu.Unlock()
	}

	// The entries whose digest differs from the one published.
	next := make(map[string]DocEntry, len(d.Entries)+len(d.Errors))
	w.jsonl = w.jsonl[:0]
	var kept []docEntry
	var scratch []byte
	for i := range d.Entries {
		e := &d.Entries[i]
		e.Path = path
		key := e.EntryID + "#" + strconv.Itoa(e.Object)
		for n := 2; ; n++ {
			if _, dup := next[key]; !dup {
				break
			}
			key = e.EntryID + "#" + strconv.Itoa(e.Object) + "#" + strconv.Itoa(n)
		}
		old, published := base[key]
		if published && old.TS != 0 {
			e.TS = time.Unix(0, old.TS).UTC() // its first time
		}
		from := len(w.jsonl)
		w.jsonl = t.appendEntry(w.jsonl, e) // labelled and redacted
		pos := *e
		pos.Offset, pos.Line, pos.TS = 0, 0, time.Time{}
		scratch = pos.AppendJSON(scratch[:0])
		pub := DocEntry{Sum: xxh3.Hash(scratch)}
		if !e.TS.IsZero() {
			pub.TS = e.TS.UnixNano()
		}
		next[key] = pub
		if published && old.Sum == pub.Sum {
			w.jsonl = w.jsonl[:from]
			t.m.docUnchanged.Add(1)
			continue
		}
		kept = append(kept, docEntry{from: from, to: len(w.jsonl), line: e.Line})
	}
	var msgs []*nats.Msg
	for _, err := range d.Errors {
		key := "error:" + err.Error()
		next[key] = DocEntry{Sum: 1}
		if _, ok := base[key]; ok {
			continue
		}
		t.m.badLines.Add(1)
		var de *schema.DecodeError
		line, off := int64(0), int64(0)
		if errors.As(err, &de) {
			line, off = de.Line, de.Offset
		}
		msgs = append(msgs, bus.DeadMsg(t.cfg.Prefix, &bus.DeadLetter{
			Host: t.cfg.Host, Path: path, Line: line, Offset: off, Format: string(d.Format), Error: err.Error(),
			Head: data[min(int(off), len(data)):min(int(off)+bus.MaxDeadHead, len(data))],
		}))
	}
	batches, err := t.docBatches(w, f, size, kept)
	if err != nil {
		return err
	}
	msgs = append(batches, msgs...)
	f.docs = next
	t.mu.Lock()
	t.docPaths[path] = next
	t.mu.Unlock()
	f.mu.Lock()
	f.docPending = &DocState{Entries: next}
	f.mu.Unlock()
	defer func() { w.jsonl = w.jsonl[:0] }()
	return t.send(ctx, f, pendingLine{msgs: msgs, after: mark{at: size}, line: 1, read: read})
}

// docEntry is an entry of a document to publish: its JSON line in the
// worker's jsonl, and its line in the file.
type docEntry struct {
	from, to int
	line     int64
}

// docBatches makes the batch messages of a document's entries to
// publish: runs of at most publishBatch entries and publishBatchBytes
// bytes, halved until each fits the server's max_payload; an entry too
// large alone travels as its own message, shortened to fit.
func (t *Tailer) docBatches(w *worker, f *file, size int64, kept []docEntry) ([]*nats.Msg, error) {
	var msgs []*nats.Msg
	limit := t.payloadLimit()
	var emit func(run []docEntry) error
	emit = func(run []docEntry) error {
		first, last := run[0], run[len(run)-1]
		lines := last.line - first.line + 1
		if lines < 1 {
			lines = 1
		}
		m, err := bus.BatchMsg(t.cfg.Prefix, t.batchSpan(f, 0, size, max(first.line, 1), lines), w.jsonl[first.from:last.to], len(run))
		if err != nil {
			return err
		}
		if len(m.Data)+bus.HeaderSize(m.Header)+len(m.Subject) > limit {
			if len(run) > 1 {
				if err := emit(run[:len(run)/2]); err != nil {
					return err
				}
				return emit(run[len(run)/2:])
			}
			var e schema.Entry
			if err := schema.UnmarshalEntry(w.jsonl[first.from:first.to-1], &e); err != nil {
				return fmt.Errorf("entry of %s: %w", f.path, err)
			}
			msgs = append(msgs, t.fitEntryMsg(&e, limit))
			t.m.entries.Add(1)
			return nil
		}
		t.m.batches.Add(1)
		t.m.entries.Add(int64(len(run)))
		msgs = append(msgs, m)
		return nil
	}
	for start := 0; start < len(kept); {
		end, bytes := start, 0
		for end < len(kept) && end-start < publishBatch && (end == start || bytes+kept[end].to-kept[end].from <= publishBatchBytes) {
			bytes += kept[end].to - kept[end].from
			end++
		}
		if err := emit(kept[start:end]); err != nil {
			return nil, err
		}
		start = end
	}
	return msgs, nil
}
