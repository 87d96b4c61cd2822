package tail

// Idle reports whether the tailer has caught up: the first scan of the
// globs is done, no file waits to be read or is being read, no file
// waits for enough lines to tell its format, and every published message
// was completed, and every database found was read to its end. A file's partial last line does not count: it waits for
// its end. Idle is a snapshot; a file may change right after.
func (t *Tailer) Idle() bool {
	if !t.scanned.Load() || !t.dbs.idle() || t.inflight.Load() > 0 {
		// The in-flight count first: during a backfill it says no
		// without a look at each of (tens of thousands of) files.
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.pending) > 0 {
		return false
	}
	for _, f := range t.files {
		if f.busy || f.queued || f.waiting {
			return false
		}
	}
	// Again: a file read and published while the files were looked at
	// is not busy any more, and its messages may be on their way.
	return t.inflight.Load() == 0
}

// Reading reports whether the tailer has lines on their way: a file
// being read or queued for a worker, or published messages not yet
// acknowledged. Unlike Idle, a file that does not tell its format yet
// does not count: it may wait for its lines for ever. `sessionpipe run`
// has its exporter wait while the tailer is reading (-live-first).
func (t *Tailer) Reading() bool {
	if t.inflight.Load() > 0 {
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, f := range t.files {
		if f.busy || f.queued {
			return true
		}
	}
	return false
}
