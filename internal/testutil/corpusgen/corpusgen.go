package corpusgen

import (
	"bufio"
	"bytes"
	"io"
	"time"
)

// epoch is when generated sessions start.
var epoch = time.Date(2026, time.January, 5, 9, 0, 0, 0, time.UTC)

// Sizes of the sessions a line stream cycles through.
const (
	minStreamSession = 20 << 10
	maxStreamSession = 4 << 20
)

// stream interleaves sessions of the formats of a Mix, in bursts of
// lines, until it reaches the target size.
type stream struct {
	cfg    Config
	master *gen
	shares [numFormats]float64
	bytes  [numFormats]int64
	total  int64
	cur    [numFormats]session
	left   [numFormats]int64 // bytes left in the current session
	burst  int
	f      int
	starts time.Time
}

func newStream(cfg Config) *stream {
	if cfg.Mix == "" {
		cfg.Mix = DefaultMix
	}
	return &stream{cfg: cfg, master: newGen(cfg.Seed), shares: cfg.Mix.shares(), starts: epoch}
}

// next appends the next line to dst; ok is false once the target size
// is reached.
func (st *stream) next(dst []byte) (line []byte, ok bool) {
	if st.total >= st.cfg.Bytes {
		return dst, false
	}
	m := st.master
	if st.burst == 0 {
		best, bestDeficit := 0, -1e300
		for f, share := range st.shares {
			if share == 0 {
				continue
			}
			if d := share*float64(st.total+1) - float64(st.bytes[f]); d > bestDeficit {
				best, bestDeficit = f, d
			}
		}
		st.f, st.burst = best, m.between(1, 64)
	}
	f := st.f
	if st.cur[f] == nil || st.left[f] <= 0 {
		st.starts = st.starts.Add(time.Duration(m.logUniform(60, 86400)) * time.Second)
		st.cur[f] = newSession(f, m.r.Uint64(), st.starts, m.pick(projectDirs))
		st.left[f] = int64(m.logUniform(minStreamSession, maxStreamSession))
	}
	lim := limits{images: st.cfg.Mix != Mix1K, max: int(st.cfg.Bytes-st.total) + int(st.cfg.Bytes/50)}
	if st.cfg.Mix == Mix1K {
		lim.want = m.between(800, 1250)
	}
	start := len(dst)
	dst, _ = st.cur[f].next(dst, lim)
	n := int64(len(dst)-start) + 1 // with its newline
	st.bytes[f] += n
	st.total += n
	st.left[f] -= n
	st.burst--
	return dst, true
}

// Write writes a corpus of lines, each ending in "\n", to w. It returns
// a *ConfigError for an invalid cfg, or the first write error.
func Write(w io.Writer, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	st := newStream(cfg)
	var buf []byte
	for {
		var ok bool
		buf, ok = st.next(buf[:0])
		if !ok {
			break
		}
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// Lines returns the lines [Write] writes for cfg, without their
// newlines. They are sub-slices of one buffer holding the whole corpus,
// newlines included, in order; appending to a line does not overwrite
// the next. Lines returns nil if cfg is invalid: check with
// [Config.Validate] first.
func Lines(cfg Config) [][]byte {
	if cfg.Validate() != nil {
		return nil
	}
	var buf bytes.Buffer
	buf.Grow(int(cfg.Bytes) + 64<<10)
	if Write(&buf, cfg) != nil { // a bytes.Buffer never fails to write
		return nil
	}
	return Split(buf.Bytes())
}

// Split cuts a corpus into its lines (without their "\n"). The lines
// alias data, with their capacity cut at their end.
func Split(data []byte) [][]byte {
	lines := make([][]byte, 0, bytes.Count(data, []byte{'\n'})+1)
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			lines = append(lines, data[:len(data):len(data)])
			break
		}
		lines = append(lines, data[:i:i])
		data = data[i+1:]
	}
	return lines
}
