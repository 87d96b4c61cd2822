package tail

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/redact"
	"github.com/sessionpipe/sessionpipe/schema"
)

// maxChunkSessions bounds the session ids a raw chunk lists.
const maxChunkSessions = 16

// archiving reports whether the original lines are published: Archive
// is set and the content mode keeps text (metadata mode publishes no
// text at all, original lines included).
func (t *Tailer) archiving() bool {
	return t.cfg.Archive && (t.cfg.Redactor == nil || t.cfg.Redactor.Mode() != redact.Metadata)
}

// noteRaw records, for the raw chunk of w's batch, the sessions and the
// earliest timestamp of a line's entries.
func (w *worker) noteRaw(entries []schema.Entry) {
	for i := range entries {
		e := &entries[i]
		if !e.TS.IsZero() && (w.rawTS.IsZero() || e.TS.Before(w.rawTS)) {
			w.rawTS = e.TS
		}
		if e.SessionID != "" && len(w.rawSessions) < maxChunkSessions && !slices.Contains(w.rawSessions, e.SessionID) {
			w.rawSessions = append(w.rawSessions, e.SessionID)
		}
	}
}

// rawChunk returns the raw chunk of a run of w's pending lines: the
// bytes of the file from the end of the line before the first line to
// the end of the last, read again from the file (page cache: the lines
// were just read), so that blank lines, terminators and a byte order mark
// are kept exactly. Lines too long to keep are left out as holes. The
// chunk is checked against the marks taken while reading; if the file
// changed since, no chunk is sent and the file is read again (it was
// rewritten: the archive must hold what it holds now), and ok is false.
func (t *Tailer) rawChunk(w *worker, f *file, lines []pendingLine) (c *bus.RawChunk, ok bool) {
	first, last := &lines[0], &lines[len(lines)-1]
	start, end := first.before.at, last.after.at
	if end <= start || w.h == nil {
		return nil, true
	}
	buf := w.raw[:0]
	var holes []bus.Hole
	pos := start
	read := func(to int64) error {
		n := int(to - pos)
		if n <= 0 {
			return nil
		}
		buf = slices.Grow(buf, n)
		got, err := w.h.ReadAt(buf[len(buf):len(buf)+n], pos)
		if got < n {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		buf = buf[:len(buf)+n]
		pos = to
		return nil
	}
	for i := range lines {
		p := &lines[i]
		if !p.tooLong {
			continue
		}
		if err := read(p.offset); err != nil {
			return t.rawChanged(w, f, err)
		}
		holes = append(holes, bus.Hole{Line: p.line, Offset: p.offset, End: p.after.at})
		pos = p.after.at
	}
	if err := read(end); err != nil {
		return t.rawChanged(w, f, err)
	}
	w.raw = buf[:0]
	// The lines end where they ended when read.
	if !last.tooLong {
		if len(buf) == 0 || buf[len(buf)-1] != '\n' {
			return t.rawChanged(w, f, nil)
		}
		if n := int(last.after.n); n > 0 {
			// The mark's bytes may begin before the chunk: read them
			// again, and compare what the chunk holds of them.
			ok, at, err := checkMark(w.h, end, last.after, &w.check)
			if err != nil || !ok || !bytes.HasSuffix(at, buf[len(buf)-min(n, len(buf)):]) {
				return t.rawChanged(w, f, err)
			}
		}
	}
	// Blank lines between the line before and the first line of the
	// batch come first.
	lead := int(first.offset - start)
	if first.tooLong || lead > len(buf) {
		lead = min(lead, len(buf))
	}
	startLine := first.line - int64(bytes.Count(buf[:lead], []byte{'\n'}))

	data := buf
	var st redact.Stats
	if r := t.cfg.Redactor; r != nil && r.Mode() == redact.Redacted {
		data = t.redactLines(w, buf, &st)
		t.m.redacted(st)
	}
	t.mu.Lock()
	path := f.path
	t.mu.Unlock()
	c = &bus.RawChunk{
		Host: t.cfg.Host, Path: path, Format: string(f.format), File: fileToken(f.id),
		Offset: start, End: end, Line: startLine, Lines: last.line - startLine + 1,
		Holes: holes, Sessions: w.rawSessions, TS: w.rawTS, Redacted: st.Total(),
		Data: data,
	}
	if c.TS.IsZero() {
		c.TS = time.Now().UTC()
	}
	return c, true
}

// redactLines returns buf with the secrets of each line replaced, in
// w.rawOut when anything changed, counting into st.
func (t *Tailer) redactLines(w *worker, buf []byte, st *redact.Stats) []byte {
	var out []byte
	copied := 0
	for at := 0; at < len(buf); {
		nl := bytes.IndexByte(buf[at:], '\n')
		lineEnd := len(buf)
		if nl >= 0 {
			lineEnd = at + nl + 1
		}
		line := buf[at:lineEnd]
		if red := t.cfg.Redactor.JSON(line, st); &red[0] != &line[0] || len(red) != len(line) {
			if out == nil {
				out = w.rawOut[:0]
			}
			out = append(out, buf[copied:at]...)
			out = append(out, red...)
			copied = lineEnd
		}
		at = lineEnd
	}
	if out == nil {
		return buf
	}
	out = append(out, buf[copied:]...)
	w.rawOut = out[:0]
	return out
}

// errRawChanged is returned by flush when the bytes of the lines to
// send changed since they were read: nothing of the batch is sent, and
// the file is read again from its last line sent.
var errRawChanged = errors.New("file changed while read; reading it again")

// rawChanged handles a raw chunk that does not match what was read: the
// file changed under the read (or could not be read again). The batch is
// not sent: the decoder is let go, so that the next read, at once,
// replays the file and publishes again from its last line sent, after
// checking whether its content was replaced.
func (t *Tailer) rawChanged(w *worker, f *file, err error) (*bus.RawChunk, bool) {
	w.raw = w.raw[:0]
	t.m.rawSkipped.Add(1)
	f.recheck = true
	t.dropDecoder(f)
	t.mu.Lock()
	f.again = true
	path := f.path
	t.mu.Unlock()
	if err == nil {
		err = errors.New("its bytes differ from those read")
	}
	t.log.Info("file changed while read; reading it again", KeyFile, path, KeyError, err)
	return nil, false
}
