package tail

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/dirlock"
)

// Replaying and soaking the model test:
//
//	go test ./pipeline/tail -run TestTailer_Model -tail.seed=1234 -v
//	SESSIONPIPE_SOAK=1 go test ./pipeline/tail -run TestTailer_Model -tail.seeds=200 -timeout=1h
var (
	modelSeed  = flag.Uint64("tail.seed", 0, "run the tailer model test with this seed only")
	modelSeeds = flag.Int("tail.seeds", 0, "number of seeds of the tailer model test (default 6, 100 with SESSIONPIPE_SOAK=1)")
	modelOps   = flag.Int("tail.ops", 0, "operations per seed of the tailer model test (default 80, 300 with SESSIONPIPE_SOAK=1)")
	modelLogs  = flag.String("tail.logs", "", "directory to write the whole log of a failed seed of the tailer model test to")
)

// TestTailer_Model runs seeded random sequences of what can happen to
// transcript files and to the tailer around them (appends, half-written
// lines, rotation by rename, truncate-and-rewrite, deletion, graceful and
// abrupt restarts, simulated crashes, NATS outages) and checks the stream
// against a model: every line that was complete while its file was
// followed is stored at least once (see checkDelivery), in file order; only lines that the
// file lost (truncated or deleted) before they were seen in the stream
// may be missing; nothing else is stored.
func TestTailer_Model(t *testing.T) {
	soak := os.Getenv("SESSIONPIPE_SOAK") == "1"
	seeds, ops := 6, 80
	if soak {
		seeds, ops = 100, 300
	}
	if *modelSeeds > 0 {
		seeds = *modelSeeds
	}
	if *modelOps > 0 {
		ops = *modelOps
	}
	base := uint64(time.Now().UnixNano())
	if !soak && *modelSeed == 0 {
		base = 1 // the default run draws the same operations every time
	}
	for i := range seeds {
		seed := base + uint64(i)*0x9E3779B97F4A7C15
		if *modelSeed != 0 {
			if i > 0 {
				break
			}
			seed = *modelSeed
		}
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			t.Logf("replay with: go test ./pipeline/tail -run 'TestTailer_Model' -tail.seed=%d -tail.ops=%d -v", seed, ops)
			newModel(t, seed).run(ops)
		})
	}
}

// model drives one seeded sequence: the files, the server and the tailer,
// and what the stream must hold.
type model struct {
	t     *testing.T
	rng   *rand.Rand
	tag   string
	srv   *natstest.Server
	obs   *observer
	dir   string
	state string
	logs  *os.File

	files  []*tfile // every file ever written, deleted ones too
	labels int
	rots   int
	down   bool // the server is stopped

	// Tailer settings drawn once per seed.
	inflight int
	workers  int
	rescan   time.Duration
	save     time.Duration
	maxOpen  int

	// The tailers' connection, made while the server is up: a
	// connection that never reached a server cannot tell that it
	// supports headers, and the publisher takes that as a refusal.
	nc *nats.Conn

	// The running tailer, with a publisher of its own.
	tl     *Tailer
	pub    *bus.Publisher
	cancel context.CancelFunc
	done   chan error
	runs   int
}

func newModel(t *testing.T, seed uint64) *model {
	m := &model{
		t:     t,
		rng:   rand.New(rand.NewPCG(seed, seed^0x5EED)),
		tag:   fmt.Sprintf("m%x", seed&0xFFFFFF),
		srv:   natstest.RunServer(t),
		dir:   t.TempDir(),
		state: t.TempDir(),
	}
	nc := natstest.Connect(t, m.srv.URL())
	js := natstest.JetStream(t, nc)
	_, err := bus.EnsureStream(t.Context(), js, bus.StreamConfig{})
	require.NoError(t, err)
	m.obs = newObserver(js)
	m.nc = natstest.Connect(t, m.srv.URL())
	m.inflight = []int{2, 16, 256}[m.rng.IntN(3)]
	m.workers = 1 + m.rng.IntN(3)
	m.rescan = []time.Duration{50 * time.Millisecond, 200 * time.Millisecond, time.Second}[m.rng.IntN(3)]
	m.save = []time.Duration{20 * time.Millisecond, 200 * time.Millisecond, time.Second}[m.rng.IntN(3)]
	m.maxOpen = []int{1, 2, 256}[m.rng.IntN(3)]
	m.logs, err = os.Create(filepath.Join(t.TempDir(), "tailer.log"))
	require.NoError(t, err)
	t.Cleanup(func() {
		if t.Failed() && m.tl != nil {
			t.Logf("at the failure: publisher %+v; tailer %+v", m.pub.Stats(), m.tl.Metrics().Snapshot())
		}
		m.stopTailer(true)
		m.logs.Close()
		if t.Failed() {
			m.dumpLogs()
		}
	})
	return m
}

