package tail

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/schema"
)

// This file holds what the crash and model tests share: transcript files
// written by the test as the test knows them, a reader of the stream that
// keeps up incrementally, and the delivery check.

// tfile is one transcript file written by a test: one inode, followed
// across renames and rewrites, and the lines that were complete in it.
type tfile struct {
	label   string // stable name for messages, e.g. "f3"
	path    string // current path; "" once deleted
	gen     int    // bumped by every truncate-and-rewrite
	session string // session id of the current generation
	n       int    // entries written in this generation
	lines   []tline
	partial string // the rest of a line whose beginning is written
	pending tline  // the line partial completes
	content []int  // the lines the file holds now, as indexes in lines
}

// tline is one complete line of a tfile, in write order.
type tline struct {
	key  string // session_id/entry_id of its entry
	must bool   // false: it may be missing (truncated or deleted before it was seen in the stream)
}

// newTFile starts a transcript at path (not written yet: see header).
func newTFile(label, tag, path string) *tfile {
	f := &tfile{label: label, path: path}
	f.newGen(tag)
	return f
}

// newGen starts a new generation with its own session id, so that the
// first bytes of the file change.
func (f *tfile) newGen(tag string) {
	f.gen++
	f.session = fmt.Sprintf("%s-%s-g%d", tag, f.label, f.gen)
	f.n = 0
	f.partial, f.pending = "", tline{}
}

// header returns the session header line of the current generation and
// records it.
func (f *tfile) header() string {
	f.content = []int{len(f.lines)}
	f.lines = append(f.lines, tline{key: f.session + "/" + f.session, must: true})
	return piHeader(f.session)
}

// next returns a new entry line and the tline it makes once complete.
func (f *tfile) next(rng *rand.Rand) (string, tline) {
	f.n++
	id := fmt.Sprintf("%s.%d", f.session, f.n)
	size := 10 + rng.IntN(200)
	switch r := rng.IntN(100); {
	case r < 2:
		size = 20000 + rng.IntN(60000) // crosses read buffers
	case r < 15:
		size = 200 + rng.IntN(3000) // crosses the 1 KiB fingerprint
	}
	text := make([]byte, size)
	for i := range text {
		text[i] = "abcdefghij klmnopqrstuvwxyz"[rng.IntN(27)]
	}
	line := fmt.Sprintf(`{"type":"message","id":%q,"parentId":null,"timestamp":"2026-01-01T00:00:%02d.000Z","message":{"role":"user","content":"%s %s","timestamp":1767225600000}}`+"\n",
		id, f.n%60, id, text)
	return line, tline{key: f.session + "/" + id, must: true}
}

// minSizedLine is the shortest line sized can make.
const minSizedLine = 300

// sized returns new complete lines of size bytes in all (at least
// minSizedLine), and records them.
func (f *tfile) sized(rng *rand.Rand, size int) string {
	var b strings.Builder
	for size-b.Len() >= 2*minSizedLine && rng.IntN(3) > 0 {
		line, tl := f.next(rng)
		if size-b.Len()-len(line) < minSizedLine {
			f.n--
			break
		}
		b.WriteString(line)
		f.content = append(f.content, len(f.lines))
		f.lines = append(f.lines, tl)
	}
	f.n++
	id := fmt.Sprintf("%s.%d", f.session, f.n)
	line := fmt.Sprintf(`{"type":"message","id":%q,"parentId":null,"timestamp":"2026-01-01T00:00:%02d.000Z","message":{"role":"user","content":"%s ","timestamp":1767225600000}}`+"\n",
		id, f.n%60, id)
	pad := size - b.Len() - len(line)
	if pad < 0 {
		panic(fmt.Sprintf("sized: no room for a line of %d bytes in %d", len(line), size-b.Len()))
	}
	line = strings.Replace(line, id+" ", id+" "+strings.Repeat("p", pad), 1)
	b.WriteString(line)
	f.content = append(f.content, len(f.lines))
	f.lines = append(f.lines, tline{key: f.session + "/" + id, must: true})
	return b.String()
}

// more returns k new complete lines, after the rest of a pending
// partial line if there is one, and records them.
func (f *tfile) more(rng *rand.Rand, k int) string {
	var b strings.Builder
	if f.partial != "" {
		b.WriteString(f.partial)
		f.content = append(f.content, len(f.lines))
		f.lines = append(f.lines, f.pending)
		f.partial, f.pending = "", tline{}
	}
	for range k {
		line, tl := f.next(rng)
		b.WriteString(line)
		f.content = append(f.content, len(f.lines))
		f.lines = append(f.lines, tl)
	}
	return b.String()
}

// half returns the first part of a new line; the rest is written by the
// next call to more.
func (f *tfile) half(rng *rand.Rand) string {
	line, tl := f.next(rng)
	cut := 1 + rng.IntN(len(line)-1)
	f.partial, f.pending = line[cut:], tl
	return line[:cut]
}

// loseUnseen marks the lines of f not in seen as possibly missing: the
// file is about to lose them (truncated or deleted).
func (f *tfile) loseUnseen(seen map[string]int) {
	for i := range f.lines {
		if _, ok := seen[f.lines[i].key]; !ok {
			f.lines[i].must = false
		}
	}
}

// appendFile appends data to the file at path.
func appendFile(tb testing.TB, path, data string) {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(tb, err)
	_, err = f.WriteString(data)
	require.NoError(tb, err)
	require.NoError(tb, f.Close())
}

