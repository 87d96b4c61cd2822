package redact

// classifyVector is classifyAVX2 where it can run.
func classifyVector(p *[blockBytes]byte) (quote, bslash, slash, u uint64, ok bool) {
	if !hasAVX2 {
		return 0, 0, 0, 0, false
	}
	quote, bslash, slash, u = classifyAVX2(p)
	return quote, bslash, slash, u, true
}