// dumpLogs prints the end of the tailer's log.
func (m *model) dumpLogs() {
	data, err := os.ReadFile(m.logs.Name())
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	m.t.Logf("last lines of the tailer log:\n%s", strings.Join(lines[max(0, len(lines)-60):], "\n"))
	if *modelLogs != "" {
		path := filepath.Join(*modelLogs, strings.ReplaceAll(m.t.Name(), "/", "_")+".log")
		if err := os.WriteFile(path, data, 0o644); err == nil {
			m.t.Logf("whole log: %s", path)
		}
	}
}

// logf records a step of the model in the tailer log, between the
// tailer's own lines.
func (m *model) logf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(m.logs, "time=%s MODEL %s\n", time.Now().Format("15:04:05.000"), msg)
}

func (m *model) run(ops int) {
	m.logf("settings: inflight=%d workers=%d rescan=%v save=%v max_open=%d", m.inflight, m.workers, m.rescan, m.save, m.maxOpen)
	m.create()
	m.startTailer()
	for range ops {
		m.step()
	}
	// Settle: the server up, the tailer running; everything written must
	// arrive, then nothing more after a graceful stop.
	if m.down {
		m.serverUp()
	}
	if m.tl == nil {
		m.startTailer()
	}
	m.obs.waitAll(m.t, 30*time.Second, m.files)
	requireHandles(m.t, m.tl)
	requireInflight(m.t, m.tl)
	m.stopTailer(false)
	require.NoError(m.t, m.obs.refresh(m.t.Context()))
	st := checkDelivery(m.t, m.obs.msgs, m.files)
	m.t.Logf("%d lines stored as required; %d lines the files lost before they were seen in the stream: %d of them stored, %d not; %d stored again; %d tailer runs",
		st.must, st.optionalIn+st.optionalOut, st.optionalIn, st.optionalOut, st.copies, m.runs)
}

// step does one random operation.
func (m *model) step() {
	live := m.live()
	switch r := m.rng.IntN(100); {
	case r < 30 && len(live) > 0:
		f := live[m.rng.IntN(len(live))]
		k := 1 + m.rng.IntN(8)
		if m.rng.IntN(10) == 0 {
			k = 100 + m.rng.IntN(300) // a backlog: the tailer is mid-file for a while
		}
		m.logf("append %d lines to %s (%s)", k, f.label, f.path)
		appendFile(m.t, f.path, f.more(m.rng, k))
	case r < 38 && len(live) > 0:
		f := live[m.rng.IntN(len(live))]
		if f.partial != "" {
			m.logf("complete the half line of %s", f.label)
			appendFile(m.t, f.path, f.more(m.rng, 0))
			return
		}
		m.logf("half a line to %s", f.label)
		appendFile(m.t, f.path, f.half(m.rng))
	case r < 45 && len(live) < 5:
		m.create()
	case r < 49 && len(live) > 0:
		m.rotate(live[m.rng.IntN(len(live))])
	case r < 53 && len(live) > 0:
		m.rewrite(live[m.rng.IntN(len(live))])
	case r < 58 && len(live) > 0:
		m.overwrite(live[m.rng.IntN(len(live))])
	case r < 60 && len(live) > 1:
		m.remove(live[m.rng.IntN(len(live))])
	case r < 64:
		m.restart()
	case r < 66:
		m.editCheckpoint()
	case r < 67 && m.tl != nil:
		m.secondOwner()
	case r < 70:
		if m.down {
			m.serverUp()
		} else {
			m.serverDown()
		}
	case r < 75 && !m.down && m.tl != nil:
		m.logf("wait until the stream holds every line")
		m.obs.waitAll(m.t, 30*time.Second, m.files)
	default:
		d := time.Duration(m.rng.IntN(150)) * time.Millisecond
		m.logf("sleep %v", d)
		time.Sleep(d)
	}
}

// live returns the files that exist.
func (m *model) live() []*tfile {
	var out []*tfile
	for _, f := range m.files {
		if f.path != "" {
			out = append(out, f)
		}
	}
	return out
}