// createFile writes a new file at path, making its directory.
func createFile(tb testing.TB, path, data string) {
	tb.Helper()
	require.NoError(tb, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(tb, os.WriteFile(path, []byte(data), 0o644))
}

// observer reads the stream incrementally: every call to refresh reads
// the messages stored since the last one.
type observer struct {
	js   jetstream.JetStream
	next uint64         // next stream sequence to read
	msgs []got          // every message read, in stream order
	seen map[string]int // entry key → times seen
}

func newObserver(js jetstream.JetStream) *observer {
	return &observer{js: js, next: 1, seen: make(map[string]int)}
}

// refresh reads what the stream stored since the last call. It fails
// (and reads nothing more) while the server is down.
func (o *observer) refresh(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s, err := o.js.Stream(ctx, bus.DefaultStream)
	if err != nil {
		return err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return err
	}
	for ; o.next <= info.State.LastSeq; o.next++ {
		m, err := s.GetMsg(ctx, o.next)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		g := got{seq: o.next}
		if strings.Contains(m.Subject, ".dead.") {
			d, err := bus.DecodeDeadLetter(m.Data)
			if err != nil {
				return fmt.Errorf("decode dead letter %d: %w", o.next, err)
			}
			g.dead = &d
		} else if strings.Contains(m.Subject, ".raw.") {
			// The daemon archives by default: its raw chunks are checked
			// by the archive tests, not counted as entries here.
			if _, err := bus.DecodeRaw(m.Header, m.Data, nil); err != nil {
				return fmt.Errorf("decode raw chunk %d: %w", o.next, err)
			}
			continue
		} else if bus.IsBatch(m.Header) {
			if err := bus.DecodeEntries(m.Header, m.Data, func(e *schema.Entry) error {
				o.msgs = append(o.msgs, got{seq: o.next, entry: *e})
				o.seen[e.SessionID+"/"+e.EntryID]++
				return nil
			}); err != nil {
				return fmt.Errorf("decode batch %d: %w", o.next, err)
			}
			continue
		} else if err := bus.DecodeEntry(m.Header, m.Data, &g.entry); err != nil {
			return fmt.Errorf("decode entry %d: %w", o.next, err)
		}
		o.msgs = append(o.msgs, g)
		if g.dead == nil {
			o.seen[g.entry.SessionID+"/"+g.entry.EntryID]++
		}
	}
	return nil
}

// missing returns how many must-lines of files the stream does not hold
// yet, and the first of them.
func (o *observer) missing(files []*tfile) (int, string) {
	n, first := 0, ""
	for _, f := range files {
		for _, l := range f.lines {
			if l.must && o.seen[l.key] == 0 {
				if n == 0 {
					first = f.label + ":" + l.key
				}
				n++
			}
		}
	}
	return n, first
}

// waitAll waits until the stream holds every must-line of files.
func (o *observer) waitAll(tb testing.TB, timeout time.Duration, files []*tfile) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := o.refresh(context.Background())
		n, first := o.missing(files)
		if err == nil && n == 0 {
			return
		}
		if time.Now().After(deadline) {
			require.FailNow(tb, "lines missing from the stream", "after %v: %d missing, first %s (last refresh error: %v)", timeout, n, first, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// deliveryStats counts what checkDelivery found.
type deliveryStats struct {
	must, optionalIn, optionalOut int
	copies                        int // entries stored again (see checkDelivery)
}

// checkDelivery asserts that msgs hold each must-line of files at least
// once, the first copies of the lines of every file in the order they
// were written, and nothing else: no dead letters, no entry the files
// never held. A line may be stored more than once: a batch of lines
// re-read after a crash, a lost checkpoint or a rewrite may be cut
// otherwise than the batch sent before, and then passes the stream's
// duplicate window; the consumers count each entry key once.
func checkDelivery(tb testing.TB, msgs []got, files []*tfile) deliveryStats {
	tb.Helper()
	type pos struct {
		f *tfile
		i int
	}
	where := make(map[string]pos)
	for _, f := range files {
		for i, l := range f.lines {
			where[l.key] = pos{f, i}
		}
	}
	var problems []string
	problem := func(format string, args ...any) {
		if len(problems) < 20 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	count := make(map[string]int)
	last := make(map[*tfile]int)
	var st deliveryStats
	for _, g := range msgs {
		if g.dead != nil {
			problem("seq %d: dead letter %s line %d offset %d: %s: %.80q", g.seq, g.dead.Path, g.dead.Line, g.dead.Offset, g.dead.Error, g.dead.Head)
			continue
		}
		key := g.entry.SessionID + "/" + g.entry.EntryID
		p, ok := where[key]
		if !ok {
			problem("seq %d: entry %s (%s line %d) was never written", g.seq, key, g.entry.Path, g.entry.Line)
			continue
		}
		count[key]++
		if count[key] > 1 {
			st.copies++
			continue
		}
		if l, ok := last[p.f]; ok && p.i < l {
			problem("seq %d: entry %s of %s (line %d) after line %d of the same file", g.seq, key, p.f.label, p.i, l)
		}
		last[p.f] = p.i
	}
	for _, f := range files {
		for i, l := range f.lines {
			switch {
			case l.must && count[l.key] == 0:
				problem("%s: line %d (%s) is missing", f.label, i, l.key)
			case l.must:
				st.must++
			case count[l.key] > 0:
				st.optionalIn++
			default:
				st.optionalOut++
			}
		}
	}
	if len(problems) > 0 {
		require.FailNow(tb, "delivery is wrong", "%d messages checked:\n%s", len(msgs), strings.Join(problems, "\n"))
	}
	return st
}
