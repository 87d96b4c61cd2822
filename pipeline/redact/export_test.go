package redact

// SetAVX2 switches the vector prefilter on or off (off: the portable loop,
// as off amd64) and returns a function that restores it.
func SetAVX2(on bool) (restore func()) {
	was := hasAVX2
	hasAVX2 = on && was
	return func() { hasAVX2 = was }
}

// SetProbeEscaped switches the probe of escaped JSON strings on or off
// (off: every string with an escape is unescaped and searched) and
// returns a function that restores it.
func SetProbeEscaped(on bool) (restore func()) {
	was := probeEscaped
	probeEscaped = on
	return func() { probeEscaped = was }
}