// create writes a new transcript: a header and a few lines.
func (m *model) create() *tfile {
	m.labels++
	label := fmt.Sprintf("f%d", m.labels)
	dir := []string{"", "a", "b/c", "agents/main/sessions"}[m.rng.IntN(4)]
	return m.createAt(label, filepath.Join(m.dir, dir, label+".jsonl"))
}

func (m *model) createAt(label, path string) *tfile {
	f := newTFile(label, m.tag, path)
	m.files = append(m.files, f)
	data := f.header() + f.more(m.rng, m.rng.IntN(5))
	m.logf("create %s at %s", label, path)
	createFile(m.t, path, data)
	return f
}

// rotate renames f to an archive name, sometimes in another directory,
// and starts a new file at its old path.
func (m *model) rotate(f *tfile) {
	m.rots++
	old := f.path
	to := fmt.Sprintf("%s.bak.%d", old, m.rots)
	if m.rng.IntN(2) == 0 {
		to = filepath.Join(m.dir, "archive", fmt.Sprintf("%s-%d.jsonl", f.label, m.rots))
		require.NoError(m.t, os.MkdirAll(filepath.Dir(to), 0o755))
	}
	m.logf("rotate %s: %s -> %s", f.label, old, to)
	require.NoError(m.t, os.Rename(old, to))
	f.path = to
	if m.rng.IntN(3) > 0 {
		m.labels++
		m.createAt(fmt.Sprintf("f%d", m.labels), old)
	}
}

// rewrite truncates f and writes a new session into it, in place. Lines
// not seen in the stream yet may be lost with the old content.
func (m *model) rewrite(f *tfile) {
	m.refresh()
	f.loseUnseen(m.obs.seen)
	f.newGen(m.tag)
	k := m.rng.IntN(6)
	if m.rng.IntN(3) == 0 {
		k = 100 + m.rng.IntN(300) // longer than what the tailer may be reading
	}
	data := f.header() + f.more(m.rng, k)
	if m.rng.IntN(2) == 0 {
		m.logf("rewrite %s in place (generation %d)", f.label, f.gen)
		require.NoError(m.t, os.WriteFile(f.path, []byte(data), 0o644))
		return
	}
	m.logf("truncate %s, then write generation %d", f.label, f.gen)
	require.NoError(m.t, os.Truncate(f.path, 0))
	time.Sleep(time.Duration(m.rng.IntN(50)) * time.Millisecond)
	appendFile(m.t, f.path, data)
}

// overwrite keeps the first lines of f (its header at least, so that its
// first kilobyte usually stays the same) and replaces the others with
// new ones: fewer, more, or as many bytes. While the tailer runs, a
// same-size replacement is written in place (dd conv=notrunc), once the
// tailer has caught up (a read in the middle of the write would see a
// torn line); the others are written as a truncate and rewrite. Lines not
// seen in the stream yet may be lost with the old content.
func (m *model) overwrite(f *tfile) {
	if f.partial != "" {
		appendFile(m.t, f.path, f.more(m.rng, 0))
	}
	data, err := os.ReadFile(f.path)
	require.NoError(m.t, err)
	n := strings.Count(string(data), "\n")
	require.Len(m.t, f.content, n, "%s: the model's lines and the file's", f.label)
	keep := 1 + m.rng.IntN(n)
	at := 0
	for range keep {
		at += strings.IndexByte(string(data[at:]), '\n') + 1
	}
	old := len(data) - at
	m.refresh()
	for _, i := range f.content[keep:] {
		if _, ok := m.obs.seen[f.lines[i].key]; !ok {
			f.lines[i].must = false
		}
	}
	f.content = f.content[:keep]

	var repl string
	same := m.rng.IntN(2) == 0 && old >= minSizedLine
	if same {
		repl = f.sized(m.rng, old)
	} else {
		repl = f.more(m.rng, m.rng.IntN(8))
	}
	inPlace := same && m.tl != nil && !m.down
	m.logf("overwrite %s after line %d (offset %d): %d bytes replace %d (in place %v, tailer running %v)", f.label, keep, at, len(repl), old, inPlace, m.tl != nil)
	before, err := os.Stat(f.path)
	require.NoError(m.t, err)
	if inPlace {
		natstest.CheckFor(m.t, 30*time.Second, 10*time.Millisecond, func() error {
			if !m.tl.Idle() {
				return errors.New("tailer not idle")
			}
			return nil
		})
		h, err := os.OpenFile(f.path, os.O_WRONLY, 0)
		require.NoError(m.t, err)
		_, err = h.WriteAt([]byte(repl), int64(at)) // one write
		require.NoError(m.t, err)
		require.NoError(m.t, h.Close())
	} else {
		require.NoError(m.t, os.WriteFile(f.path, append(data[:at:at], repl...), 0o644))
	}
	// Time passed: a file system's clock tick is coarser than this
	// test (a same-size change within the tick of the last read is not
	// seen by its modification time).
	if after, err := os.Stat(f.path); err == nil && !after.ModTime().After(before.ModTime()) {
		later := before.ModTime().Add(time.Millisecond)
		require.NoError(m.t, os.Chtimes(f.path, later, later))
	}
}

