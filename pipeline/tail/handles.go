package tail

// handleList is the files with an open handle, least recently used first:
// a list linked through the files themselves, so that keeping it costs no
// allocation and closing the least recently used handle does not visit
// the files without one. It is guarded by the Tailer's mutex.
type handleList struct {
	head, tail *file
	n          int // files in the list: the open handles
}

// pushBack adds f, which must not be in the list, as the most recently
// used.
func (l *handleList) pushBack(f *file) {
	f.lruPrev, f.lruNext = l.tail, nil
	if l.tail != nil {
		l.tail.lruNext = f
	} else {
		l.head = f
	}
	l.tail = f
	l.n++
}

// remove takes f, which must be in the list, out of it.
func (l *handleList) remove(f *file) {
	if f.lruPrev != nil {
		f.lruPrev.lruNext = f.lruNext
	} else {
		l.head = f.lruNext
	}
	if f.lruNext != nil {
		f.lruNext.lruPrev = f.lruPrev
	} else {
		l.tail = f.lruPrev
	}
	f.lruPrev, f.lruNext = nil, nil
	l.n--
}

// moveToBack makes f, which must be in the list, the most recently used.
func (l *handleList) moveToBack(f *file) {
	if l.tail == f {
		return
	}
	l.remove(f)
	l.pushBack(f)
}
