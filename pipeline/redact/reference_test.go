package redact

import "bytes"

// The implementation of Redactor.JSON before the string cursor
// (strings.go), kept as the reference that the differential tests
// (differential_test.go) compare JSON with: it finds each string's end
// and its escapes with one bytes.IndexByte per quote and per escape. Its
// probe of escaped strings (refMayHideEscaped) has the fix that came with
// the cursor: \u of the bytes mayAssign skips, and \\/ and \\u one
// level down, may hide a secret too.

// JSONReference is the reference implementation of [Redactor.JSON].
func (r *Redactor) JSONReference(raw []byte, st *Stats) []byte {
	var (
		out    []byte // nil until a first change
		copied int    // raw[:copied] is in out
		key    []byte // the last object key seen
		keyEnd int    // where the last key's closing quote is
	)
	for i := 0; i < len(raw); {
		q := bytes.IndexByte(raw[i:], '"')
		if q < 0 {
			break
		}
		s := i + q + 1
		e := refStringEnd(raw, s)
		content := raw[s:e]
		i = e + 1

		if next := skipSpace(raw, e+1); next < len(raw) && raw[next] == ':' {
			key, keyEnd = content, e
			if bytes.IndexByte(key, '\\') < 0 {
				continue // a key holds no secret worth a look, unless escaped
			}
		}
		var spans [maxStackSpans]span
		found := r.refFindString(content, spans[:0])
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

func (r *Redactor) refFindString(content []byte, out []span) []span {
	if bytes.IndexByte(content, '\\') < 0 {
		out, _ = r.find(content, out)
		return out
	}
	if probeEscaped && !refMayHideEscaped(content, r.anchoredEscaped(content)) {
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

func refMayHideEscaped(b []byte, anchored bool) bool {
	if anchored {
		return true
	}
	// A \u escape that may hide: see strCursor.hidesU.
	hidesU := func(i int) bool {
		r, ok := hex4(b, i)
		return !ok || r < 0x80 && hidingBytes[r]
	}
	for i := 0; ; i += 2 {
		k := bytes.IndexByte(b[i:], '\\')
		if k < 0 || i+k+1 >= len(b) {
			return false
		}
		i += k
		switch b[i+1] {
		case '/':
			return true
		case 'u':
			if hidesU(i + 2) {
				return true
			}
		case '\\': // one level down: \\/ and \\u
			if i+2 < len(b) && (b[i+2] == '/' || b[i+2] == 'u' && hidesU(i+3)) {
				return true
			}
		}
	}
}

func refStringEnd(raw []byte, s int) int {
	for i := s; ; {
		q := bytes.IndexByte(raw[i:], '"')
		if q < 0 {
			return len(raw)
		}
		e := i + q
		n := 0
		for e-n-1 >= s && raw[e-n-1] == '\\' {
			n++
		}
		if n%2 == 0 {
			return e
		}
		i = e + 1
	}
}