// editCheckpoint stops the tailer, edits its checkpoint file as a user
// might (an offset past the end of a file, an offset into a line, or
// garbage) and starts it again: a bad offset makes the file read again
// from its start (the stream drops what it holds); garbage stops the
// start with an error saying to move the file away, which is done.
func (m *model) editCheckpoint() {
	m.stopTailer(false)
	path := filepath.Join(m.state, checkpointFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		m.startTailer()
		return
	}
	require.NoError(m.t, err)
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	require.NoError(m.t, dec.Decode(&doc))
	files, _ := doc["files"].([]any)
	switch r := m.rng.IntN(3); {
	case r == 0 || len(files) == 0:
		m.logf("corrupt the checkpoint file")
		require.NoError(m.t, os.WriteFile(path, data[:len(data)/2], 0o644))
		tl, err := New(Config{Watch: []string{m.dir}, StateDir: m.state, Host: "modelhost", Publisher: m.pub})
		require.NoError(m.t, err)
		err = tl.Run(m.t.Context())
		require.ErrorIs(m.t, err, ErrCheckpoint)
		require.ErrorContains(m.t, err, "move it away")
		require.NoError(m.t, os.Rename(path, path+".bad"))
	default:
		fe := files[m.rng.IntN(len(files))].(map[string]any)
		info, err := os.Stat(fe["path"].(string))
		if err != nil {
			break // gone since
		}
		off := info.Size() + 1 + m.rng.Int64N(5000)
		if r == 1 && info.Size() > 1 {
			off = 1 + m.rng.Int64N(info.Size()-1)
		}
		m.logf("checkpoint of %s: offset %v -> %d (size %d)", fe["path"], fe["offset"], off, info.Size())
		fe["offset"] = off
		out, err := json.Marshal(doc)
		require.NoError(m.t, err)
		require.NoError(m.t, os.WriteFile(path, out, 0o644))
	}
	m.startTailer()
}

// secondOwner starts a second tailer on the running one's state
// directory: it must refuse at once, naming the holder.
func (m *model) secondOwner() {
	// The running tailer holds the directory once it has started.
	natstest.CheckFor(m.t, 10*time.Second, time.Millisecond, func() error {
		if !m.tl.scanned.Load() {
			return errors.New("tailer not started")
		}
		return nil
	})
	m.logf("second tailer on the same state directory")
	tl, err := New(Config{Watch: []string{m.dir}, StateDir: m.state, Host: "modelhost", Publisher: m.pub})
	require.NoError(m.t, err)
	ctx, cancel := context.WithTimeout(m.t.Context(), 10*time.Second)
	defer cancel()
	err = tl.Run(ctx)
	require.ErrorIs(m.t, err, dirlock.ErrHeld)
	var held *dirlock.HeldError
	require.ErrorAs(m.t, err, &held)
	require.Equal(m.t, os.Getpid(), held.PID)
}

// remove deletes f. Lines not seen in the stream yet may be lost.
func (m *model) remove(f *tfile) {
	m.refresh()
	f.loseUnseen(m.obs.seen)
	m.logf("delete %s (%s)", f.label, f.path)
	require.NoError(m.t, os.Remove(f.path))
	f.path = ""
	f.partial, f.pending = "", tline{}
}

// refresh reads the stream if the server is up; what it cannot read now
// counts as not seen.
func (m *model) refresh() {
	if m.down {
		return
	}
	if err := m.obs.refresh(m.t.Context()); err != nil {
		m.logf("stream not read: %v", err)
	}
}

