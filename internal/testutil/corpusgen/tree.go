package corpusgen

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Defaults of [TreeConfig].
const (
	// DefaultMinSessionBytes and DefaultMaxSessionBytes bound the size of
	// one session (its file plus its subagent files). Sizes between them
	// are drawn log-uniformly: many small sessions, a few very large.
	DefaultMinSessionBytes = 10 << 10
	DefaultMaxSessionBytes = 20 << 20

	// DefaultResumeRate is the share of sessions written as resumed or
	// forked copies of an earlier session.
	DefaultResumeRate = 0.01
)

// TreeConfig configures [WriteTree].
type TreeConfig struct {
	// Dir is the root of the tree; it is created if missing. Files that
	// already exist there under the same names are overwritten.
	Dir string

	// Format is MixClaude, MixPi, MixCodex or MixMixed (about 80% Claude
	// bytes, 10% pi, 10% Codex). Empty means MixMixed.
	Format Mix

	// Bytes is the target total size of the files written. The last
	// session is cut to fit, so the total is within a few KB of it.
	Bytes int64

	// Seed makes the tree reproducible.
	Seed uint64

	// MinSessionBytes and MaxSessionBytes bound one session's size.
	// Zero means the defaults.
	MinSessionBytes, MaxSessionBytes int64

	// ResumeRate is the share of sessions that are resumed (Claude) or
	// forked (pi, Codex) copies. Zero means DefaultResumeRate; a negative
	// value disables copies.
	ResumeRate float64

	// Progress, if not nil, is called after each session is written.
	Progress func(TreeStats)
}

// Validate reports the first invalid field as a *ConfigError.
func (c TreeConfig) Validate() error {
	switch c.Format {
	case "", MixMixed, MixClaude, MixPi, MixCodex:
	default:
		return &ConfigError{Field: "format", Value: c.Format, Err: ErrInvalidConfig}
	}
	switch {
	case c.Dir == "":
		return &ConfigError{Field: "out", Value: c.Dir, Err: ErrInvalidConfig}
	case c.Bytes <= 0:
		return &ConfigError{Field: "size", Value: c.Bytes, Err: ErrInvalidConfig}
	case c.MinSessionBytes < 0:
		return &ConfigError{Field: "min_session_bytes", Value: c.MinSessionBytes, Err: ErrInvalidConfig}
	case c.MaxSessionBytes < 0 || (c.MaxSessionBytes > 0 && c.MaxSessionBytes < c.MinSessionBytes):
		return &ConfigError{Field: "max_session_bytes", Value: c.MaxSessionBytes, Err: ErrInvalidConfig}
	case c.ResumeRate > 1:
		return &ConfigError{Field: "resume_rate", Value: c.ResumeRate, Err: ErrInvalidConfig}
	}
	return nil
}

// TreeStats counts what [WriteTree] wrote.
type TreeStats struct {
	Sessions int   // session files (resumed copies included)
	Resumed  int   // sessions that are resumed or forked copies
	Files    int   // files: sessions and subagent files
	Lines    int64 // lines in all files
	Bytes    int64 // bytes in all files
}

// written remembers a session for later resumed copies.
type written struct {
	seed  uint64
	start time.Time
	cwd   string
	path  string
	lines int
}

// WriteTree writes session files under cfg.Dir in the agents' on-disk
// layouts (see the package documentation) until cfg.Bytes are written.
// It returns what it wrote and the first error: a *ConfigError, a file
// system error, or the context's cause when ctx ends (files written so
// far stay; the one being written may end mid-session, never mid-line).
func WriteTree(ctx context.Context, cfg TreeConfig) (TreeStats, error) {
	var stats TreeStats
	if err := cfg.Validate(); err != nil {
		return stats, err
	}
	if cfg.Format == "" {
		cfg.Format = MixMixed
	}
	if cfg.MinSessionBytes == 0 {
		cfg.MinSessionBytes = DefaultMinSessionBytes
	}
	if cfg.MaxSessionBytes == 0 {
		cfg.MaxSessionBytes = max(DefaultMaxSessionBytes, cfg.MinSessionBytes)
	}
	if cfg.ResumeRate == 0 {
		cfg.ResumeRate = DefaultResumeRate
	}
	m := newGen(cfg.Seed)
	shares := cfg.Format.shares()
	var perFormat [numFormats]int64
	var history [numFormats][]written
	clock := epoch
	for stats.Bytes < cfg.Bytes {
		if err := context.Cause(ctx); err != nil {
			return stats, err
		}
		f, bestDeficit := 0, -1e300
		for i, share := range shares {
			if d := share*float64(stats.Bytes+1) - float64(perFormat[i]); share > 0 && d > bestDeficit {
				f, bestDeficit = i, d
			}
		}
		remaining := cfg.Bytes - stats.Bytes
		size := int64(m.logUniform(int(cfg.MinSessionBytes), int(cfg.MaxSessionBytes)))
		if size > remaining || remaining-size < cfg.MinSessionBytes {
			size = remaining
		}
		clock = clock.Add(time.Duration(m.logUniform(60, 86400)) * time.Second)

		w := written{seed: m.r.Uint64(), start: clock, cwd: m.pick(projectDirs)}
		var s session
		var id string
		copied := false
		if h := history[f]; len(h) > 0 && m.chance(cfg.ResumeRate) {
			copied = true
			orig := h[m.intn(len(h))]
			s, id = resumed(f, m, orig, clock)
			w.cwd = orig.cwd // the copy is named after its own start, clock
			stats.Resumed++
		} else {
			s, id = newFormatSession(f, w)
		}
		w.path = sessionPath(cfg.Dir, f, w.cwd, id, w.start)
		n, lines, files, err := writeSession(ctx, s, w.path, size)
		stats.Bytes += n
		stats.Lines += int64(lines)
		stats.Files += files
		stats.Sessions++
		perFormat[f] += n
		if err != nil {
			return stats, err
		}
		if !copied { // copies of copies would name the wrong parent
			w.lines = lines
			history[f] = append(history[f], w)
		}
		if cfg.Progress != nil {
			cfg.Progress(stats)
		}
	}
	return stats, nil
}

