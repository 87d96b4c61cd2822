package redact

import (
	"bytes"
	"cmp"
	"slices"
	"sync"
	"unicode/utf8"
)

// JSON returns the JSON text raw with every secret inside its strings
// (keys and values) replaced by its marker, counting them in st (which
// may be nil). It returns raw itself when nothing was found.
//
// Each string is looked at as the text it stands for: a secret written
// with escapes (a private key with \n line ends, a URL with \/ or \u002f)
// is found and replaced whole, from the first to the last byte of the
// escapes it spans, and nothing else of the string changes, so that valid
// JSON stays valid and escapes are never cut. A string value whose key
// names a secret ("password", "client_secret", "api_key", …; see
// [Password] and [Secret]) is replaced whole.
//
// JSON does not validate raw: on text that is not JSON it still replaces
// the secrets it finds between double quotes, and leaves the rest as is.
func (r *Redactor) JSON(raw []byte, st *Stats) []byte {
	var (
		out    []byte // nil until a first change
		copied int    // raw[:copied] is in out
		key    []byte // the last object key seen
		keyEnd int    // where the last key's closing quote is
	)
	var c strCursor
	c.init(raw)
	for i := 0; i < len(raw); {
		q := c.nextQuote(i)
		if q < 0 {
			break
		}
		s := q + 1
		e, flags := c.stringEnd(s)
		content := raw[s:e]
		i = e + 1

		if next := skipSpace(raw, e+1); next < len(raw) && raw[next] == ':' {
			key, keyEnd = content, e
			if flags&strBackslash == 0 {
				continue // a key holds no secret worth a look, unless escaped
			}
		}
		var spans [maxStackSpans]span
		found := r.findString(content, flags, spans[:0])
		if len(found) == 0 && keyEnd > 0 && keyEnd < s && isValueOf(raw, keyEnd, s) {
			if k, ok := r.keyValue(key, content); ok {
				found = append(found, span{start: 0, end: len(content), kind: k})
			}
		}
		if len(found) == 0 {
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(raw)+64)
		}
		out = append(out, raw[copied:s]...)
		out = replace(out, content, found, st)
		copied = e
	}
	if out == nil {
		return raw
	}
	return append(out, raw[copied:]...)
}

// isValueOf reports whether the string opening at s (after its quote) is
// the value of the key closed at keyEnd: only blanks and one colon between.
func isValueOf(raw []byte, keyEnd, s int) bool {
	c := skipSpace(raw, keyEnd+1)
	return c < len(raw) && raw[c] == ':' && skipSpace(raw, c+1) == s-1
}

// keyValue reports whether the raw string value content, given to key,
// is a secret by its key's name.
func (r *Redactor) keyValue(key, content []byte) (Kind, bool) {
	k, ok := keyKind(key)
	if !ok || r.off[k] {
		return 0, false
	}
	v := content
	if bytes.IndexByte(content, '\\') >= 0 {
		sc := scratchPool.Get().(*scratch)
		defer scratchPool.Put(sc)
		sc.unescape(content)
		v = sc.text
	}
	if len(v) == 0 || len(v) > 4096 || runNot(v, 0, clsSpace) < len(v) || !valueOK(k, v) {
		return 0, false
	}
	return k, true
}

// probeEscaped turns on findString's probe of escaped content; tests turn
// it off to compare with always unescaping.
var probeEscaped = true

// findString appends to out the secrets of a JSON string's raw content,
// as spans of the raw content; flags tells what it holds. A content
// without a backslash is its own text; one with escapes is searched
// unescaped, with [Redactor.findText1]. Spans are never looked for in the
// escaped form itself, where they could cut an escape in two.
func (r *Redactor) findString(content []byte, flags strFlags, out []span) []span {
	if flags&strBackslash == 0 {
		out, _ = r.find(content, out)
		return out
	}
	// Unescaping adds no anchor the escaped form does not show, except
	// through \u and \/ (no anchor holds a quote, a backslash or a
	// control character; "/" is in two), and an escape before a key's
	// name only adds a letter before it (names are matched by their
	// end); it adds no assignment to a key's name that the escaped form
	// does not show ([mayAssign]) except through \u of what mayAssign
	// skips. The same holds one level down (findText1 unescapes twice),
	// for \\/ and \\u: without an anchor and without those escapes
	// (strHides: see [strCursor.stringEnd]), there is nothing to
	// unescape for. Most strings of a transcript line (text with \n)
	// end here, without a copy. TestJSON_ProbeChangesNothing checks this
	// against always unescaping.
	if probeEscaped && flags&strHides == 0 && !r.anchoredEscaped(content) {
		return out
	}
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	sc.unescape(content)
	n := len(out)
	out = r.findText1(sc.text, out)
	sc.mapBack(out[n:])
	return out
}

// findText appends to out the secrets of text b. When b holds JSON escapes
// (JSON printed into a tool result, a command, a message) that may hide a
// secret's anchor (\u, \/) or break its shape (\n in a private key, \"
// around a quoted password), b is also searched unescaped, two levels deep
// (JSON in a string of JSON held as text), and the findings are merged.
// The levels are written out, not recursive, so that out can stay on the
// caller's stack.
func (r *Redactor) findText(b []byte, out []span) []span {
	n := len(out)
	out, anchored := r.find(b, out)
	if !mayHide(b, anchored) {
		return out
	}
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	sc.unescape(b)
	m := len(out)
	out = r.findText1(sc.text, out)
	sc.mapBack(out[m:])
	return merge(out, n)
}

// findText1 is findText one level deep.
func (r *Redactor) findText1(b []byte, out []span) []span {
	n := len(out)
	out, anchored := r.find(b, out)
	if !mayHide(b, anchored) {
		return out
	}
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	sc.unescape(b)
	m := len(out)
	out, _ = r.find(sc.text, out)
	sc.mapBack(out[m:])
	return merge(out, n)
}