func (m *model) serverDown() {
	m.logf("NATS server down")
	m.srv.Stop()
	m.down = true
}

func (m *model) serverUp() {
	m.logf("NATS server up")
	m.srv.Start(m.t)
	m.down = false
}

// restart stops the tailer in one of several ways and starts a new one.
func (m *model) restart() {
	if m.tl == nil {
		m.startTailer()
		return
	}
	switch m.rng.IntN(3) {
	case 0:
		m.logf("graceful restart")
		m.stopTailer(false)
	case 1:
		m.logf("abrupt restart: no drain")
		m.stopTailer(true)
	default:
		// A crash leaves the last checkpoint saved before it: keep a
		// copy of it now, stop without draining, and put it back.
		cp, err := OpenCheckpoints(m.state)
		require.NoError(m.t, err)
		saved, err := os.ReadFile(cp.Path())
		if errors.Is(err, fs.ErrNotExist) {
			saved = nil
		} else {
			require.NoError(m.t, err)
		}
		time.Sleep(time.Duration(m.rng.IntN(100)) * time.Millisecond)
		m.logf("crash (checkpoint of %d bytes kept)", len(saved))
		m.stopTailer(true)
		if saved == nil {
			require.NoError(m.t, os.Remove(cp.Path()))
		} else {
			require.NoError(m.t, os.WriteFile(cp.Path(), saved, 0o644))
		}
	}
	if m.rng.IntN(4) == 0 {
		// A file rewritten while no tailer runs, its first kilobyte
		// kept.
		if live := m.live(); len(live) > 0 {
			m.overwrite(live[m.rng.IntN(len(live))])
		}
	}
	if m.rng.IntN(4) == 0 {
		// Files change while no tailer runs.
		for range 1 + m.rng.IntN(3) {
			m.step()
			if m.tl != nil {
				return // the step restarted it
			}
		}
	}
	m.startTailer()
}

// startTailer starts a tailer with a publisher of its own on the
// model's connection.
func (m *model) startTailer() {
	m.runs++
	log := slog.New(slog.NewTextHandler(m.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var err error
	m.pub, err = bus.NewPublisher(natstest.JetStream(m.t, m.nc), bus.PublisherConfig{
		MaxInFlight: m.inflight, AckTimeout: time.Second,
		RetryMin: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond,
		Logger: log,
	})
	require.NoError(m.t, err)
	// Most runs drain for long enough to get every ack while the server
	// is up; some give up at once when stopped.
	drain := 2 * time.Second
	if m.rng.IntN(4) == 0 {
		drain = time.Millisecond
	}
	tl, err := New(Config{
		Watch:              []string{filepath.Join(m.dir, "**", "*")},
		StateDir:           m.state,
		Host:               "modelhost",
		Publisher:          m.pub,
		Text:               true,
		RescanInterval:     m.rescan,
		CheckpointInterval: m.save,
		Workers:            m.workers,
		MaxOpenFiles:       m.maxOpen,
		DetectWait:         time.Second,
		Drain:              drain,
		Logger:             log,
	})
	require.NoError(m.t, err)
	ctx, cancel := context.WithCancel(context.Background())
	m.tl, m.cancel, m.done = tl, cancel, make(chan error, 1)
	m.logf("tailer run %d starts (drain %v)", m.runs, drain)
	go func() { m.done <- tl.Run(ctx) }()
}

// stopTailer stops the running tailer; abrupt abandons what is not
// acknowledged at once.
func (m *model) stopTailer(abrupt bool) {
	if m.tl == nil {
		return
	}
	if abrupt {
		// Give up at once on what is not acknowledged, whatever the
		// drain: close the publisher under the running tailer.
		m.closePublisher(0)
	}
	m.cancel()
	select {
	case err := <-m.done:
		require.NoError(m.t, err, "tailer run %d", m.runs)
	case <-time.After(30 * time.Second):
		m.tl = nil // the cleanup must not wait again
		require.FailNow(m.t, "tailer did not stop", "run %d, abrupt %v, server down %v", m.runs, abrupt, m.down)
	}
	m.closePublisher(200 * time.Millisecond)
	m.tl = nil
	m.logf("tailer run %d stopped (abrupt %v)", m.runs, abrupt)
}

// closePublisher closes the publisher, abandoning after wait what is not
// acknowledged.
func (m *model) closePublisher(wait time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	m.pub.Close(ctx)
}
