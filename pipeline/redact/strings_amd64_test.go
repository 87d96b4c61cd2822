package redact

// classifyVector is classifyAVX2 where it can run.
func classifyVector(p *[blockBytes + 1]byte) (quote, bslash, slash, u, pairs uint64, ok bool) {
	if !hasAVX2 {
		return 0, 0, 0, 0, 0, false
	}
	quote, bslash, slash, u, pairs = classifyAVX2(p, &pairNibbles)
	return quote, bslash, slash, u, pairs, true
}
