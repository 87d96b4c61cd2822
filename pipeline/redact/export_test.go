package redact

// SetAVX2 switches the vector prefilter on or off (off: the portable loop,
// as off amd64) and returns a function that restores it.
func SetAVX2(on bool) (restore func()) {
	was := hasAVX2
	hasAVX2 = on && was
	return func() { hasAVX2 = was }
}
