package corpusgen

// lineSpec is one line whose structure (ids, timestamps, counters) is
// decided when the session plans it, and whose body, the one large text
// or image it carries, is sized and generated when it is emitted.
type lineSpec struct {
	// dest is the file the line belongs to, relative to the session's
	// directory: "" for the session file itself, or for example
	// "subagents/agent-a1b2c3d.jsonl".
	dest string

	style textStyle // fragments the body text is made of
	slots int       // how many times the body appears in the line; 0: no body
	size  int       // natural body size per slot, in escaped bytes
	image bool      // the body may be a base64 image, when limits allow

	// render appends the line, without newline, to dst. body is the
	// escaped text (or base64) to place in each slot; image tells which
	// shape to write.
	render func(dst, body []byte, image bool) []byte
}

// limits shape the lines of a stream.
type limits struct {
	want   int  // aim every line at this length (Mix1K); 0: natural sizes
	max    int  // keep lines no longer than this where the body allows; 0: no cap
	images bool // image lines allowed
}

// Image line sizes: one image line is 1–5 MB.
const (
	minImageLine = 1 << 20
	maxImageLine = 5 << 20
)

// emit renders spec into dst under the limits.
func (g *gen) emit(dst []byte, sp *lineSpec, lim limits) []byte {
	if sp.slots == 0 {
		return sp.render(dst, nil, false)
	}
	if sp.image && lim.images && (lim.max == 0 || lim.max >= minImageLine) {
		total := minImageLine + g.b.IntN(maxImageLine-minImageLine+1)
		if lim.max > 0 && total > lim.max {
			total = lim.max
		}
		g.tmp = sp.render(g.tmp[:0], nil, true)
		n := (total - len(g.tmp)) / sp.slots
		g.body = g.base64Body(g.body[:0], n)
		return sp.render(dst, g.body, true)
	}
	n := sp.size
	if lim.want > 0 || lim.max > 0 {
		g.tmp = sp.render(g.tmp[:0], nil, false)
		base := len(g.tmp)
		if lim.want > 0 {
			n = (lim.want - base) / sp.slots
		}
		if lim.max > 0 && base+n*sp.slots > lim.max {
			n = (lim.max - base) / sp.slots
		}
		n = max(n, 0)
	}
	g.body = g.text(g.body[:0], n, sp.style)
	return sp.render(dst, g.body, false)
}