// newFormatSession starts an original session and returns its id.
func newFormatSession(f int, w written) (session, string) {
	switch s := newSession(f, w.seed, w.start, w.cwd).(type) {
	case *claudeSession:
		return s, s.id
	case *piSession:
		return s, s.id
	case *codexSession:
		return s, s.id
	}
	return nil, ""
}

// resumed starts a copy of orig under a new session id: a Claude
// resume (every replayed line carries the new sessionId), a pi fork (a
// new header naming the parent file, entries verbatim) or a Codex fork
// (the child's session_meta, then the parent's lines verbatim).
func resumed(f int, m *gen, orig written, now time.Time) (session, string) {
	rp := replay{left: max(orig.lines, 1), seed: m.r.Uint64(), resumeAt: now}
	switch f {
	case fmtPi:
		s := newPiSession(orig.seed, orig.start, orig.cwd)
		s.id, s.forkOf, s.copy = m.uuid(), orig.path, rp
		return s, s.id
	case fmtCodex:
		s := newCodexSession(orig.seed, orig.start, orig.cwd)
		s.forkID, s.copy = m.uuid7(now), rp
		s.copy.left++ // the child's own session_meta comes first
		return s, s.forkID
	}
	s := newClaudeSession(orig.seed, orig.start, orig.cwd)
	s.id, s.copy = m.uuid(), rp
	return s, s.id
}

// sessionPath returns the path of a session file in its format's layout.
func sessionPath(dir string, f int, cwd, id string, start time.Time) string {
	start = start.UTC()
	switch f {
	case fmtPi:
		proj := "--" + strings.NewReplacer("/", "-", "\\", "-", ":", "-").Replace(strings.TrimLeft(cwd, `/\`)) + "--"
		ts := strings.NewReplacer(":", "-", ".", "-").Replace(start.Format("2006-01-02T15:04:05.000Z"))
		return filepath.Join(dir, "pi", "sessions", proj, ts+"_"+id+".jsonl")
	case fmtCodex:
		return filepath.Join(dir, "codex", "sessions", start.Format("2006"), start.Format("01"), start.Format("02"),
			"rollout-"+start.Format("2006-01-02T15-04-05")+"-"+id+".jsonl")
	}
	return filepath.Join(dir, "claude", "projects", encodeClaudeDir(cwd), id+".jsonl")
}

// writeSession writes lines of s to path (and its subagent files beside
// it, in a directory named after the session) until size bytes.
func writeSession(ctx context.Context, s session, path string, size int64) (n int64, lines, files int, err error) {
	out := map[string]*bufio.Writer{}
	var closers []*os.File
	defer func() {
		for _, f := range closers {
			if e := f.Close(); e != nil && err == nil {
				err = e
			}
		}
	}()
	open := func(dest string) (*bufio.Writer, error) {
		if w, ok := out[dest]; ok {
			return w, nil
		}
		p := path
		if dest != "" {
			p = filepath.Join(strings.TrimSuffix(path, ".jsonl"), filepath.FromSlash(dest))
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		f, err := os.Create(p)
		if err != nil {
			return nil, err
		}
		closers = append(closers, f)
		files++
		w := bufio.NewWriterSize(f, 256<<10)
		out[dest] = w
		return w, nil
	}
	if _, err := open(""); err != nil {
		return 0, 0, 0, err
	}
	var buf []byte
	for n < size {
		if lines%1024 == 0 {
			if err := context.Cause(ctx); err != nil {
				return n, lines, files, err
			}
		}
		var dest string
		buf, dest = s.next(buf[:0], limits{max: int(size - n), images: true})
		buf = append(buf, '\n')
		w, err := open(dest)
		if err != nil {
			return n, lines, files, err
		}
		if _, err := w.Write(buf); err != nil {
			return n, lines, files, fmt.Errorf("write %s: %w", path, err)
		}
		n += int64(len(buf))
		lines++
	}
	for _, w := range out {
		if err := w.Flush(); err != nil {
			return n, lines, files, fmt.Errorf("write %s: %w", path, err)
		}
	}
	return n, lines, files, nil
}