// mayHide reports whether b, unescaped, may hold a secret that b as
// written does not show: b has escapes, and an anchor (anchored) or a \u
// or \/ escape that could make one.
func mayHide(b []byte, anchored bool) bool {
	return bytes.IndexByte(b, '\\') >= 0 &&
		(anchored || bytes.Contains(b, []byte(`\u`)) || bytes.Contains(b, []byte(`\/`)))
}

// anchorBytes holds the bytes anchors are made of, in both cases where
// an anchor folds case.
var anchorBytes = func() (set [128]bool) {
	for _, a := range anchors {
		for i := 0; i < len(a.lit); i++ {
			for _, c := range variants(a.lit[i], a.fold) {
				set[c] = true
			}
		}
	}
	return set
}()

// merge sorts out[n:] by start and joins overlapping spans, the first
// one's kind naming the union.
func merge(out []span, n int) []span {
	s := out[n:]
	if len(s) < 2 {
		return out
	}
	slices.SortFunc(s, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	w := 0
	for _, x := range s[1:] {
		if x.start < s[w].end {
			s[w].end = max(s[w].end, x.end)
			continue
		}
		w++
		s[w] = x
	}
	return out[:n+w+1]
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scratch holds a JSON string's unescaped text and where its escapes
// were, to map offsets of the text back to the raw content.
type scratch struct {
	text []byte
	esc  []escape // in order
	raw  int      // length of the raw content
}

// escape is one escape sequence: raw[r:r+rn] became text[t:t+tn].
type escape struct {
	t, r   int32
	tn, rn int8
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// unescape decodes raw as encoding/json does (\uXXXX pairs joined, a lone
// surrogate as U+FFFD); a malformed escape is kept as written. Runs
// without escapes are copied whole.
func (sc *scratch) unescape(raw []byte) {
	sc.text, sc.esc, sc.raw = sc.text[:0], sc.esc[:0], len(raw)
	for i := 0; i < len(raw); {
		k := bytes.IndexByte(raw[i:], '\\')
		if k < 0 {
			sc.text = append(sc.text, raw[i:]...)
			break
		}
		sc.text = append(sc.text, raw[i:i+k]...)
		i += k
		if i+1 >= len(raw) {
			sc.text = append(sc.text, '\\')
			break
		}
		t := len(sc.text)
		size := 2
		switch c := raw[i+1]; c {
		case '"', '\\', '/':
			sc.text = append(sc.text, c)
		case 'b':
			sc.text = append(sc.text, '\b')
		case 'f':
			sc.text = append(sc.text, '\f')
		case 'n':
			sc.text = append(sc.text, '\n')
		case 'r':
			sc.text = append(sc.text, '\r')
		case 't':
			sc.text = append(sc.text, '\t')
		case 'u':
			r, ok := hex4(raw, i+2)
			if !ok {
				sc.text = append(sc.text, '\\')
				i++
				continue
			}
			size = 6
			if 0xd800 <= r && r < 0xdc00 {
				if r2, ok := hex4(raw, i+8); ok && raw[i+6] == '\\' && raw[i+7] == 'u' && 0xdc00 <= r2 && r2 < 0xe000 {
					r = (r-0xd800)<<10 | (r2 - 0xdc00) + 0x10000
					size = 12
				} else {
					r = utf8.RuneError
				}
			} else if 0xdc00 <= r && r < 0xe000 {
				r = utf8.RuneError
			}
			sc.text = utf8.AppendRune(sc.text, r)
		default:
			sc.text = append(sc.text, '\\')
			i++
			continue
		}
		sc.esc = append(sc.esc, escape{t: int32(t), r: int32(i), tn: int8(len(sc.text) - t), rn: int8(size)})
		i += size
	}
}

// hex4 reads four hex digits at i.
func hex4(raw []byte, i int) (r rune, ok bool) {
	if i+4 > len(raw) {
		return 0, false
	}
	for _, c := range raw[i : i+4] {
		var v byte
		switch {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}

// mapBack maps spans of the unescaped text to the raw content, each
// widened to whole escapes.
func (sc *scratch) mapBack(spans []span) {
	for i := range spans {
		spans[i].start, spans[i].end = sc.rawStart(spans[i].start), sc.rawEnd(spans[i].end)
	}
}

// before returns the last escape that starts at or before text offset t,
// or nil.
func (sc *scratch) before(t int) *escape {
	i, _ := slices.BinarySearchFunc(sc.esc, t, func(e escape, t int) int { return cmp.Compare(int(e.t), t) })
	if i < len(sc.esc) && int(sc.esc[i].t) == t {
		return &sc.esc[i]
	}
	if i == 0 {
		return nil
	}
	return &sc.esc[i-1]
}

// rawStart maps the start of a span of the text to the raw content: the
// start of the escape its first byte came from.
func (sc *scratch) rawStart(t int) int {
	e := sc.before(t)
	switch {
	case e == nil:
		return t
	case t < int(e.t)+int(e.tn):
		return int(e.r)
	}
	return int(e.r) + int(e.rn) + t - int(e.t) - int(e.tn)
}

// rawEnd maps the end of a span of the text to the raw content: the end of
// the escape its last byte came from.
func (sc *scratch) rawEnd(t int) int {
	if t == 0 {
		return 0
	}
	e := sc.before(t - 1)
	switch {
	case e == nil:
		return t
	case t-1 < int(e.t)+int(e.tn):
		return int(e.r) + int(e.rn)
	}
	return int(e.r) + int(e.rn) + t - int(e.t) - int(e.tn)
}
