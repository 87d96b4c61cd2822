package corpusgen

import "time"

// The formats a corpus mixes, indexing per-format arrays.
const (
	fmtClaude = iota
	fmtPi
	fmtCodex
	numFormats
)

// session generates the lines of one session file, in order.
type session interface {
	// next appends the next line, without newline, to dst and returns
	// it with the file it belongs to, relative to the session's
	// directory ("" for the session file itself).
	next(dst []byte, lim limits) ([]byte, string)
}

// newSession starts a session of format f.
func newSession(f int, seed uint64, start time.Time, cwd string) session {
	switch f {
	case fmtPi:
		return newPiSession(seed, start, cwd)
	case fmtCodex:
		return newCodexSession(seed, start, cwd)
	}
	return newClaudeSession(seed, start, cwd)
}

// plan is what every session keeps to write its lines: the lines planned
// ahead (a turn at a time) and, for a copy, its replay.
type plan struct {
	queue []lineSpec
	copy  replay
}

// add plans sp after the lines already planned.
func (p *plan) add(sp lineSpec) { p.queue = append(p.queue, sp) }

// next appends the next planned line, without newline, to dst, calling
// turn to plan more while none is left, and returns it with the file it
// belongs to ([lineSpec.dest]). The replay counts it and may move now.
func (p *plan) next(g *gen, now *time.Time, dst []byte, lim limits, turn func()) ([]byte, string) {
	for len(p.queue) == 0 {
		turn()
	}
	sp := &p.queue[0]
	dst = g.emit(dst, sp, lim)
	dest := sp.dest
	p.queue = p.queue[1:]
	p.copy.step(g, now)
	return dst, dest
}

// replay makes a session a resumed or forked copy: it generates the same
// lines as the original (same seed) for a while, then switches to a fresh
// random sequence and a later clock, and goes on with new lines.
type replay struct {
	left     int       // lines still to replay; 0 when not replaying
	seed     uint64    // the random seed of the new lines
	resumeAt time.Time // the clock of the new lines starts here or later
}

// step counts one emitted line and ends the replay after the last one.
func (r *replay) step(g *gen, now *time.Time) {
	if r.left == 0 {
		return
	}
	r.left--
	if r.left == 0 {
		g.reseed(r.seed)
		if now.Before(r.resumeAt) {
			*now = r.resumeAt
		}
	}
}
